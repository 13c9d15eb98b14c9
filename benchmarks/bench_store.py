"""Run store figures: logging throughput, full load, and the cost of a live refresh of one new part.

    python benchmarks/bench_store.py [--steps 100000] [--metrics 40] [--repeats 5]

Prints medians over repeats. The refresh figure is compared side by side, in the same process, with a
fresh load of the whole run: a live dashboard calls refresh() every second, so it must cost about one
part, not the run.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import pyarrow.parquet as pq
from timing import median_time  # benchmarks/timing.py (the script folder is on sys.path)

from collectors import RunWriter, load_run
from collectors.schema import METRICS


def metric_names(n: int) -> list[str]:
    canonical = [k for k in METRICS if k not in ("step", "wall_time")]
    return (canonical + [f"extra/m{i}" for i in range(n)])[:n]


def write_run(path: Path, steps: int, names: list[str]) -> float:
    t0 = time.perf_counter()
    with RunWriter(path, handle_signals=False) as w:
        for s in range(steps):
            w.log_step(s, {k: (s * 7 + i) % 101 / 100 for i, k in enumerate(names)})
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=100_000)
    ap.add_argument("--metrics", type=int, default=40)
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    names = metric_names(args.metrics)
    with tempfile.TemporaryDirectory() as tmp:
        run_dir = Path(tmp) / "bench"
        write_s = write_run(run_dir, args.steps, names)
        n_files = len(list((run_dir / "metrics").iterdir()))
        load_s = median_time(lambda: load_run(run_dir).metrics, args.repeats)
        run = load_run(run_dir)
        _ = run.metrics  # the frame is built lazily; time its building too
        w = RunWriter(run_dir, handle_signals=False)
        step = [args.steps]

        def one_new_step():
            w.log_step(step[0], {k: 0.5 for k in names})
            w.flush()
            step[0] += 1

        def refresh_only():
            run.refresh()
            _ = run.metrics

        refresh_times, flush_times = [], []
        for _ in range(args.repeats * 4):
            flush_times.append(median_time(one_new_step, 1))
            refresh_times.append(median_time(refresh_only, 1))
        newest = max((run_dir / "metrics").glob("part-*.parquet"), key=lambda p: p.stat().st_mtime)
        part_s = median_time(lambda: pq.read_table(newest).to_pandas(), args.repeats * 4)
        w.close()
        assert len(run.metrics) == step[0]
    refresh_s = statistics.median(refresh_times)
    print(f"steps={args.steps} metrics={args.metrics}")
    print(f"write: {write_s:.2f} s total, {args.steps / write_s:,.0f} steps/s logged, {n_files} part files left")
    print(f"load (fresh, whole run): median {load_s * 1e3:.1f} ms")
    print(f"live refresh of one new step: median {refresh_s * 1e3:.2f} ms "
          f"({load_s / refresh_s:.0f}x cheaper than a fresh load; "
          f"reading that one part alone: {part_s * 1e3:.2f} ms, ratio {refresh_s / part_s:.1f})")
    print(f"writer flush of one step (write part + fsync + run.json): median {statistics.median(flush_times) * 1e3:.2f} ms")


if __name__ == "__main__":
    main()
