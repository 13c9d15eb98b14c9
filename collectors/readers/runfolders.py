"""A tracker's folder of run folders (`wandb/`, `swanlog/`): which of its children are runs, and what the source
registry asks of such a folder (detect, parts, launches).

wandb and SwanLab keep runs alike: a folder per run, named by a prefix and the start time, holding one record
file; the folder above holds many. Each reader gives its prefixes and how to find a run folder's record file
(`record_of`: the file, or None), and gets the registry's functions back, one walk for both.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class RunFolders:
    prefixes: tuple[str, ...]  # a run folder's name starts with one of these
    record_of: Callable[[Path], Path | None]  # a run folder's (or a record file's own) record file, or None
    is_record: Callable[[Path], bool]  # whether a file given as the target is a record file

    def run_folders(self, folder: Path) -> list[Path]:
        """The run folders directly in `folder`, by name (both trackers name them by start time); a symlink (wandb's
        `latest-run`, pointing at one of them) is skipped."""
        try:
            entries = sorted(folder.iterdir())
        except OSError:
            return []
        return [p for p in entries if p.name.startswith(self.prefixes) and p.is_dir() and not p.is_symlink()
                and self.record_of(p) is not None]

    def detect(self, target: str) -> bool:
        p = Path(target)
        if p.is_file():
            return self.is_record(p)
        return p.is_dir() and (self.record_of(p) is not None or bool(self.run_folders(p)))

    def parts(self, target: str) -> list[str]:
        """What a run reads below a folder: all of a run folder (files/, logs/, media/), or the run folders of the
        folder above them."""
        p = Path(target)
        if self.record_of(p) is None:
            return [f.name for f in self.run_folders(p)]
        try:
            return [e.name for e in os.scandir(p) if e.is_dir(follow_symlinks=False)]
        except OSError:
            return []

    def list_launches(self, target: str) -> list[str]:
        """The run folders of a folder holding run folders, each a run of its own; [] for a run."""
        p = Path(target)
        if p.is_file() or self.record_of(p) is not None:
            return []
        return [str(f) for f in self.run_folders(p)]
