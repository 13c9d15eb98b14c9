"""Wide records: a TensorBoard event and a wandb history row of 20,000 values each, ours against the libraries.

    python benchmarks/bench_wide_records.py [--tags 20000] [--rows 1,20] [--repeats 5]

Issue 38 measured a TensorBoard event with 20,000 tags opening in 6.9 s and a wandb history of 20,000 items in
14 s (a trainer logging every parameter's norm). For each row count, writes with the libraries' own writers
(TensorBoard's EventFileWriter: one event of `--tags` scalars per step; wandb offline: `run.log` of a dict of
`--tags` floats per step), then times, alternated in one process, median of `--repeats`:
- ours: `TensorBoardRun(folder).metrics`, `WandbOfflineRun(folder).metrics` (open + metrics frame);
- TensorBoard's own reader: `EventAccumulator(size_guidance scalars=0)`, `Reload()`, then `Scalars(tag)` for
  every tag (all points in hand, as ours);
- wandb's: wandb 0.31 has no Python reader of a `.wandb` file (its DataStore moved into the Go wandb-core), so
  its own protobuf `Record` parses each record, framed by a plain LevelDB-log loop here, and each history
  item's `value_json` goes through `json.loads`; the rows become a `DataFrame.from_records` (what a user with
  wandb's protobufs would write).
Prints a Markdown table with ratios.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import statistics
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def write_tb(folder: Path, tags: int, rows: int) -> None:
    from tensorboard.compat.proto import event_pb2, summary_pb2
    from tensorboard.summary.writer.event_file_writer import EventFileWriter

    w = EventFileWriter(str(folder), max_queue_size=10)
    rng = np.random.default_rng(0)
    for s in range(rows):
        summ = summary_pb2.Summary(value=[summary_pb2.Summary.Value(tag=f"norm/layer{i}", simple_value=float(v))
                                          for i, v in enumerate(rng.random(tags))])
        w.add_event(event_pb2.Event(step=s, wall_time=time.time(), summary=summ))
    w.close()


WANDB_SCRIPT = """
import numpy as np, wandb
rng = np.random.default_rng(0)
run = wandb.init(project="bench", dir=DIR)
for s in range(ROWS):
    run.log({f"norm/layer{i}": float(v) for i, v in enumerate(rng.random(TAGS))}, step=s)
run.finish()
"""


def write_wandb(folder: Path, tags: int, rows: int) -> Path:
    code = f"TAGS = {tags}\nROWS = {rows}\nDIR = {str(folder)!r}\n" + WANDB_SCRIPT
    env = dict(os.environ, WANDB_MODE="offline", WANDB_SILENT="true")
    subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    return next((folder / "wandb").glob("offline-run-*"))


def ours_tb(folder: Path) -> pd.DataFrame:
    from collectors.readers.tensorboard.logdir import TensorBoardRun

    return TensorBoardRun(folder).metrics


def ours_wandb(folder: Path) -> pd.DataFrame:
    from collectors.readers.wandb.offline import WandbOfflineRun

    return WandbOfflineRun(folder).metrics


def library_tb(folder: Path) -> dict:
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    ea = EventAccumulator(str(folder), size_guidance={"scalars": 0})
    ea.Reload()
    return {tag: ea.Scalars(tag) for tag in ea.Tags()["scalars"]}


def _leveldb_records(data: bytes):
    """The records of a LevelDB log after wandb's 7-byte file header (32 KiB blocks of crc, length, type)."""
    pos, pending = 7, b""
    while pos + 7 <= len(data):
        room = 32768 - pos % 32768
        if room < 7:
            pos += room
            continue
        _crc, length, kind = struct.unpack_from("<IHB", data, pos)
        chunk = data[pos + 7:pos + 7 + length]
        pos += 7 + length
        if kind == 1:
            yield chunk
        elif kind == 2:
            pending = chunk
        elif kind == 3:
            pending += chunk
        elif kind == 4:
            yield pending + chunk
        else:
            break


def library_wandb(folder: Path) -> pd.DataFrame:
    from wandb.proto import wandb_internal_pb2 as pb

    data = next(folder.glob("run-*.wandb")).read_bytes()
    rows = []
    for raw in _leveldb_records(data):
        rec = pb.Record.FromString(raw)
        if rec.WhichOneof("record_type") == "history":
            rows.append({item.key or "/".join(item.nested_key): json.loads(item.value_json)
                         for item in rec.history.item})
    return pd.DataFrame.from_records(rows)


def _check(ours: pd.DataFrame, library, rows: int) -> None:
    """Both sides read every value: as many rows, and ours holds every tag the library found."""
    tags = set(library) if isinstance(library, dict) else {c for c in library.columns if not c.startswith("_")}
    missing = tags - set(ours.columns)
    assert len(ours) == rows and not missing, (len(ours), rows, sorted(missing)[:5])


def alternate(fns: dict, repeats: int) -> dict[str, float]:
    times: dict[str, list[float]] = {k: [] for k in fns}
    for _ in range(repeats):
        for name, fn in fns.items():
            t0 = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - t0)
    return {k: statistics.median(v) for k, v in times.items()}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tags", type=int, default=20_000)
    ap.add_argument("--rows", default="1,20", help="steps written, each with --tags values")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--only", choices=["tb", "wandb"], default=None)
    args = ap.parse_args(argv)
    tmp = Path(tempfile.mkdtemp(prefix="wide-"))
    print(f"{args.tags:,} values per step; median of {args.repeats}, ours and the library alternated; "
          f"load average {os.getloadavg()[0]:.1f} at the start")
    print("| file | rows | ours | library | library's reader | ours / library |\n|---|---:|---:|---:|---|---:|")
    for rows in [int(r) for r in args.rows.split(",")]:
        if args.only in (None, "tb"):
            tb = tmp / f"tb{rows}"
            write_tb(tb, args.tags, rows)
            _check(ours_tb(tb), library_tb(tb), rows)
            t = alternate({"ours": functools.partial(ours_tb, tb), "lib": functools.partial(library_tb, tb)}, args.repeats)
            print(f"| TensorBoard event file | {rows} | {t['ours'] * 1000:,.0f} ms | {t['lib'] * 1000:,.0f} ms "
                  f"| `EventAccumulator` | {t['ours'] / t['lib']:.2f}x |", flush=True)
        if args.only in (None, "wandb"):
            wb = write_wandb(tmp / f"wb{rows}", args.tags, rows)
            _check(ours_wandb(wb), library_wandb(wb), rows)
            t = alternate({"ours": functools.partial(ours_wandb, wb), "lib": functools.partial(library_wandb, wb)}, args.repeats)
            print(f"| wandb offline run | {rows} | {t['ours'] * 1000:,.0f} ms | {t['lib'] * 1000:,.0f} ms "
                  f"| wandb's `Record` protobuf + `json.loads` | {t['ours'] / t['lib']:.2f}x |", flush=True)
    print(f"load average {os.getloadavg()[0]:.1f} at the end")
    return 0


if __name__ == "__main__":
    sys.exit(main())
