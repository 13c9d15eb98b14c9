"""Foreign readers vs the native Parquet reader vs TensorBoard's EventAccumulator on the same data.

    python benchmarks/bench_readers.py [--steps 100000] [--metrics 40] [--wandb-steps 100000]
                                       [--baseline-tree DIR] [--only-wandb [--rounds N]]

Writes one synthetic run (steps x metrics, TRL-style `train/` keys) in each format with the real writers
(RunWriter, TensorBoard's EventFileWriter, wandb offline, JSON lines, CSV), then times a fresh open of each
(open + metrics frame) and a live refresh that picks up one appended step. Prints a Markdown table.
`--baseline-tree DIR` (a folder holding an older `collectors/`, e.g. `git archive 5a1788c collectors | tar -x
-C DIR`) also times that tree's TensorBoard and wandb readers and today's on the same files, each in a fresh
subprocess. `--only-wandb` writes and times the wandb offline run alone (today's reader and the baseline's,
each in a fresh subprocess, in turns).
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

LIVE_STEPS = 7
KEYS = ["train/reward", "train/reward_std", "train/kl", "train/entropy", "train/grad_norm", "train/learning_rate"]


def names(n_metrics: int) -> list[str]:
    return (KEYS + [f"train/extra_{i}" for i in range(n_metrics)])[:n_metrics]


def values(steps: int, n_metrics: int) -> np.ndarray:
    return np.random.default_rng(0).random((steps, n_metrics))


def write_native(folder: Path, cols: list[str], data: np.ndarray) -> None:
    from collectors import RunWriter
    from collectors.readers.keymap import canonical_name

    mapped = [canonical_name(c) for c in cols]
    with RunWriter(folder, name="bench", flush_every=10_000, handle_signals=False) as w:
        for s, row in enumerate(data):
            w.log_step(s, dict(zip(mapped, row.tolist(), strict=True)))


def write_tb(folder: Path, cols: list[str], data: np.ndarray):
    from tensorboard.compat.proto import event_pb2, summary_pb2
    from tensorboard.summary.writer.event_file_writer import EventFileWriter

    w = EventFileWriter(str(folder), max_queue_size=1000)
    for s, row in enumerate(data):
        summ = summary_pb2.Summary(value=[summary_pb2.Summary.Value(tag=c, simple_value=float(v))
                                          for c, v in zip(cols, row, strict=True)])
        w.add_event(event_pb2.Event(step=s, wall_time=time.time(), summary=summ))
    w.flush()
    return w


def write_tb_per_tag(folder: Path, cols: list[str], data: np.ndarray) -> None:
    """One tag per event, as torch's SummaryWriter.add_scalar (and so transformers' TensorBoardCallback) logs."""
    from tensorboard.compat.proto import event_pb2, summary_pb2
    from tensorboard.summary.writer.event_file_writer import EventFileWriter

    w = EventFileWriter(str(folder), max_queue_size=1000)
    for s, row in enumerate(data):
        for c, v in zip(cols, row, strict=True):
            w.add_event(event_pb2.Event(step=s, wall_time=time.time(), summary=summary_pb2.Summary(
                value=[summary_pb2.Summary.Value(tag=c, simple_value=float(v))])))
    w.close()


def write_verl(path: Path, cols: list[str], data: np.ndarray) -> None:
    with path.open("w") as f:
        for s, row in enumerate(data):
            f.write(json.dumps({"step": s, "data": dict(zip(cols, row.tolist(), strict=True))}) + "\n")


def write_jsonl(path: Path, cols: list[str], data: np.ndarray) -> None:
    with path.open("w") as f:
        for s, row in enumerate(data):
            f.write(json.dumps({"step": s, **dict(zip(cols, row.tolist(), strict=True))}) + "\n")


def write_csv(path: Path, cols: list[str], data: np.ndarray) -> None:
    with path.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["step", *cols])
        for s, row in enumerate(data):
            w.writerow([s, *row.tolist()])


WANDB_SCRIPT = """
import numpy as np, wandb
cols = COLS
data = np.random.default_rng(0).random((STEPS, len(cols)))
run = wandb.init(project="bench", dir=DIR)
for s, row in enumerate(data):
    run.log(dict(zip(cols, row.tolist())), step=s)
run.finish()
"""


def write_wandb(folder: Path, cols: list[str], steps: int) -> Path | None:
    code = f"COLS = {cols!r}\nSTEPS = {steps}\nDIR = {str(folder)!r}\n" + WANDB_SCRIPT
    env = dict(os.environ, WANDB_MODE="offline", WANDB_SILENT="true")
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        print("wandb run failed:", proc.stderr[-500:], file=sys.stderr)
        return None
    return next((folder / "wandb").glob("offline-run-*"))


def timed(fn, repeats: int) -> tuple[float, object]:
    best, out = float("inf"), None
    for _ in range(repeats):
        t = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t)
    return best, out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=100_000)
    ap.add_argument("--metrics", type=int, default=40)
    ap.add_argument("--wandb-steps", type=int, default=None, help="default: --steps; 0 skips wandb")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--per-tag-steps", type=int, default=10_000,
                    help="steps of the one-tag-per-event TensorBoard file (torch add_scalar style); 0 skips it")
    ap.add_argument("--baseline-tree", type=Path, default=None,
                    help="a folder holding an older collectors/ whose binary readers are timed beside today's")
    ap.add_argument("--only-wandb", action="store_true",
                    help="the wandb offline run alone (--wandb-steps, else --steps), in fresh processes")
    ap.add_argument("--rounds", type=int, default=1,
                    help="with --only-wandb: how many times today's and the baseline's reader are timed in turns")
    args = ap.parse_args(argv)
    if args.only_wandb:
        return wandb_only(args)
    from collectors import load_run
    from collectors.readers.tensorboard.logdir import TensorBoardRun
    from collectors.readers.text.generic import GenericRun
    from collectors.readers.verl.console import VerlRun
    from collectors.readers.wandb.offline import WandbOfflineRun

    cols = names(args.metrics)
    data = values(args.steps, args.metrics)
    tmp = Path(tempfile.mkdtemp(prefix="bench_readers_"))
    t0 = time.perf_counter()
    write_native(tmp / "native", cols, data)
    tb = write_tb(tmp / "tb", cols, data)
    tag_steps = min(args.steps, args.per_tag_steps)
    if tag_steps:
        write_tb_per_tag(tmp / "tb_per_tag", cols, data[:tag_steps])
    write_verl(tmp / "verl.jsonl", cols, data)
    write_csv(tmp / "log.csv", cols, data)
    write_jsonl(tmp / "log.jsonl", cols, data)
    wsteps = args.steps if args.wandb_steps is None else args.wandb_steps
    wb = write_wandb(tmp / "wb", cols, wsteps) if wsteps else None
    print(f"writing took {time.perf_counter() - t0:.0f} s", file=sys.stderr)

    rows = []

    def bench(label, open_fn, n_expected):
        t, run = timed(lambda: _frame(open_fn()), args.repeats)
        ok = "all" if len(run.metrics) == n_expected else f"{len(run.metrics)} of {n_expected}"
        rows.append((label, t, ok, run))

    def _frame(run):
        run.metrics  # noqa: B018 - build the frame inside the timing
        return run

    bench("native Parquet (`load_run`)", lambda: load_run(tmp / "native"), args.steps)
    bench("TensorBoard (`TensorBoardRun`)", lambda: TensorBoardRun(tmp / "tb"), args.steps)
    if tag_steps:
        bench(f"TensorBoard, one tag per event, {tag_steps:,} steps (`TensorBoardRun`)",
              lambda: TensorBoardRun(tmp / "tb_per_tag"), tag_steps)
    bench("verl JSONL (`VerlRun`)", lambda: VerlRun(tmp / "verl.jsonl"), args.steps)
    bench("generic CSV (`GenericRun`)", lambda: GenericRun(tmp / "log.csv"), args.steps)
    bench("generic JSONL (`GenericRun`)", lambda: GenericRun(tmp / "log.jsonl"), args.steps)
    libs = library_parses(tmp, args.repeats)
    if wb is not None:
        bench("wandb offline (`WandbOfflineRun`)", lambda: WandbOfflineRun(wb), wsteps)

    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    def accumulate(guidance):
        ea = EventAccumulator(str(tmp / "tb"), size_guidance=guidance)
        ea.Reload()
        return ea

    t_ea, ea = timed(lambda: accumulate({"scalars": 0}), 1)
    kept = len(ea.Scalars(cols[0]))
    _, ea_default = timed(lambda: accumulate(None), 1)
    kept_default = len(ea_default.Scalars(cols[0]))
    t_ea_tag = None
    if tag_steps:
        ea_tag = EventAccumulator(str(tmp / "tb_per_tag"), size_guidance={"scalars": 0})
        t_ea_tag, _ = timed(ea_tag.Reload, 1)
    baseline = {}
    if args.baseline_tree is not None:
        targets = {"TensorBoard (`TensorBoardRun`)": ("tb", tmp / "tb"),
                   "wandb offline (`WandbOfflineRun`)": ("wandb", wb)}
        if tag_steps:
            targets[f"TensorBoard, one tag per event, {tag_steps:,} steps (`TensorBoardRun`)"] = (
                "tb", tmp / "tb_per_tag")
        here = Path(__file__).resolve().parents[1]
        # both trees in fresh processes, alternated: the same conditions for each (this process has read
        # every other format by now, which leaves its heap in another state)
        baseline = {label: (baseline_open(here, kind, path, args.repeats),
                            baseline_open(args.baseline_tree, kind, path, args.repeats))
                    for label, (kind, path) in targets.items() if path is not None}

    # live refresh: append one step to the growing sources and time the refresh that picks it up;
    # LIVE_STEPS appends each, median reported (one sample would be at the mercy of a GC pass)
    from tensorboard.compat.proto import event_pb2, summary_pb2

    summ_row = values(1, args.metrics)[0]
    by_label = {label: run for label, _, _, run in rows}
    tb_run, verl_run = by_label["TensorBoard (`TensorBoardRun`)"], by_label["verl JSONL (`VerlRun`)"]
    times: dict[str, list[float]] = {"TensorBoard": [], "verl JSONL": []}
    counts: dict[str, int] = {"TensorBoard": 0, "verl JSONL": 0}
    for i in range(LIVE_STEPS):
        step = args.steps + i
        tb.add_event(event_pb2.Event(step=step, wall_time=time.time(), summary=summary_pb2.Summary(value=[
            summary_pb2.Summary.Value(tag=c, simple_value=float(v)) for c, v in zip(cols, summ_row, strict=True)])))
        tb.flush()
        t = time.perf_counter()
        counts["TensorBoard"] += tb_run.refresh()
        times["TensorBoard"].append(time.perf_counter() - t)
        with (tmp / "verl.jsonl").open("a") as f:
            f.write(json.dumps({"step": step, "data": dict(zip(cols, summ_row.tolist(), strict=True))}) + "\n")
        t = time.perf_counter()
        counts["verl JSONL"] += verl_run.refresh()
        times["verl JSONL"].append(time.perf_counter() - t)
    live = {k: (statistics.median(v), counts[k] / LIVE_STEPS) for k, v in times.items()}
    tb.close()

    print(f"{args.steps:,} steps x {args.metrics} metrics; best of {args.repeats} fresh opens "
          "(open + metrics frame)\n")
    print("| reader | fresh open | points kept |\n|---|---|---|")
    for label, t, ok, _ in rows:
        print(f"| {label} | {t * 1000:,.0f} ms | {ok} |")
    print(f"| TensorBoard `EventAccumulator`, `size_guidance` scalars=0 | {t_ea * 1000:,.0f} ms | "
          f"{kept:,} per tag |")
    print(f"| TensorBoard `EventAccumulator`, default size_guidance | - | {kept_default:,} per tag |")
    if t_ea_tag is not None:
        print(f"| TensorBoard `EventAccumulator` scalars=0, one tag per event, {tag_steps:,} steps | "
              f"{t_ea_tag * 1000:,.0f} ms | all |")
    if baseline:
        print(f"\n| reader (fresh process each) | today | `{args.baseline_tree}` | before / today |\n|---|---|---|---|")
        for label, (t, t_before) in baseline.items():
            print(f"| {label} | {t * 1000:,.0f} ms | {t_before * 1000:,.0f} ms | {t_before / t:.1f}x |")
    print(f"\n| live refresh, one appended step (median of {LIVE_STEPS}) | time | rows read |\n|---|---|---|")
    for label, (t, n) in live.items():
        print(f"| {label} | {t * 1000:.2f} ms | {n:g} |")
    print_vs_library(rows, libs)
    text_live(tmp, cols, args.steps)
    return 0


def wandb_only(args) -> int:
    """The wandb offline run alone: today's reader and the `--baseline-tree` one, each in fresh processes,
    timed in turns `--rounds` times (the machine's load moves both alike within a round)."""
    cols = names(args.metrics)
    steps = args.steps if args.wandb_steps is None else args.wandb_steps
    t0 = time.perf_counter()
    wb = write_wandb(Path(tempfile.mkdtemp(prefix="bench_readers_")) / "wb", cols, steps)
    if wb is None:
        return 1
    print(f"writing took {time.perf_counter() - t0:.0f} s", file=sys.stderr)
    here = Path(__file__).resolve().parents[1]
    base = args.baseline_tree
    print(f"wandb offline, {steps:,} steps x {args.metrics} metrics; best of {args.repeats} fresh opens (open + "
          "metrics frame), each tree in a fresh process\n")
    print(f"| round | today | `{base}` | before / today |\n|---|---|---|---|" if base else "| round | today |\n|---|---|")
    for i in range(args.rounds):
        t = baseline_open(here, "wandb", wb, args.repeats)
        if base is None:
            print(f"| {i + 1} | {t * 1000:,.0f} ms |")
            continue
        t_before = baseline_open(base, "wandb", wb, args.repeats)
        print(f"| {i + 1} | {t * 1000:,.0f} ms | {t_before * 1000:,.0f} ms | {t_before / t:.1f}x |")
    return 0


BASELINE_SCRIPT = """
import sys, time
sys.path.insert(0, sys.argv[1])
kind, path, repeats = sys.argv[2], sys.argv[3], int(sys.argv[4])
if kind == "tb":
    try:
        from collectors.readers.tensorboard.logdir import TensorBoardRun as Reader
    except ImportError:
        from collectors.readers.tensorboard import TensorBoardRun as Reader
else:
    try:
        from collectors.readers.wandb.offline import WandbOfflineRun as Reader
    except ImportError:
        from collectors.readers.wandb_offline import WandbOfflineRun as Reader
best = float("inf")
for _ in range(repeats):
    t = time.perf_counter()
    Reader(path).metrics
    best = min(best, time.perf_counter() - t)
print(best)
"""


def baseline_open(tree: Path, kind: str, path: Path, repeats: int) -> float:
    """Best fresh open (s) of `path` by the reader of the collectors/ in `tree`, in a subprocess."""
    proc = subprocess.run([sys.executable, "-c", BASELINE_SCRIPT, str(tree.resolve()), kind, str(path),
                           str(repeats)], capture_output=True, text=True, check=True)
    return float(proc.stdout.split()[-1])


def library_parses(tmp: Path, repeats: int) -> dict[str, tuple[str, float]]:
    """The parse a user would otherwise write, on the same files: our reader's label -> (library call, s)."""
    import pandas as pd
    import pyarrow.json as pajson

    return {
        "generic CSV (`GenericRun`)": ("`pandas.read_csv`", timed(lambda: pd.read_csv(tmp / "log.csv"), repeats)[0]),
        "generic JSONL (`GenericRun`)": ("`pyarrow.json.read_json`",
                                         timed(lambda: pajson.read_json(tmp / "log.jsonl"), repeats)[0]),
        "verl JSONL (`VerlRun`)": ("`pyarrow.json.read_json` + `flatten`",
                                   timed(lambda: pajson.read_json(tmp / "verl.jsonl").flatten(), repeats)[0]),
    }


def print_vs_library(rows, libs) -> None:
    print("\n| reader | ours | library parse of the same file | library | ours / library |\n|---|---|---|---|---|")
    for label, t, _, _ in rows:
        if label in libs:
            lib, t_lib = libs[label]
            print(f"| {label} | {t * 1000:,.0f} ms | {lib} | {t_lib * 1000:,.0f} ms | {t / t_lib:.1f}x |")


def text_live(tmp: Path, cols: list[str], steps: int) -> None:
    """Live refresh of the rows readers: one appended line, median of LIVE_STEPS (cost of the new bytes only)."""
    from collectors.readers.text.generic import GenericRun

    row = values(1, len(cols))[0].tolist()
    print(f"\n| live refresh, one appended step (median of {LIVE_STEPS}) | time | rows read |\n|---|---|---|")
    for name in ("log.csv", "log.jsonl"):
        run, times, n = GenericRun(tmp / name), [], 0
        for i in range(LIVE_STEPS):
            with (tmp / name).open("a") as f:
                f.write(",".join(map(str, [steps + i, *row])) + "\n" if name.endswith(".csv")
                        else json.dumps({"step": steps + i, **dict(zip(cols, row, strict=True))}) + "\n")
            t = time.perf_counter()
            n += run.refresh()
            times.append(time.perf_counter() - t)
        print(f"| generic {name.split('.')[1].upper()} | {statistics.median(times) * 1000:.2f} ms | {n / LIVE_STEPS:g} |")


if __name__ == "__main__":
    raise SystemExit(main())
