"""The guard of grpo-train: the diagnosis watching the run as it trains (dashboard/diagnosis/guard/guard.py).

train() calls, on the process that writes the run (rank 0 under torchrun):
    begin(writer, mirror)              once the run folder and the wandb mirror exist
    on_step(step, values, samples)     after each logged step; a string is the reason to stop the run
    end()                              after the last step: a final check, recorded like the others

A new confirmed finding goes to the console as one line with its checks, to RUN/findings.jsonl, to
run.json (a note and info.guard_active), when the run mirrors to wandb, to its summary (and alerts
when online), and to each --alert webhook (dashboard/diagnosis/guard/webhook.py), sent in the background. With stop_on set, the first confirmed finding at that severity or worse stops the run after
the current step, closed with status `stopped` and the finding as the reason.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

EVERY = 10  # steps between checks (the pacer may space them further to stay within BUDGET)
BUDGET = 0.01  # the guard may cost at most this fraction of the training time


class TrainGuard:
    def __init__(self, stop_on: str | None = None, every: int = EVERY, budget: float | None = BUDGET,
                 write: Callable[[str], None] | None = None, hold: int | None = None,
                 alerts: list[str] | None = None, lang: str | None = None, dashboard: str | None = None,
                 posting: dict | None = None) -> None:
        """alerts: --alert values (webhook URLs, `slack:URL`, `env:NAME`); lang: of the console lines and the
        alerts (default: GRPOSCOPE_LANG or the locale); dashboard: its address, for the alerts' link to the run;
        posting: the webhooks' timeout, retries, backoff (post.Poster). A bad --alert raises ValueError now,
        before training starts."""
        from dashboard.diagnosis.guard.watch import HOLD_CHECKS, STOP_SEVERITIES
        from dashboard.diagnosis.guard.webhook import parse_target
        from dashboard.diagnosis.i18n import default_lang

        if stop_on is not None and stop_on not in STOP_SEVERITIES:
            raise ValueError(f"stop_on must be one of {', '.join(STOP_SEVERITIES)}, got {stop_on!r}")
        self.stop_on, self.every, self.budget = stop_on, every, budget
        self.hold = HOLD_CHECKS if hold is None else hold
        self.write = write or _console
        self.alerts, self.lang, self.dashboard = list(alerts or []), lang or default_lang(), dashboard
        self.posting = dict(posting or {})
        for spec in self.alerts:
            parse_target(spec)
        self.guard = None

    def begin(self, writer: Any, mirror: Any = None) -> None:
        from dashboard.diagnosis.guard.guard import Guard, console_sink, file_sink, meta_sink, wandb_sink
        from dashboard.diagnosis.guard.watch import Pacer, Watcher
        from dashboard.diagnosis.guard.webhook import webhook_sink

        sinks = [console_sink(self.write, self.lang), file_sink(writer.path), meta_sink(writer)]
        if mirror is not None and getattr(mirror, "run", None) is not None:
            sinks.append(wandb_sink(mirror.run))
        if self.alerts:
            sinks.append(webhook_sink(self.alerts, writer.meta.name or writer.path.name, self.lang, writer.path,
                                      self.dashboard, **self.posting))
        watcher = Watcher(config=writer.meta.config, source=writer.meta.source, stop_on=self.stop_on, hold=self.hold)
        self.guard = Guard(watcher, Pacer(self.every, self.budget), sinks)

    def on_step(self, step: int, values: dict, samples: list | None = None) -> str | None:
        if self.guard is None:
            return None
        f = self.guard.on_step(step, values, samples)
        return None if f is None else stop_reason(f, step)

    def end(self) -> None:
        if self.guard is not None:
            self.guard.finish()
            self.guard.close()


def stop_reason(f: Any, step: int) -> str:
    """The run's `error` text when the guard stops it."""
    return f"stopped by the guard after step {step}: {f.severity} finding {f.rule_id}: {f.title}"


def _console(line: str) -> None:
    from tqdm.auto import tqdm

    tqdm.write(line)  # above the progress bar, not through it
