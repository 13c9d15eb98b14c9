"""Optional wandb mirror: every logged metric under the same canonical name. The run folder stays the
record; wandb is a copy for those who watch runs there. Works offline (WANDB_MODE=offline)."""

from __future__ import annotations

from pathlib import Path

from collectors.extras import require


class WandbMirror:
    def __init__(self, log_cfg, run_dir: Path, name: str, config: dict) -> None:
        self.run = None
        if not log_cfg.wandb:
            return
        # imported only when asked: it is slow to import and starts a service process
        wandb = require("wandb", "wandb", "mirroring the run to wandb (log.wandb)")

        self.run = wandb.init(project=log_cfg.wandb_project, name=name, config=config, dir=str(run_dir),
                              mode=log_cfg.wandb_mode or None)

    def log(self, step: int, metrics: dict) -> None:
        if self.run is not None:
            self.run.log({k: v for k, v in metrics.items() if k not in ("step", "wall_time")}, step=step)

    def finish(self, ok: bool) -> None:
        if self.run is not None:
            self.run.finish(exit_code=0 if ok else 1)
            self.run = None
