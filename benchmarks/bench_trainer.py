"""Trainer figures: the default preset for a fixed number of steps.

    python benchmarks/bench_trainer.py [--steps 100] [--device cpu|cuda|auto] [--set key=value ...]

Prints steps/s and generated tokens/s (medians over steps, from the run's own perf/* metrics and samples),
the wall time of the loop, and peak memory (process RSS on CPU; torch's peak allocation on CUDA). The
warm start is cached, so the first call pays it once and later calls measure the loop only; its time
is printed separately.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import tempfile
import time
from pathlib import Path

import torch

from collectors import load_run
from grpo_core.config import build_config
from grpo_core.train import train


def measure(overrides: list[tuple[str, str]], label: str) -> dict:
    """Train once with these overrides in a temporary folder; return the figures as a dict."""
    with tempfile.TemporaryDirectory() as tmp:
        cfg = build_config(overrides=[("out", str(Path(tmp) / "run")), ("log.progress", "false"), *overrides])
        if torch.cuda.is_available():
            torch.cuda.reset_peak_memory_stats()
        t0 = time.perf_counter()
        result = train(cfg)
        wall = time.perf_counter() - t0
        run = load_run(result.run_dir)
        m, s = run.metrics, run.samples()
        step_s = m["perf/step_s"].dropna()
        tokens = s.groupby("step")["num_tokens"].sum()
        per_step_tps = (tokens / m.set_index("step")["perf/step_s"].reindex(tokens.index)).dropna()
        on_cuda = result.info["device"].startswith("cuda")
        peak = (torch.cuda.max_memory_allocated() / 2**20 if on_cuda
                else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
        return {"label": label, "device": result.info["device"], "policy": result.info["policy"],
                "steps": result.steps, "wall_s": wall, "loop_s": float(step_s.sum()),
                "steps_per_s": 1 / statistics.median(step_s), "gen_tokens_per_s": statistics.median(per_step_tps),
                "sampling_tokens_per_s": float(m["perf/tokens_per_s"].median()),
                "peak_mib": peak, "peak_kind": "cuda allocated" if on_cuda else "process RSS",
                "warm_start_cached": bool(result.info["warm_start"].get("cached", False)),
                "pass_rate_first_last": (result.info["summary"].get("pass_rate_first"),
                                         result.info["summary"].get("pass_rate_last"))}


def show(f: dict) -> None:
    first, last = f["pass_rate_first_last"]
    print(f"[{f['label']}] {f['policy']} on {f['device']}: {f['steps']} steps, wall {f['wall_s']:.1f} s "
          f"(loop {f['loop_s']:.1f} s, warm start cached={f['warm_start_cached']})")
    print(f"  median steps/s {f['steps_per_s']:.2f} | generated tokens/s per step (sample+train) "
          f"{f['gen_tokens_per_s']:.0f} | sampling-only tokens/s {f['sampling_tokens_per_s']:.0f}")
    print(f"  peak memory {f['peak_mib']:.0f} MiB ({f['peak_kind']}) | pass rate first/last "
          f"{first:.3f} -> {last:.3f}")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--steps", type=int, default=100)
    p.add_argument("--device", default="auto")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")
    a = p.parse_args()
    sets = [tuple(kv.split("=", 1)) for kv in a.set]
    devices = ["cpu", "cuda"] if a.device == "auto" and torch.cuda.is_available() else [
        "cpu" if a.device == "auto" else a.device]
    for dev in devices:
        show(measure([("steps", str(a.steps)), ("model.device", dev), *sets], f"default preset, {dev}"))


if __name__ == "__main__":
    main()
