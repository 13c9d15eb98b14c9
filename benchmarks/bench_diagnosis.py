"""Diagnosis of a long run: every rule, the trend tests and the verdict on a 100,000-step run.

    python benchmarks/bench_diagnosis.py [--steps 100000] [--repeats 5] [--rolling]

Times `dashboard.diagnosis.diagnose` (median over repeats) on an in-memory run with the checklist's columns,
a slow reward trend, noise, and a KL spike every 10,000 steps; and, beside it, the two trend tests alone on
the reward as scipy would run them on every point (Mann-Kendall is O(n log n); Theil-Sen is O(n^2), so the
engine tests the means of at most `stats.MAX_TREND_POINTS` bins instead, which is what keeps it fast).
With --rolling, also the rules' rolling median (series.rolling_median: bottleneck's move_median) against pandas'
rolling median, which it equals, at the sizes a live guard judges and at a whole run's.
"""

from __future__ import annotations

import argparse
import platform
from types import SimpleNamespace

import numpy as np
import pandas as pd
from scipy import stats as sps
from timing import median_time  # benchmarks/timing.py (the script folder is on sys.path)

from dashboard.diagnosis import diagnose
from dashboard.diagnosis import stats as dstats


def synthetic_run(n: int, seed: int = 0) -> SimpleNamespace:
    """A run-like object (metrics, meta, samples) of n steps; columns as our trainer logs them."""
    rng = np.random.default_rng(seed)
    t = np.arange(n) / n
    kl = 0.02 + 0.1 * t + 0.005 * rng.standard_normal(n)
    kl[5_000::10_000] = 3.0  # a lone spike that returns at once: no explosion
    frame = pd.DataFrame({
        "step": np.arange(n), "reward/mean": 0.2 + 0.6 * t + 0.05 * rng.standard_normal(n),
        "reward/std": np.full(n, 0.4), "reward/pass_rate": 0.2 + 0.6 * t, "groups/zero_std_frac": 0.3 - 0.2 * t,
        "groups/all_pass_frac": 0.1 * t, "groups/all_fail_frac": 0.3 - 0.3 * t,
        "completions/len_mean": 100 + 20 * rng.standard_normal(n), "completions/len_max": np.full(n, 256.0),
        "completions/truncated_frac": np.full(n, 0.01), "policy/entropy": 0.8 - 0.3 * t,
        "policy/kl_ref": kl, "policy/clipfrac": np.full(n, 0.05), "adv/std": np.full(n, 0.9),
        "optim/grad_norm": 1 + 0.1 * rng.standard_normal(n), "loss/total": 0.01 * rng.standard_normal(n),
        "optim/lr": np.full(n, 1e-6)})
    meta = SimpleNamespace(config={"rollout.group_size": 8, "rollout.temperature": 1.0}, source="grpo_core")
    return SimpleNamespace(metrics=frame, meta=meta, samples=lambda: None)


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=100_000)
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--rolling", action="store_true", help="also time the rolling median against pandas'")
    args = p.parse_args()
    if args.rolling:
        rolling(args.repeats)
    run = synthetic_run(args.steps)
    d = diagnose(run)
    print(f"machine: {platform.processor() or platform.machine()}, Python {platform.python_version()}")
    print(f"verdict: {d.verdict.text}; findings: {[(f.rule_id, f.severity) for f in d.findings]}")
    full = median_time(lambda: diagnose(run), args.repeats)
    print(f"diagnose(), {args.steps:,} steps, every rule + verdict (median of {args.repeats}): {1e3 * full:.0f} ms")
    r = run.metrics["reward/mean"].to_numpy()
    s = run.metrics["step"].to_numpy()
    binned = median_time(lambda: dstats.trend(s, r), args.repeats)
    print(f"stats.trend on the reward (bin means, <= {dstats.MAX_TREND_POINTS} points): {1e3 * binned:.1f} ms")
    mk = median_time(lambda: sps.kendalltau(s, r), args.repeats)
    print(f"scipy kendalltau on all {args.steps:,} points: {1e3 * mk:.1f} ms")
    m = 5_000  # Theil-Sen on every point is quadratic: time 5,000 points and scale by (n / 5,000)^2
    ts = median_time(lambda: sps.theilslopes(r[:m], s[:m]), max(1, args.repeats // 2))
    print(f"scipy theilslopes on {m:,} points: {1e3 * ts:.0f} ms; on all {args.steps:,} about "
          f"{ts * (args.steps / m) ** 2:.0f} s (quadratic), {ts * (args.steps / m) ** 2 / binned:,.0f}x the binned test")


def rolling(repeats: int) -> None:
    """series.rolling_median against pandas' rolling median, side by side: (points, window, NaN share)."""
    from dashboard.diagnosis.series import rolling_median

    rng = np.random.default_rng(0)
    print("| points | window | NaN | pandas rolling().median() | series.rolling_median | pandas / ours |")
    print("|---|---|---|---|---|---|")
    for n, window, nan in ((440, 20, 0.0), (440, 20, 0.1), (440, 5, 0.0), (10_000, 20, 0.0), (100_000, 20, 0.1)):
        x = rng.normal(size=n)
        x[rng.random(n) < nan] = np.nan
        lo = max(1, window // 2)
        want = pd.Series(x).rolling(window, min_periods=lo).median().to_numpy()
        assert np.array_equal(rolling_median(x, window), want, equal_nan=True)
        k = max(repeats, 20_000_000 // (n * window))  # many calls of a short series: a median of microseconds
        pd_s = median_time(lambda x=x, w=window, lo=lo: pd.Series(x).rolling(w, min_periods=lo).median().to_numpy(), k)
        ours = median_time(lambda x=x, w=window: rolling_median(x, w), k)
        print(f"| {n:,} | {window} | {nan:.0%} | {1e6 * pd_s:,.0f} µs | {1e6 * ours:,.0f} µs | {pd_s / ours:.1f}x |")


if __name__ == "__main__":
    main()
