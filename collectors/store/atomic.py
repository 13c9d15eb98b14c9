"""Atomic file writes: a reader sees the old file or the new one, never half of either.

The recipe is the classic one: write to a temporary name in the same folder (same filesystem, so the
rename is atomic), fsync the file, rename over the target, then fsync the folder so the rename itself
survives a power cut. Temporary names start with a dot; readers ignore dotfiles.
"""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq


def _tmp_name(target: Path) -> Path:
    return target.with_name(f".{target.name}.{os.getpid()}.tmp")


def _fsync_dir(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


@contextlib.contextmanager
def _cleaned(tmp: Path):
    """Remove a half-written temporary file when the write fails (a full disk): it would hold the space
    that the run's last words (run.json with the error) need."""
    try:
        yield
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def write_bytes_atomic(target: Path, data: bytes) -> None:
    tmp = _tmp_name(target)
    with _cleaned(tmp):
        with open(tmp, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, target)
    _fsync_dir(target.parent)


def write_json_atomic(target: Path, obj: Any) -> None:
    # allow_nan=False would reject a NaN in a config; we keep JSON strict by turning them into strings upstream.
    write_bytes_atomic(target, (json.dumps(obj, indent=2, sort_keys=False, default=str) + "\n").encode())


def write_parquet_atomic(target: Path, table: pa.Table) -> None:
    tmp = _tmp_name(target)
    with _cleaned(tmp):
        # zstd: compact for the many-small-files case, and fast to decode when a dashboard reads a long run.
        pq.write_table(table, tmp, compression="zstd")
        with open(tmp, "rb+") as f:
            os.fsync(f.fileno())
        os.replace(tmp, target)
    _fsync_dir(target.parent)
