"""Cost of the guard's incremental diagnosis (dashboard/diagnosis/guard/watch.py) against run length, and its
overhead on a step of the default preset when it checks every 10 steps.

    python benchmarks/bench_watch.py [--lengths 1000 10000 100000] [--repeats 7] [--train-steps 60] [--replay]

A synthetic run: the rows and samples of sample_runs/healthy (38 metrics, 128 samples a step) repeated with
their steps shifted, fed to a Watcher one step at a time as grpo-train's guard does. For each length it
prints the median cost of one check at that length (add one step, check), of adding one step, and of a
one-shot `diagnose()` of the whole run (what re-diagnosing the run at each check would cost). With
--train-steps, it also trains the default preset that many steps (guard off) for the median step time and
says what a check every 10 steps adds to it. With --replay, it also replays each run of sample_runs/ (rows and
samples, step by step) into a Watcher that checks every 10 steps, and prints the median and largest check per
run: the symptoms differ, so do the rules that have work to do (the sample rules on a broken verifier).
With --per-rule, it times each rule alone on the bounded view of the longest run: where a check goes.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from collectors import RunWriter, load_run, open_run
from dashboard.diagnosis import diagnose
from dashboard.diagnosis.guard.watch import Watcher


def source_rows():
    run = open_run(ROOT / "sample_runs" / "healthy")
    rows = [{k: v for k, v in r.items() if not (isinstance(v, float) and np.isnan(v))}
            for r in run.metrics.to_dict("records")]
    samples = {s: g.to_dict("records") for s, g in run.samples().groupby("step")}
    return run.meta.config, rows, samples


def feed(n: int, config, rows, samples) -> tuple[Watcher, float]:
    """A Watcher fed n steps; returns it and the median seconds of one add()."""
    w = Watcher(config=config, source="grpo_core")
    adds = []
    for step in range(n):
        r = dict(rows[step % len(rows)])
        r.pop("step", None)
        t0 = time.perf_counter()
        w.add(step, r, samples.get(step % len(rows)))
        adds.append(time.perf_counter() - t0)
    return w, statistics.median(adds)


def check_cost(w: Watcher, rows, samples, repeats: int, every: int = 10) -> tuple[float, float, float]:
    """(median, mean, largest) seconds of a check made every `every` steps, over `repeats` checks. The mean is
    what the checks cost a run: a rule of a long window (registry.RECHECK_LONG) is judged at some checks only."""
    times = []
    step = w.history.last_step
    for _ in range(repeats):
        for _ in range(every):
            step += 1
            r = dict(rows[step % len(rows)])
            r.pop("step", None)
            w.add(step, r, samples.get(step % len(rows)))
        t0 = time.perf_counter()
        w.check()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), statistics.fmean(times), max(times)


def one_shot(n: int, rows, samples, folder: Path, repeats: int) -> float:
    """diagnose() of the whole n-step run, read back from a run folder (every metric row; samples of the last
    200 steps, so the figure is a floor: a real run keeps samples all along)."""
    out = folder / f"run{n}"
    with RunWriter(out, handle_signals=False) as wr:
        for step in range(n):
            r = dict(rows[step % len(rows)])
            r.pop("step", None)
            wr.log_step(step, r)
            if step >= n - 200 and step % len(rows) in samples:  # samples of the last 200 steps only
                wr.log_samples(pd.DataFrame(samples[step % len(rows)]).assign(step=step))
    run = load_run(out)
    times = []
    for _ in range(max(1, repeats // 3)):
        t0 = time.perf_counter()
        diagnose(run)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def train_step_s(steps: int) -> float:
    import tempfile

    from grpo_core.config import build_config
    from grpo_core.train import train

    with tempfile.TemporaryDirectory() as d:
        cfg = build_config(None, None, [("out", f"{d}/run"), ("steps", str(steps)), ("log.progress", "false")])
        train(cfg)
        return float(load_run(f"{d}/run").metrics["perf/step_s"].median())


def in_loop(steps: int) -> tuple[float, float, int, float]:
    """Train the default preset `steps` steps with the guard checking every 10 steps whatever it costs (no
    budget): (seconds the guard spent, seconds of the training loop, checks, median step seconds). Checks and
    steps interleave in one process, so a shared machine's load weighs on both alike."""
    import tempfile

    from grpo_core.config import build_config
    from grpo_core.guard import TrainGuard
    from grpo_core.train import train

    with tempfile.TemporaryDirectory() as d:
        cfg = build_config(None, None, [("out", f"{d}/run"), ("steps", str(steps)), ("log.progress", "false")])
        guard = TrainGuard(every=10, budget=None, write=lambda line: None)
        train(cfg, guard=guard)
        step_s = load_run(f"{d}/run").metrics["perf/step_s"]
        return guard.guard.pacer.spent, float(step_s.sum()), guard.guard.watcher.checks, float(step_s.median())


def replay(folder: Path) -> list[float]:
    """Seconds of each check while `folder`'s run is fed a step at a time, checked every 10 steps."""
    run = open_run(folder)
    rows = [{k: v for k, v in r.items() if not (isinstance(v, float) and np.isnan(v))}
            for r in run.metrics.to_dict("records")]
    s = run.samples()
    samples = {} if s is None else {st: g.to_dict("records") for st, g in s.groupby("step")}
    w, times = Watcher(config=run.meta.config, source=run.meta.source), []
    for r in rows:
        step = int(r.pop("step"))
        w.add(step, r, samples.get(step))
        if step % 10 == 9:
            t0 = time.perf_counter()
            w.check()
            times.append(time.perf_counter() - t0)
    return times


def per_rule(w: Watcher, repeats: int) -> list[tuple[str, float]]:
    """(rule id, median seconds) of each registered rule on w's view, slowest first; the samples are read
    before the clock starts (the first rule to ask would pay for all)."""
    from dashboard.diagnosis.context import RunData
    from dashboard.diagnosis.registry import RULES

    view, times = w.view(), {rid: [] for rid in RULES}
    for _ in range(repeats):
        d = RunData(view)
        d.samples()
        for rid, r in RULES.items():
            t0 = time.perf_counter()
            r.fn(d)
            times[rid].append(time.perf_counter() - t0)
    return sorted(((rid, statistics.median(t)) for rid, t in times.items()), key=lambda x: -x[1])


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--lengths", type=int, nargs="+", default=[1000, 10000, 100000])
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--train-steps", type=int, default=0)
    ap.add_argument("--no-one-shot", action="store_true", help="skip the one-shot diagnose of the whole run")
    ap.add_argument("--replay", action="store_true", help="also replay each sample run, checking every 10 steps")
    ap.add_argument("--per-rule", action="store_true", help="also time each rule alone on the longest run's view")
    ap.add_argument("--in-loop", type=int, default=0, metavar="STEPS",
                    help="also train the default preset STEPS steps with the guard checking every 10 steps")
    args = ap.parse_args()
    import tempfile

    config, rows, samples = source_rows()
    print("| steps | a check every 10 steps: median | mean | largest | rows judged | add one step (median) "
          "| one-shot diagnose() | one-shot / mean check |")
    print("|---|---|---|---|---|---|---|---|")
    check_at = {}
    with tempfile.TemporaryDirectory() as d:
        for n in args.lengths:
            w, add_s = feed(n, config, rows, samples)
            med, c, big = check_cost(w, rows, samples, args.repeats)
            check_at[n] = (c, add_s)
            last = w
            full = None if args.no_one_shot else one_shot(n, rows, samples, Path(d), args.repeats)
            whole = "skipped | -" if full is None else f"{full * 1e3:.0f} ms | {full / c:.1f}x"
            print(f"| {n:,} | {med * 1e3:.1f} ms | {c * 1e3:.1f} ms | {big * 1e3:.1f} ms | {len(w.history)} | "
                  f"{add_s * 1e6:.0f} µs | {whole} |", flush=True)
    if args.train_steps:
        step_s = train_step_s(args.train_steps)
        c, add_s = check_at[max(check_at)]
        per_step = (c + 10 * add_s) / 10
        print(f"default preset: median step {step_s * 1e3:.1f} ms; a check every 10 steps (mean) adds "
              f"{per_step * 1e3:.2f} ms a step = {100 * per_step / step_s:.2f}% of a step; within a 1% budget "
              f"the pacer checks every {max(10, int(np.ceil(c / (0.01 * step_s - add_s))))} steps")
    if args.in_loop:
        spent, loop, checks, med = in_loop(args.in_loop)
        print(f"in the loop, {args.in_loop} steps of the default preset, a check every 10: the guard spent "
              f"{spent * 1e3:.0f} ms ({checks} checks and {args.in_loop} adds) against {loop:.2f} s of steps "
              f"(median step {med * 1e3:.1f} ms) = {100 * spent / loop:.2f}% of the training time")
    if args.per_rule:
        print("\n| rule | median |\n|---|---|")
        for rid, t in per_rule(last, max(args.repeats, 15)):
            print(f"| {rid} | {t * 1e3:.2f} ms |")
    if args.replay:
        print("\n| sample run | checks | one check (median) | largest |\n|---|---|---|---|")
        for folder in sorted(p for p in (ROOT / "sample_runs").iterdir() if p.is_dir()):
            t = replay(folder)
            print(f"| {folder.name} | {len(t)} | {statistics.median(t) * 1e3:.1f} ms | {max(t) * 1e3:.1f} ms |",
                  flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
