"""Finding runs under a root folder: our run folders and every foreign run a registered reader recognises."""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from pathlib import Path

from collectors.meta import STALE_AFTER_S
from collectors.run import Run, RunInfo
from collectors.sources import infos_for

# not "wandb": that folder is walked, because each of its offline-run-* folders is a run
_SKIP_DIRS = {".git", ".venv", "venv", "node_modules", "__pycache__", "metrics", "samples"}


_LOG_NAMES = (".log", ".txt", ".jsonl", ".csv", ".json", ".wandb", ".parquet")


def special_files(folder: Path, names: list[str]) -> list[RunInfo]:
    """A line for each file named like a log that is a named pipe, socket or device: skipped, never opened
    (reading a pipe waits for a writer forever), and said, so a user looking for that log knows why."""
    out = []
    for name in names:
        if not (name.endswith(_LOG_NAMES) or "tfevents" in name):
            continue
        try:
            mode = os.stat(folder / name).st_mode
        except OSError:
            continue  # vanished, or a dangling link
        if not stat.S_ISREG(mode):
            kind = "a named pipe" if stat.S_ISFIFO(mode) else "a socket" if stat.S_ISSOCK(mode) else "a device"
            out.append(RunInfo(folder / name, name, "unknown", "unknown", None, None,
                               f"{kind}, not a regular file: skipped"))
    return out


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
    for dirpath, dirnames, filenames in os.walk(root):
        here = Path(dirpath)
        infos = infos_for(here, stale_after_s, open_foreign)
        if infos is not None:
            found.extend(infos)
            dirnames[:] = []  # a run's own subfolders are not runs
            continue
        found.extend(special_files(here, filenames))
        dirnames[:] = sorted(d for d in dirnames if d not in _SKIP_DIRS and not d.startswith("."))
    found.sort(key=lambda r: (-(r.last_update or 0), r.name))
    return found
