"""A run made of a few small files read whole (chart exports, scalar downloads): every file is read again when
one of them changes, and their rows are merged by step (TextRun._emit: each column keeps its value)."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pandas as pd

from collectors.meta import RunMeta
from collectors.readers.folders import side_config
from collectors.readers.text.rows import TextRun
from collectors.run import Problem


def files_of(target: str, suffix: str, recognise: Callable[[str], bool], limit: int) -> list[Path]:
    """The files a target names: the file itself when `recognise` says so, or the first `limit` of a folder's
    files named `*suffix`, by name, that it recognises."""
    p = Path(target)
    if not p.is_dir():
        return [p] if recognise(target) else []
    try:
        names = sorted(e.path for e in os.scandir(p) if e.name.endswith(suffix) and e.is_file())
    except OSError:
        return []
    return [Path(f) for f in names[:limit] if recognise(f)]


class WholeFilesRun(TextRun):
    """Subclasses set `files` before calling `__init__`'s end (`_start`) and implement `_frame(path)`: one file's
    rows as `step` plus logged columns, or None."""

    changed = "a file changed; read again"

    def __init__(self, path: Path | str, meta: RunMeta, files: list[Path]) -> None:
        super().__init__(path, meta)
        self.files = files
        self._state: tuple | None = None

    def _start(self) -> None:
        """Read the config beside the first file, then the files."""
        config, where, wrong = side_config(self.files[0])
        if wrong:
            self._note(Problem(where, f"{wrong}; the run has no config"))
        elif config:
            self.meta.config, self.meta.info["config_source"] = config, where
        self.refresh()

    def _frame(self, path: Path) -> pd.DataFrame | None:
        raise NotImplementedError

    def _stamp(self) -> tuple:
        out = []
        for f in self.files:
            try:
                st = f.stat()
                out.append((str(f), st.st_size, st.st_mtime_ns))
            except OSError:
                out.append((str(f), None, None))
        return tuple(out)

    def _read_new(self) -> list[pd.DataFrame]:
        stamp = self._stamp()
        if stamp == self._state:
            return []
        if self._state is not None:
            self._reset(self.path.name, self.changed)
        self._state = stamp
        frames = [f for f in (self._frame(p) for p in self.files) if f is not None]
        # one row per point of each file; _emit merges the rows of one step (each column keeps its value)
        return self._emit(pd.concat(frames, ignore_index=True, sort=False), self.path.name) if frames else []
