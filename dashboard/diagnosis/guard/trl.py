"""The guard inside a TRL GRPOTrainer: GrpoScopeGuardCallback(path, stop_on=None) writes the run as
collectors.trl.GrpoScopeCallback does and hands every written row to the diagnosis.

    trainer = GRPOTrainer(..., callbacks=[GrpoScopeGuardCallback("runs/my-run", stop_on="critical")])

It lives here, above collectors: the callback that only writes the run is a collector; the one that judges it
is the diagnosis's (collectors never import the diagnosis). The diagnosis watches the rows the callback writes. A confirmed finding goes to the console through the transformers logger, into the trainer's own
log history (trainer_state.json, and the logs of callbacks that run after ours), into a text summary in
the trainer's TensorBoard logdir (a grposcope/ folder in it) when it reports there, into the wandb run's summary when it reports to
wandb (alerts when online), into the run folder (findings.jsonl, run.json), and to each webhook of `alerts`
(dashboard/diagnosis/guard/webhook.py: Slack, Discord or plain JSON, sent in the background). With stop_on, the first
confirmed finding of that severity or worse sets `control.should_training_stop`; the run closes `stopped`.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from collectors.trl import GrpoScopeCallback

EVERY = 10  # logged steps between checks
BUDGET = 0.01  # the most of the training time the checks may take


class GrpoScopeGuardCallback(GrpoScopeCallback):
    """GrpoScopeCallback with the guard: the diagnosis judges the run as it trains; stop_on "critical" or
    "warning" ends training once such a finding holds, and the run closes with status `stopped`."""

    def __init__(self, path: str | Path, name: str | None = None, stop_on: str | None = None,
                 watch_every: int = EVERY, watch_budget: float | None = BUDGET, lang: str | None = None,
                 alerts: list[str] | None = None, dashboard: str | None = None) -> None:
        """lang: the language of the findings the guard logs and alerts ("en", "zh"; default: from the locale);
        alerts: webhook URLs (or `slack:URL`, `env:NAME`; see webhook.parse_target); dashboard: its address,
        for the alerts' link to the run's Diagnosis page."""
        super().__init__(path, name, guard=TrlGuard(stop_on, watch_every, watch_budget, lang=lang, alerts=alerts,
                                                    dashboard=dashboard))


class TrlGuard:
    def __init__(self, stop_on: str | None = None, every: int = EVERY, budget: float | None = BUDGET,
                 hold: int | None = None, lang: str | None = None, alerts: list[str] | None = None,
                 dashboard: str | None = None, posting: dict | None = None) -> None:
        from dashboard.diagnosis.guard.watch import HOLD_CHECKS, STOP_SEVERITIES
        from dashboard.diagnosis.guard.webhook import parse_target
        from dashboard.diagnosis.i18n import LANGS, default_lang

        self.lang = lang or default_lang()  # of the lines it logs; the run folder's files keep English and ids
        if self.lang not in LANGS:
            raise ValueError(f"lang {lang!r}: known languages are {', '.join(LANGS)}")

        if stop_on is not None and stop_on not in STOP_SEVERITIES:
            raise ValueError(f"stop_on must be one of {', '.join(STOP_SEVERITIES)} or None, got {stop_on!r}")
        self.stop_on, self.every, self.budget = stop_on, every, budget
        self.hold = HOLD_CHECKS if hold is None else hold
        self.alerts, self.dashboard, self.posting = list(alerts or []), dashboard, dict(posting or {})
        for spec in self.alerts:  # a bad URL or an unset variable fails here, not after the first steps
            parse_target(spec)
        self.guard = None
        self.pending: list[dict[str, Any]] = []  # events not yet put into the trainer's log history
        self.reason: str | None = None

    def begin(self, writer: Any, args: Any) -> None:
        from dashboard.diagnosis.guard.guard import Guard, file_sink, meta_sink, wandb_sink
        from dashboard.diagnosis.guard.watch import Pacer, Watcher

        report_to = set(getattr(args, "report_to", None) or ())
        sinks = [self._logger_sink, self._history_sink, file_sink(writer.path), meta_sink(writer)]
        if "wandb" in report_to and (run := _wandb_run()) is not None:
            sinks.append(wandb_sink(run))
        if "tensorboard" in report_to and (logdir := _tensorboard_dir(args)) is not None:
            sinks.append(_tensorboard_sink(logdir, self.lang))
        if self.alerts:
            from dashboard.diagnosis.guard.webhook import webhook_sink

            sinks.append(webhook_sink(self.alerts, writer.meta.name or writer.path.name, self.lang, writer.path,
                                      self.dashboard, **self.posting))
        watcher = Watcher(config=writer.meta.config, source="trl", stop_on=self.stop_on, hold=self.hold)
        self.guard = Guard(watcher, Pacer(self.every, self.budget), sinks)

    def on_step(self, step: int, row: dict[str, float]) -> str | None:
        """One written step; the stop reason once, when the run should stop."""
        f = self.guard.on_step(step, row) if self.guard is not None else None
        if f is not None:
            # the callback hands a step over when the next one logs, and the trainer ends the step it is in before
            # it stops: its last step is one later than the step the finding was confirmed at, and says so
            self.reason = (f"stopped by the guard after step {step} (the trainer ends the step it is in, "
                           f"{step + 1}): {f.severity} finding {f.rule_id}: {f.title}")
            return self.reason
        return None

    def add_samples(self, rows: list[dict]) -> None:
        if self.guard is not None and rows:
            self.guard.watcher.add_samples(rows)

    def end(self) -> None:
        if self.guard is not None:
            self.guard.finish()
            self.guard.close()

    def drain(self, state: Any, logs: dict | None) -> None:
        """Put the pending findings into the trainer's log history and the current logs (for the callbacks
        after ours): `grposcope/<rule id>` = "severity: title", `grposcope/stopped_by` = the reason."""
        if not self.pending:
            return
        entry = {k: v for e in self.pending for k, v in e.items()}
        self.pending = []
        state.log_history.append({**entry, "step": int(state.global_step)})
        if logs is not None:
            logs.update(entry)

    def _logger_sink(self, update) -> None:
        from transformers.utils import logging

        from dashboard.diagnosis.guard.guard import console_sink

        log = logging.get_logger("transformers.grposcope")
        console_sink(log.warning, self.lang)(update)

    def _history_sink(self, update) -> None:
        from dashboard.diagnosis.guard.guard import stop_text

        for f in update.new:
            self.pending.append({f"grposcope/{f.rule_id}": f"{f.severity}: {f.title}"})
        for f in update.cleared:
            self.pending.append({f"grposcope/{f.rule_id}": f"cleared: {f.title}"})
        if update.stop is not None:
            self.pending.append({"grposcope/stopped_by": stop_text(update.stop)})


def _wandb_run():
    try:
        import wandb
    except ImportError:
        return None
    return wandb.run


def _tensorboard_dir(args: Any) -> Path | None:
    """Where transformers' TensorBoardCallback writes: $TENSORBOARD_LOGGING_DIR, else the newest folder of
    OUTPUT_DIR/runs/ (it made it at train begin, before our callback's turn)."""
    if env := os.environ.get("TENSORBOARD_LOGGING_DIR"):
        return Path(env).expanduser()
    runs = [p for p in (Path(args.output_dir) / "runs").glob("*") if p.is_dir()]
    return max(runs, key=lambda p: p.stat().st_mtime) if runs else None


def _tensorboard_sink(logdir: Path, lang: str = "en"):
    """Findings as text summaries (tag grposcope/findings) in LOGDIR/grposcope/."""
    from torch.utils.tensorboard import SummaryWriter

    from dashboard.diagnosis.guard.watch import alert_line

    # a folder of its own inside the trainer's: TensorBoard shows it beside the run, and a reader of the
    # trainer's folder finds no text-only file among the scalars
    tb = SummaryWriter(log_dir=str(logdir / "grposcope"))

    def tensorboard(update) -> None:
        for f in update.new:
            tb.add_text("grposcope/findings", alert_line(f, update.step, lang=lang), update.step)
        for f in update.cleared:
            tb.add_text("grposcope/findings", alert_line(f, update.step, "cleared", lang=lang), update.step)
        tb.flush()
    return tensorboard
