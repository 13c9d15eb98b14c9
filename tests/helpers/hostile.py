"""Hostile files that issue 38 found readers choking on, built one way for the tests and the benchmark
(benchmarks/bench_hostile_files.py puts tests/ on its path and imports this).

- `sparse_log`: a JSONL log of one valid line, a hole of NULs with no line end (a preallocated or sparse file:
  nothing on disk), one more valid line. The line tail once read from its offset to the end in one read().
- `huge_record_run`: a wandb offline run folder of 30 history records, then one whose text value is `mb` MB,
  framed over hundreds of 32 KiB blocks (a record once joined by bytes + bytes: quadratic).
"""

from __future__ import annotations

import os
from pathlib import Path

from helpers.fuzz.formats import history_record, wandb_frame

FIRST_LINE = b'{"step": 1, "reward": 0.5}\n'
LAST_LINE = b'\n{"step": 2, "reward": 0.7}\n'
SETTLED = (0, 0)  # atime, mtime: a log not written for decades, so no reader waits for it to grow


def sparse_log(path: Path, size: int) -> Path:
    """`path` as FIRST_LINE, NULs up to `size` bytes, LAST_LINE (steps 1 and 2), its mtime settled."""
    path.write_bytes(FIRST_LINE)
    with path.open("r+b") as f:
        f.truncate(size)
        f.seek(0, os.SEEK_END)
        f.write(LAST_LINE)
    os.utime(path, SETTLED)
    return path


def huge_record_run(folder: Path, mb: int) -> Path:
    """A wandb offline run folder under `folder`: steps 0-29, then step 30 with a text of `mb` MB."""
    d = folder / "offline-run-20250101_000000-abc"
    d.mkdir(parents=True)
    rows = [history_record(i, {"train/reward": str(0.1 * i)}) for i in range(30)]
    rows.append(history_record(30, {"train/reward": "0.5", "text": '"' + "x" * (mb << 20) + '"'}))
    (d / "run-abc.wandb").write_bytes(wandb_frame(rows))
    return d
