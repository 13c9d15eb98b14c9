"""Regenerate every sample_runs/<scenario>/ from scratch (fixed seeds, CPU) and sample_runs/manifest.json.

    python scripts/make_sample_runs.py [--out sample_runs] [--only NAME ...] [--steps N]

Each run folder is deleted and rewritten by the real trainer. Samples are kept for every
SAMPLE_EVERY-th step only, so all of sample_runs/ stays a few MB. Prints the time each run took.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

import torch

from grpo_core.config import build_config
from grpo_core.scenarios import SCENARIOS, overrides_for

SAMPLE_EVERY = 10  # sample rows of one rollout in ten: enough to read, small enough for git


def build(name: str, out: Path, cache: str, steps: int | None):
    preset, sets = overrides_for(name)
    sets = sets + [("out", str(out / name)), ("name", name), ("seed", 0), ("model.device", "cpu"),
                   ("log.progress", False), ("warm_start.cache_dir", cache)]
    if steps:
        sets.append(("steps", steps))
    return build_config(preset, overrides=sets)


def thin_samples(run_dir: Path) -> None:
    """Keep only rows of steps divisible by SAMPLE_EVERY; rewrites the samples parts in place."""
    import pandas as pd

    for part in sorted((run_dir / "samples").glob("*.parquet")):
        df = pd.read_parquet(part)
        df = df[df["step"] % SAMPLE_EVERY == 0]
        if df.empty:
            part.unlink()
        else:
            df.to_parquet(part, index=False)


# (column, label) pairs of the measured signature printed per run (and quoted in sample_runs/README.md)
TENTHS = (("reward/pass_rate", "pass rate"), ("reward/mean", "reward"), ("eval/pass_rate", "eval"),
          ("groups/zero_std_frac", "zero_std"), ("policy/entropy", "entropy"), ("completions/len_mean", "len"))
MAXIMA = (("policy/kl_ref", "kl_ref max"), ("policy/clipfrac", "clipfrac max"),
          ("policy/ratio_first_step_max_dev", "first-step max dev"))


def signature(run_dir: Path) -> str:
    """'pass rate 0.4 -> 0.6; ...': mean of the first and last tenth of the logged values, and a few maxima."""
    from collectors import load_run

    m = load_run(run_dir).metrics
    parts = []
    for col, label in TENTHS:
        x = m[col].dropna() if col in m else []
        if len(x):
            k = max(1, len(x) // 10)
            parts.append(f"{label} {x.iloc[:k].mean():.3g} -> {x.iloc[-k:].mean():.3g}")
    parts += [f"{label} {m[col].max():.3g}" for col, label in MAXIMA if col in m]
    if "optim/grad_norm" in m:
        parts.append(f"grad norm median {m['optim/grad_norm'].median():.3g}")
    return "; ".join(parts)


def manifest_entry(name: str, steps: int | None) -> dict:
    s = SCENARIOS[name]
    cmd = f"grpo-train --scenario {name} --out sample_runs/{name} --model.device cpu"
    return {"path": name, "symptom": s.symptom, "expected_rules": list(s.expected_rules),
            "allowed_rules": dict(s.allowed_rules), "description": s.description,
            "command": cmd + (f" --steps {steps}" if steps else "")}


def main(argv=None) -> int:
    from grpo_core.train import train

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", default="sample_runs")
    p.add_argument("--only", nargs="*", default=None, help="scenario names (default: all)")
    p.add_argument("--steps", type=int, default=None, help="override every scenario's step count")
    args = p.parse_args(argv)
    torch.set_num_threads(1)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    names = args.only or SCENARIOS.names()
    t_all = time.perf_counter()
    with tempfile.TemporaryDirectory() as cache:  # from scratch: no warm start reused from earlier runs
        for name in names:
            t0 = time.perf_counter()
            shutil.rmtree(out / name, ignore_errors=True)
            result = train(build(name, out, cache, args.steps))
            thin_samples(result.run_dir)
            s = result.info.get("summary", {})
            print(f"{name:20s} {result.status} {result.steps} steps in {time.perf_counter() - t0:6.1f} s  "
                  f"pass rate {s.get('pass_rate_first', float('nan')):.3f} -> {s.get('pass_rate_last', float('nan')):.3f}",
                  flush=True)
            print(f"    measured (first -> last tenth): {signature(result.run_dir)}", flush=True)
    manifest_path = out / "manifest.json"
    manifest = json.loads(manifest_path.read_text()) if manifest_path.exists() else {"schema": 1, "runs": {}}
    for name in names:
        manifest["runs"][name] = manifest_entry(name, args.steps)
    manifest_path.write_text(json.dumps(manifest, indent=1) + "\n")
    print(f"all {len(names)} runs in {time.perf_counter() - t_all:.1f} s -> {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
