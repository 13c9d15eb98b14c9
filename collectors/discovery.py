"""Finding runs under a root folder: our run folders and every foreign run a registered reader recognises."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from collectors.meta import STALE_AFTER_S
from collectors.run import Run, RunInfo
from collectors.sources import infos_for

# not "wandb": that folder is walked, because each of its offline-run-* folders is a run
_SKIP_DIRS = {".git", ".venv", "venv", "node_modules", "__pycache__", "metrics", "samples"}


def discover_runs(root: Path | str, stale_after_s: float = STALE_AFTER_S,
                  open_foreign: Callable[[Path], Run] | None = None) -> list[RunInfo]:
    """Every run under `root` (our folders, and foreign ones that a registered source recognises); a folder
    holding several launches gives one line per launch, its path `FOLDER#LAUNCH`.

    Foreign runs have no summary file, so their line needs the run read; `open_foreign(path)` lets a caller
    that keeps runs open (the dashboard) hand over its own, refreshed, instead of a second copy.
    """
    root = Path(root)
    found: list[RunInfo] = []
    if not root.is_dir():
        return found
    for dirpath, dirnames, _ in os.walk(root):
        here = Path(dirpath)
        infos = infos_for(here, stale_after_s, open_foreign)
        if infos is not None:
            found.extend(infos)
            dirnames[:] = []  # a run's own subfolders are not runs
            continue
        dirnames[:] = sorted(d for d in dirnames if d not in _SKIP_DIRS and not d.startswith("."))
    found.sort(key=lambda r: (-(r.last_update or 0), r.name))
    return found
