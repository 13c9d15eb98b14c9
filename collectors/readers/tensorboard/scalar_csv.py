"""Scalars downloaded from TensorBoard's web UI as CSV (a scalar chart's "download data" link): one file per tag
and run, the header `Wall time,Step,Value`, one row per logged point. The tag is only in the file's name: the
UI names it `run-<run>-tag-<tag>.csv` with each `/` of the tag written `_` (`run-grpo-tag-train_reward.csv`);
people often rename it (`train_reward.csv`), and then the name is the tag.

A folder of such files is one run per `<run>` of the default names (the others together, named after the
folder), each file a metric; the `_` that stood for `/` is put back where that gives a key the key maps know
(`train_completions_clipped_ratio` is TRL's `train/completions/clipped_ratio`), else the name is kept.
Targets: one such file, or a folder of them; each run a launch (`FOLDER#<run>`).
"""

from __future__ import annotations

import csv
import io
import re
from functools import lru_cache
from pathlib import Path

import numpy as np
import pandas as pd

from collectors.meta import RunError, RunMeta
from collectors.readers.folders import MAX_FILES, by_file_state, head_of
from collectors.readers.keymaps import FAMILIES
from collectors.readers.text.whole_files import WholeFilesRun, files_of
from collectors.run import Problem
from collectors.schema import METRICS
from collectors.sources import launch_target, no_parts, register_source, split_launch

SUFFIX = ".csv"
HEADER = ["Wall time", "Step", "Value"]
_DEFAULT_NAME = re.compile(r"^run-(?P<run>.*)-tag-(?P<tag>.+)\.csv$")
_PREFIXES = ("", "train_", "eval_", "training_")


def _is_scalars(path: str) -> bool:
    head = head_of(path, (SUFFIX,), 256)
    if not head:
        return False
    first = head.split(b"\n", 1)[0].decode("utf-8-sig", "replace").rstrip("\r")
    return [c.strip() for c in first.split(",")] == HEADER


is_scalars = by_file_state(_is_scalars)


def scalar_files(target: str) -> list[Path]:
    """The scalar downloads a target names (a tag a file: a run has dozens, so five times MAX_FILES)."""
    return files_of(target, SUFFIX, is_scalars, MAX_FILES * 5)


def run_and_tag(path: Path) -> tuple[str | None, str]:
    """(run, tag as written) from a file's name: the UI's `run-<run>-tag-<tag>.csv`, else (None, the stem)."""
    m = _DEFAULT_NAME.match(path.name)
    return (m["run"], m["tag"]) if m else (None, path.stem)


@lru_cache(maxsize=1)
def _known() -> dict[str, str]:
    """Every key the maps know and every canonical name, by the name with `/` written `_`."""
    keys = [k for table in FAMILIES.values() for k in table] + list(METRICS)
    return {k.replace("/", "_"): k for k in sorted(keys, key=len, reverse=True)}


def restore_tag(tag: str) -> str:
    """`train_completions_clipped_ratio` -> `train/completions/clipped_ratio` where the key maps know the rest;
    the tag unchanged where they do not (it is then kept under that name)."""
    known = _known()
    for prefix in _PREFIXES:
        rest = tag[len(prefix):]
        if tag.startswith(prefix) and rest in known:
            return prefix.replace("_", "/") + known[rest]
    return tag


def _runs(files: list[Path], folder: str) -> dict[str, list[Path]]:
    out: dict[str, list[Path]] = {}
    for f in files:
        run, _ = run_and_tag(f)
        # `.` is the logdir itself (event files directly in it), as TensorBoard names that run
        out.setdefault(_launch(run if run not in (None, ".") else Path(folder).name), []).append(f)
    return out


def _launch(run: str) -> str:
    return run.replace("/", "_").replace("#", "_") or "."


def detect(target: str) -> bool:
    return bool(scalar_files(target))


def list_launches(target: str) -> list[str]:
    if not Path(target).is_dir():
        return []
    runs = _runs(scalar_files(target), target)
    return [launch_target(target, r) for r in runs] if len(runs) > 1 else []


class ScalarCsvRun(WholeFilesRun):
    """The scalar files of one run (downloads are small: read whole)."""

    changed = "a scalar file changed; read again"

    def __init__(self, target: str) -> None:
        base, launch = split_launch(target)
        runs = _runs(scalar_files(base), base)
        if not runs:
            raise RunError(f"{base}: no TensorBoard scalar download here (a CSV whose header is "
                           f"{','.join(HEADER)})")
        if launch is None:
            launch = next(iter(runs))
        if launch not in runs:
            raise RunError(f"{base}: no run {launch!r} among these scalar files; runs: {', '.join(sorted(runs))}")
        name = launch if Path(base).is_dir() else Path(base).stem
        super().__init__(base, RunMeta(run_id=launch, name=name, source="tensorboard-csv"), runs[launch])
        self._start()

    def _frame(self, path: Path) -> pd.DataFrame | None:
        """`step`, `wall_time` and the tag's column of one file; rows that are not three cells are named."""
        try:
            rows = list(csv.reader(io.StringIO(path.read_text(encoding="utf-8-sig", errors="replace"), newline="")))
        except (OSError, csv.Error) as e:
            self._note(Problem(path.name, f"not readable as TensorBoard's scalar CSV ({type(e).__name__}: "
                                          f"{getattr(e, 'strerror', None) or e}); left out"))
            return None
        body = rows[1:]
        bad = [i + 2 for i, r in enumerate(body) if len(r) != 3 and any(c.strip() for c in r)]
        if bad:
            shown = ", ".join(map(str, bad[:3])) + (f" and {len(bad) - 3} more" if len(bad) > 3 else "")
            self._note(Problem(path.name, f"line {shown}: not the 3 cells Wall time,Step,Value; left out"))
        body = [r for r in body if len(r) == 3]
        if not body:
            return None
        cells = np.array(body, dtype=object)
        tag = restore_tag(run_and_tag(path)[1])
        return pd.DataFrame({"step": cells[:, 1], "wall_time": pd.to_numeric(cells[:, 0], errors="coerce"),
                             tag: cells[:, 2]})


register_source("tensorboard-csv", detect=detect, priority=6, launches=list_launches, parts=no_parts, hints={
    "samples": "TensorBoard's scalar downloads hold one tag each, no responses; the run's event files (the logdir) "
               "hold its text summaries, and collectors.trl.GrpoScopeCallback keeps the responses.",
    "config": "scalar downloads hold no config; open the logdir itself (its `args` text summary) or put the "
              "config beside the CSVs as config*.yaml.",
})(ScalarCsvRun)
