"""A transformers TrainerCallback that writes our run format while a TRL GRPOTrainer trains.

    trainer = GRPOTrainer(..., callbacks=[GrpoScopeCallback("runs/my-run")])

Config (the GRPOConfig as a flat dict) goes into run.json at train start; every `on_log` becomes metrics
under our names (keymap.TRL, the same map the offline TRL reader uses); TRL's completions Parquet files
(with `log_completions=True`) become samples as they appear. Only this module imports transformers, and
only when it is imported itself: `import collectors` stays free of torch and transformers.
To have the diagnosis watch the run as it trains (and stop it on a finding), use the subclass the diagnosis
provides, dashboard.diagnosis.guard.trl.GrpoScopeGuardCallback: collectors never import the diagnosis, so the
guard comes in as an object (`guard=`) with begin / on_step / add_samples / drain / end and a `reason`.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from collectors.extras import require
from collectors.levels import plan as level_plan
from collectors.readers.keymap import TRAINER_SUMMARY_KEYS
from collectors.readers.trl.output_dir import (
    ROLLOUT_KEY,
    completion_samples,
    completions_step,
    is_training_rollout,
    trl_row,
)
from collectors.store.writer import RunWriter

# the one module that needs transformers: without it, `from collectors.trl import ...` names the extra
TrainerCallback = require("transformers", "trl", "GrpoScopeCallback").TrainerCallback


def _json_config(args: Any) -> dict[str, Any]:
    out = {}
    for k, v in args.to_dict().items():
        if isinstance(v, (bool, int, float, str)) or v is None:
            out[k] = None if isinstance(v, float) and math.isnan(v) else v
        else:
            out[k] = str(v)
    return out


class GrpoScopeCallback(TrainerCallback):
    """Writes metrics, config and samples to `path` in the grposcope run format, on the main process only."""

    def __init__(self, path: str | Path, name: str | None = None, guard: Any = None) -> None:
        """guard: None, or what watches the written rows (dashboard.diagnosis.guard.trl.TrlGuard)."""
        self.path = Path(path)
        self.name = name
        self.guard = guard
        self.writer: RunWriter | None = None
        self._row: dict[str, float] = {}  # the current step's metrics: train and eval logs of one step merge
        self._row_step: int | None = None
        self._seen: set[Path] = set()
        self._completions: Path | None = None
        self._eval_steps: set[int] = set()
        self._rollout_steps: set[int] = set()

    def on_train_begin(self, args, state, control, **kwargs):
        if not state.is_world_process_zero:
            return
        self.writer = RunWriter(self.path, name=self.name, config=_json_config(args), source="trl",
                                handle_signals=False)  # the trainer owns the process's signals
        self._completions = Path(args.output_dir) / "completions"
        if self.guard is not None:
            self.guard.begin(self.writer, args)

    def on_log(self, args, state, control, logs=None, **kwargs):
        if self.writer is None or not logs or any(k in logs for k in TRAINER_SUMMARY_KEYS):
            return
        step = int(state.global_step)
        if self._row_step is not None and step != self._row_step:
            self._flush()
            if self.guard is not None:
                self.guard.drain(state, logs)
                control.should_training_stop |= self.guard.reason is not None
        self._row_step = step
        if any(k.startswith("eval_") for k in logs):
            self._eval_steps.add(step)
        elif ROLLOUT_KEY in logs:
            self._rollout_steps.add(step)
        row, _ = trl_row({k: v for k, v in logs.items() if isinstance(v, (int, float))})
        # the IS ratio's level from the GRPOConfig, as a reader of the written run would place it
        moves = level_plan(row, self.writer.meta.config)
        self._row.update({moves[k][0] if k in moves else k: v for k, v in row.items()})
        self._read_completions()

    def on_train_end(self, args, state, control, **kwargs):
        if self.writer is None:
            return
        self._flush()
        self._read_completions()
        if self.guard is not None:
            self.guard.end()
            self.guard.drain(state, None)
        reason = self.guard.reason if self.guard is not None else None
        self.writer.close("stopped" if reason else "finished", error=reason)
        self.writer = None

    def _flush(self) -> None:
        if self._row_step is not None and self._row:
            self.writer.log_step(self._row_step, self._row)
            if self.guard is not None:
                self.guard.on_step(self._row_step, self._row)
        self._row, self._row_step = {}, None

    def _read_completions(self) -> None:
        if self._completions is None or not self._completions.is_dir():
            return
        import pandas as pd

        for f in sorted(self._completions.glob("completions_*.parquet")):
            if f in self._seen:
                continue
            try:
                frame = pd.read_parquet(f)
            except (OSError, ValueError):
                continue  # still being written; read it on the next log
            self._seen.add(f)
            step = completions_step(f)
            if len(frame) and (step is None or is_training_rollout(step, self._eval_steps, self._rollout_steps)):
                samples = completion_samples(frame)
                self.writer.log_samples(samples)
                if self.guard is not None:
                    self.guard.add_samples(samples.to_dict("records"))
