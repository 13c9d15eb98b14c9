"""Where a training run's rows go, and what stops it: the run folder and the wandb mirror (rank 0 only),
the progress bar, the guard, and SIGINT/SIGTERM. The loop (train.py) calls `Recorder.log` once per
optimizer step and `Recorder.finish` after the last one; `record` opens and closes all of it.
"""

from __future__ import annotations

import contextlib
import signal
import threading
import time
import traceback
from collections.abc import Iterator
from pathlib import Path
from typing import Self

from grpo_core.config import Config, to_dict
from grpo_core.mirror import WandbMirror


class StopOnSignal:
    """SIGINT/SIGTERM ask the loop to stop after the current step, so the run closes with its status;
    a second signal interrupts at once. Installed before the RunWriter, which then leaves them to us."""

    def __init__(self) -> None:
        self.signal: str | None = None
        self.reason: str | None = None  # a stop the guard asked for (grpo_core/guard.py): the run ends `stopped`
        self.at_once = False  # before the first step (the warm start): there is no step to finish, stop now
        self._old: dict = {}

    @property
    def asked(self) -> bool:
        return self.signal is not None or self.reason is not None

    def _handle(self, signum, frame) -> None:
        if self.signal is not None:
            raise KeyboardInterrupt(f"second {signal.Signals(signum).name}")
        self.signal = signal.Signals(signum).name
        if self.at_once:
            raise KeyboardInterrupt(f"interrupted by {self.signal}")

    def __enter__(self) -> Self:
        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGINT, signal.SIGTERM):
                self._old[sig] = signal.signal(sig, self._handle)
        return self

    def __exit__(self, *exc) -> None:
        for sig, handler in self._old.items():
            signal.signal(sig, handler)


class Recorder:
    """The per-step sink of one run. writer, mirror: None on the ranks other than 0, which only count."""

    def __init__(self, cfg: Config, writer, mirror: WandbMirror | None, stop: StopOnSignal, guard, info: dict,
                 main: bool) -> None:
        self.cfg, self.writer, self.mirror, self.stop, self.guard, self.info, self.main = (
            cfg, writer, mirror, stop, guard, info, main)
        self.bar = progress_bar(cfg, enabled=main)
        self.pass_rates: list[float] = []
        self.steps_done = 0

    def log(self, step: int, values: dict, samples: list | None) -> None:
        """One optimizer step's row (host floats) and, on a rollout's first step, its samples."""
        self.bar.update(1)
        if not self.main:
            return
        self.writer.log_step(step, values)
        self.mirror.log(step, values)
        if samples:
            self.writer.log_samples(samples)
        if "reward/mean" in values:
            self.pass_rates.append(values["reward/pass_rate"])
            self.bar.set_postfix(reward=f"{values['reward/mean']:.3f}", pass_rate=f"{values['reward/pass_rate']:.3f}")
        if self.guard is not None and (reason := self.guard.on_step(step, values, samples)):
            self.stop.reason = reason

    def finish(self, final_eval: dict, steps_done: int) -> None:
        """After the last step: the summary into info (every rank), the final eval into run.json (rank 0)."""
        self.steps_done = steps_done
        self.info["summary"] = summarize(self.pass_rates)
        if self.main:
            self.writer.update_meta(final_eval=final_eval, steps_done=steps_done, summary=self.info["summary"])

    def status(self) -> tuple[str, str | None]:
        """The run's status and error as run.json records them (other ranks: finished)."""
        return (self.writer.meta.status, self.writer.meta.error) if self.main else ("finished", None)


class EarlyRun:
    """The run folder, opened (rank 0) once the config passed every check and before the warm start, so that a
    dashboard lists the run from the first second: running, with its config, and the warm start's progress in
    run.json's `phase` (docs/run-format.md). `record` then carries on with the same writer."""

    PROGRESS_EVERY_S = 1.0  # run.json rewritten at most this often for the warm start's progress

    def __init__(self, cfg: Config, run_dir: Path, say=None) -> None:
        """say: grpo_core.console's say (the console lines of the warm start), or None for none."""
        self.cfg, self.run_dir, self.writer, self._written, self.say = cfg, run_dir, None, 0.0, say

    def open(self, main: bool):
        """Open the run (main rank only); the warm start's progress callback, or None."""
        if not main:
            return None
        from collectors import RunWriter

        # signals are StopOnSignal's (installed first, by train): the writer leaves them alone
        self.writer = RunWriter(self.run_dir, name=self.cfg.name or None, config=to_dict(self.cfg),
                                handle_signals=False)
        if self.cfg.warm_start.enabled:
            self.writer.set_phase("warm_start", 0, self.cfg.warm_start.max_steps,
                                  target_pass_rate=self.cfg.warm_start.target_pass_rate)
        return self.progress

    def progress(self, done: int, total: int, pass_rate: float | None) -> None:
        """The warm start's step `done` of at most `total`, with the sampled pass rate of its last check."""
        ws = self.cfg.warm_start
        if self.say is not None and done == 1:
            from grpo_core.warmstart import cache_dir

            self.say("warm_start_begin", target=ws.target_pass_rate, total=total, cache=cache_dir(ws.cache_dir))
        if self.say is not None and done % ws.check_every == 0 and pass_rate is not None:
            self.say("warm_start_check", done=done, total=total, rate=pass_rate, target=ws.target_pass_rate)
        now = time.monotonic()
        if now - self._written < self.PROGRESS_EVERY_S:
            return
        self._written = now
        self.writer.set_phase("warm_start", done, total, sampled_pass_rate=pass_rate,
                              target_pass_rate=self.cfg.warm_start.target_pass_rate)

    def warm_started(self, facts: dict) -> None:
        """The warm start's end on the console (facts: warm_start()'s, as in run.json's info)."""
        if self.say is None or self.writer is None or not facts.get("enabled"):
            return
        if facts.get("cached"):
            self.say("warm_start_cached", file=facts["cache_file"])
        else:
            self.say("warm_start_done", steps=facts["steps"], seconds=facts["seconds"],
                     rate=facts["sampled_pass_rate"])

    def fail(self, exc: BaseException) -> None:
        """The warm start (or what follows it before the first step) raised: the run is recorded failed."""
        if self.writer is None:
            return
        why = str(exc) if isinstance(exc, KeyboardInterrupt) and str(exc) else "".join(
            traceback.format_exception_only(type(exc), exc)).strip()
        self.writer.close("failed", error=f"{why} (before the first step)")


@contextlib.contextmanager
def record(cfg: Config, run_dir: Path, info: dict, stop: StopOnSignal, guard=None,
           main: bool = True, early_writer=None) -> Iterator[Recorder]:
    """Open the run (rank 0; or carry on with `early_writer`, an EarlyRun's), yield its Recorder, and close it:
    failed after a signal, stopped when the guard asked, finished otherwise; an exception inside leaves it to
    the RunWriter (failed, with it)."""
    from collectors import RunWriter

    flat = to_dict(cfg)
    if not main:
        opened = contextlib.nullcontext(None)
    else:
        opened = early_writer or RunWriter(run_dir, name=cfg.name or None, config=flat)
    with opened as writer:
        if main:
            writer.set_phase("first_rollout")  # sampling, scoring and the first update: until the first step
            writer.update_meta(**info)
        mirror = WandbMirror(cfg.log, run_dir, writer.meta.name, flat) if main else None
        rec = Recorder(cfg, writer, mirror, stop, guard, info, main)
        if guard is not None:
            guard.begin(writer, mirror)
        try:
            yield rec
        finally:
            rec.bar.close()
            if main:
                mirror.finish(ok=stop.signal is None)
        if stop.signal and main:
            writer.close("failed", error=f"interrupted by {stop.signal} after {rec.steps_done} of {cfg.steps} steps")
        elif stop.reason and main:
            writer.close("stopped", error=stop.reason)


def summarize(pass_rates: list[float]) -> dict:
    """Mean sampled pass rate of the first and last tenth of the rollouts (at most 20 each)."""
    if not pass_rates:
        return {}
    w = max(1, min(20, len(pass_rates) // 10))
    return {"window": w, "pass_rate_first": sum(pass_rates[:w]) / w, "pass_rate_last": sum(pass_rates[-w:]) / w}


def progress_bar(cfg: Config, enabled: bool = True):
    from tqdm.auto import tqdm

    return tqdm(total=cfg.steps, disable=not (cfg.log.progress and enabled), desc="grpo", unit="step",
                dynamic_ncols=True)
