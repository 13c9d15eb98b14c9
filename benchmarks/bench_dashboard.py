"""Dashboard figures on a long run: open the checklist of a 100,000-step run, and one live tick.

    python benchmarks/bench_dashboard.py [--steps 100000] [--repeats 5]

Times, as medians over repeats, what the checklist page does for one run: load the run (collectors.load_run),
downsample every panel and build the Plotly figure (dashboard.charts), and serialise it to the JSON that
Streamlit sends to the browser. Then the live page's tick: refresh() after one new step, compared in the
same process with reading that one new part file alone (it must cost about a part, not a reread), and the
tick with its redrawn figure.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
from timing import median_time  # benchmarks/timing.py (the script folder is on sys.path)

from collectors import RunWriter, load_run
from dashboard import charts
from dashboard.data import LiveRun
from dashboard.downsample import MinMaxLTTBDownsampler


def synthetic_metrics(step: int, rng: np.random.Generator) -> dict[str, float]:
    """The checklist's columns with noise, a slow trend, and a spike every 10,000 steps (kept by downsampling)."""
    t = step / 100_000
    spike = 5.0 if step % 10_000 == 5_000 else 0.0
    return {"reward/mean": 0.2 + 0.6 * t + 0.05 * rng.standard_normal(), "reward/std": 0.3,
            "reward/pass_rate": 0.2 + 0.6 * t, "groups/zero_std_frac": 0.3 - 0.2 * t,
            "groups/all_pass_frac": 0.1 * t, "groups/all_fail_frac": 0.3 - 0.3 * t,
            "eval/pass_rate": (0.2 + 0.6 * t) if step % 100 == 0 else None,
            "completions/len_mean": 100 + 20 * rng.standard_normal(), "completions/len_max": 256.0,
            "completions/truncated_frac": 0.01, "policy/entropy": 1.5 - t, "policy/kl_ref": 0.01 * t + spike,
            "policy/clipfrac": 0.02, "policy/clipfrac_low": 0.01, "policy/clipfrac_high": 0.01,
            "policy/ratio_first_step": 1.0 + 1e-4 * rng.standard_normal(), "loss/total": 0.1, "optim/lr": 1e-6}


def write_run(path: Path, steps: int) -> float:
    rng = np.random.default_rng(0)
    t0 = time.perf_counter()
    with RunWriter(path, handle_signals=False) as w:
        for s in range(steps):
            w.log_step(s, synthetic_metrics(s, rng))
    return time.perf_counter() - t0


def points_drawn(fig) -> int:
    return sum(len(t.x) for t in fig.data if t.x is not None)


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{cpu}, {os.cpu_count()} cores, Python {platform.python_version()}"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=100_000)
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        run_dir = Path(tmp) / "long"
        write_s = write_run(run_dir, args.steps)
        load_s = median_time(lambda: load_run(run_dir).metrics, args.repeats)
        frame = load_run(run_dir).metrics
        fig_s = median_time(lambda: charts.checklist_figure(frame), args.repeats)
        fig = charts.checklist_figure(frame)
        json_s = median_time(fig.to_json, args.repeats)
        json_mb = len(fig.to_json()) / 1e6

        live = LiveRun(str(run_dir))  # what the live page keeps open across reruns
        _ = live.run.metrics
        rng = np.random.default_rng(1)
        w = RunWriter(run_dir, handle_signals=False)
        step = args.steps
        refresh_t, tick_t = [], []
        for _ in range(args.repeats * 4):
            w.log_step(step, synthetic_metrics(step, rng))
            w.flush()
            step += 1
            t0 = time.perf_counter()
            assert live.refresh() == 1
            _ = live.run.metrics
            t1 = time.perf_counter()
            charts.checklist_figure(live.run.metrics, n_out=1000)  # the live page draws 1,000 points per series
            t2 = time.perf_counter()
            refresh_t.append(t1 - t0)
            tick_t.append(t2 - t0)
        newest = max((run_dir / "metrics").glob("part-*.parquet"), key=lambda p: p.stat().st_mtime)
        part_s = median_time(lambda: pq.read_table(newest).to_pandas(), args.repeats * 4)
        w.close()
        assert len(live.run.metrics) == step
    refresh_s, tick_s = statistics.median(refresh_t), statistics.median(tick_t)
    backend = "tsdownsample MinMaxLTTB" if MinMaxLTTBDownsampler is not None else "numpy min/max buckets"
    print(f"machine: {machine()}")
    print(f"steps={args.steps}, {len(frame.columns)} columns, downsampling: {backend}")
    print(f"write (setup): {write_s:.1f} s")
    print(f"load_run + metrics frame (fresh): median {load_s * 1e3:.1f} ms")
    print(f"checklist figure (downsample + build, {len(charts.CHECKLIST)} panels): median {fig_s * 1e3:.1f} ms, "
          f"{points_drawn(fig):,} points drawn of {args.steps * sum(len(p.series) for p in charts.CHECKLIST):,}")
    print(f"figure to JSON (what Streamlit sends): median {json_s * 1e3:.1f} ms, {json_mb:.2f} MB")
    print(f"open the checklist, total: {(load_s + fig_s + json_s) * 1e3:.0f} ms")
    print(f"live refresh of one new step: median {refresh_s * 1e3:.2f} ms; reading that one part alone: "
          f"{part_s * 1e3:.2f} ms (ratio {refresh_s / part_s:.1f}); a fresh load is {load_s / refresh_s:.0f}x dearer")
    print(f"live tick (refresh + redraw at 1,000 points/series): median {tick_s * 1e3:.1f} ms")


if __name__ == "__main__":
    main()
