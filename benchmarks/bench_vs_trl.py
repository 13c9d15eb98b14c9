"""Our trainer against TRL's GRPOTrainer, side by side on the same locally built tiny Qwen2, on CPU.

    python benchmarks/bench_vs_trl.py [--steps 30] [--repeats 3] [--threads 1] [--device cpu]

Both train the same random 2-layer Qwen2 (width 32, a 300-token BPE tokenizer learnt here: nothing is
downloaded) on "a+b=" prompts: 16 completions of 8 tokens per optimizer step (2 prompts x G = 8), AdamW,
with 1 and 2 iterations per generation (TRL num_iterations, our algo.epochs) and the KL term on (beta
0.04) and off; both recompute activations in the backward (gradient checkpointing, each side's default). Runs are interleaved (ours, TRL, ours, TRL ...) so that a noisy shared machine hurts both
alike. A run's rate is its steady steps/s: steps between the end of step 5 and the last step over the
time between them (TRL: on_step_end of a callback; ours: the wall_time of the logged rows, so both
include logging). Printed: the median rate of each side per row, their ratio, and our floor: the
median time of one generation, one forward+backward and one AdamW step measured alone on the same batch
before each pair of runs (median over the row's repeats; per step, a generation serves `iterations`
steps). Then the same ratio from a profile of our own runs: each run's step time over the time its
steps spent in those parts (sampling loop, the update's forward with gradients, backward, AdamW step),
so that both sides of the ratio carry the same load; and over those parts plus the no-grad log-prob
passes (the reference forward the KL rows need once per generation, which TRL does too).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("WANDB_MODE", "disabled")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "fixtures"))  # tiny_hf.py: the project's tiny HF builder

import torch

PROMPTS, G, TOKENS, SKIP = 2, 8, 8, 5
ROWS = [(1, 0.04), (1, 0.0), (2, 0.04), (2, 0.0)]  # (iterations per generation, KL coefficient)


@contextlib.contextmanager
def floor_parts_timed(device: str):
    """Time, inside our own run, the calls the floor is made of: the sampling loop, the update's forward
    (token_logprobs with gradients on; the no-grad reference pass is left out), loss.backward() and the
    optimizer step; and, tagged apart, the no-grad log-prob passes (the reference forward of the KL rows).
    Yields a list of (tag, end wall time, seconds): under a shared machine's load these parts and the
    step they sit in are slowed alike, which a floor timed apart cannot promise."""
    import grpo_core.rollout as rollout_mod
    import grpo_core.train as train_mod

    spans: list[tuple[str, float, float]] = []

    def timed(fn, tag=lambda *a, **k: "floor"):
        def wrapper(*a, **k):
            t0 = time.perf_counter()
            result = fn(*a, **k)
            if device.startswith("cuda"):
                torch.cuda.synchronize()
            spans.append((tag(*a, **k), time.time(), time.perf_counter() - t0))
            return result
        return wrapper

    saved = [(rollout_mod, "sample"), (train_mod, "token_logprobs"), (torch.Tensor, "backward"),
             (torch.optim.AdamW, "step")]
    originals = [getattr(obj, name) for obj, name in saved]
    rollout_mod.sample = timed(rollout_mod.sample)
    train_mod.token_logprobs = timed(train_mod.token_logprobs,
                                     lambda *a, **k: "floor" if torch.is_grad_enabled() else "no-grad pass")
    torch.Tensor.backward = timed(torch.Tensor.backward)
    torch.optim.AdamW.step = timed(torch.optim.AdamW.step)
    try:
        yield spans
    finally:
        for (obj, name), fn in zip(saved, originals):
            setattr(obj, name, fn)


def ours(model: str, out: Path, steps: int, iterations: int, beta: float, device: str,
         parts: list | None = None) -> float:
    """Our steady steps/s; parts, when given, receives the in-run floor as {tag: ms per step}."""
    from collectors import load_run
    from grpo_core.config import build_config
    from grpo_core.train import train

    kl = [("algo.kl_mode", "loss"), ("algo.kl_coef", str(beta))] if beta else [
        ("algo.kl_mode", "none"), ("log.track_kl_ref", "false")]  # no reference model at all, as TRL at beta 0
    cfg = build_config(overrides=[
        ("model.kind", "hf"), ("model.hf_path", model), ("model.device", device), ("warm_start.enabled", "false"),
        ("out", str(out)), ("steps", str(steps)), ("eval_every", "0"), ("log.progress", "false"),
        ("rollout.prompts_per_step", str(PROMPTS)), ("rollout.group_size", str(G)),
        ("rollout.max_new_tokens", str(TOKENS)), ("algo.epochs", str(iterations)), ("optim.lr", "1e-3"),
        ("model.autocast_bf16", str(device.startswith("cuda")).lower()), *kl])
    with floor_parts_timed(device) as spans:
        train(cfg)
    wall = load_run(out).metrics["wall_time"].to_numpy()
    if parts is not None:
        inside = {"floor": 0.0, "no-grad pass": 0.0}
        for tag, end, sec in spans:
            if wall[SKIP] < end <= wall[-1]:
                inside[tag] += 1000 * sec / (len(wall) - 1 - SKIP)
        parts.append(inside)
    return (len(wall) - 1 - SKIP) / (wall[-1] - wall[SKIP])


def trl_run(model: str, out: Path, steps: int, iterations: int, beta: float, device: str) -> float:
    from datasets import Dataset
    from transformers import TrainerCallback
    from trl import GRPOConfig, GRPOTrainer

    ends: list[float] = []

    class StepEnds(TrainerCallback):
        def on_step_end(self, args, state, control, **kwargs):
            ends.append(time.perf_counter())

    prompts = [f"{a}+{b}=" for a in range(10) for b in range(10)]
    args = GRPOConfig(output_dir=str(out), max_steps=steps, per_device_train_batch_size=PROMPTS * G,
                      num_generations=G, max_completion_length=TOKENS, num_iterations=iterations, beta=beta,
                      learning_rate=1e-3, logging_steps=1, report_to=[], use_cpu=device == "cpu", save_strategy="no",
                      bf16=device.startswith("cuda"),
                      disable_tqdm=True, seed=0)
    trainer = GRPOTrainer(model=model, args=args, callbacks=[StepEnds()],
                          reward_funcs=lambda completions, answer, **kw: [float(c.strip() == a)
                                                                         for c, a in zip(completions, answer)],
                          train_dataset=Dataset.from_dict({"prompt": prompts,
                                                           "answer": [str(eval(p[:-1])) for p in prompts]}))
    trainer.train()
    return (len(ends) - 1 - SKIP) / (ends[-1] - ends[SKIP])


def floor_ms(model: str, device: str) -> dict[str, float]:
    """Our own parts alone, on one batch: KV-cache generation, one forward+backward, one AdamW step."""
    from grpo_core.hf import load_hf
    from grpo_core.policy import sample, token_logprobs
    from grpo_core.rollout import left_pad

    net, tok, _ = load_hf(model, gradient_checkpointing=True)  # as in the runs (model.gradient_checkpointing)
    net = net.to(device).eval()
    ids, mask = left_pad([tok.encode(f"{i}+{i}=") for i in range(PROMPTS) for _ in range(G)], tok.pad_id, device)
    opt = torch.optim.AdamW(net.parameters(), lr=1e-3)
    s = sample(net, ids, mask, TOKENS, tok.eos_id, tok.pad_id, generator=torch.Generator().manual_seed(0))
    full, fmask = torch.cat([ids, s.tokens], 1), torch.cat([mask, s.mask], 1)

    def fwd_bwd():
        opt.zero_grad(set_to_none=True)
        token_logprobs(net, full, fmask, s.tokens.shape[1], with_entropy=True)[0].sum().backward()

    def timed(fn, n=30):
        times = []
        for _ in range(n):
            t0 = time.perf_counter()
            fn()
            if device.startswith("cuda"):
                torch.cuda.synchronize()  # time the kernels, not their launch
            times.append(time.perf_counter() - t0)
        return 1000 * statistics.median(times)

    @torch.no_grad()
    def ref_fwd():
        token_logprobs(net, full, fmask, s.tokens.shape[1])

    fwd_bwd()
    parts = {"generation": timed(lambda: sample(net, ids, mask, TOKENS, tok.eos_id, tok.pad_id)),
             "forward+backward": timed(fwd_bwd), "adamw": timed(opt.step)}
    parts["floor"] = sum(parts.values())
    parts["reference forward"] = timed(ref_fwd)  # not in the floor: the KL rows need it, on both sides
    return parts


def compare(steps: int, repeats: int, device: str) -> list[dict]:
    """Print and return one row of figures per (iterations, beta), runs interleaved."""
    import trl
    from tiny_hf import save_tiny_model

    out = []
    with tempfile.TemporaryDirectory() as tmp:
        model = save_tiny_model(Path(tmp) / "model", "qwen2", max_positions=128)
        print(f"torch {torch.__version__}, trl {trl.__version__}, device {device}, threads {torch.get_num_threads()}; "
              f"{PROMPTS} prompts x G={G}, {TOKENS} new tokens, {steps} steps per run, {repeats} runs per side")
        print(f"{'iterations':>10} {'beta':>5} | {'ours steps/s':>12} {'TRL steps/s':>11} {'ours/TRL':>8} | "
              f"{'ours ms/step':>12} {'x floor':>7} {'x own parts':>11} {'x own parts+ref':>15} | "
              "floor parts timed apart (median ms)")
        for iterations, beta in ROWS:
            rates: dict[str, list[float]] = {"ours": [], "trl": []}
            floors: list[dict] = []
            in_run: list[dict] = []  # ms per step in the floor's parts, timed inside each of our runs
            for r in range(repeats):
                # the floor too is measured between the runs: on a shared machine the load of the moment
                # moves it as much as it moves the runs
                floors.append(floor_ms(model, device))
                rates["ours"].append(ours(model, Path(tmp) / f"ours-{iterations}-{beta}-{r}", steps, iterations,
                                          beta, device, parts=in_run))
                rates["trl"].append(trl_run(model, Path(tmp) / f"trl-{iterations}-{beta}-{r}", steps, iterations,
                                            beta, device))
            mine, theirs = statistics.median(rates["ours"]), statistics.median(rates["trl"])
            # each run's step time over its own floor parts (+ its no-grad passes), then the median of the ratios
            own = statistics.median(1000 / rate / p["floor"] for rate, p in zip(rates["ours"], in_run))
            own_ref = statistics.median(1000 / rate / (p["floor"] + p["no-grad pass"])
                                        for rate, p in zip(rates["ours"], in_run))
            floor = {k: statistics.median(f[k] for f in floors) for k in floors[0]}
            # with 2 iterations one generation serves two steps: the floor per step is half a generation
            per_step_floor = floor["generation"] / iterations + floor["forward+backward"] + floor["adamw"]
            row = {"iterations": iterations, "beta": beta, "ours": mine, "trl": theirs, "ratio": mine / theirs,
                   "ours_ms": 1000 / mine, "x_floor": 1000 / mine / per_step_floor,
                   "x_own_parts": own, "x_own_parts_ref": own_ref}
            print(f"{iterations:>10} {beta:>5} | {mine:>12.1f} {theirs:>11.1f} {row['ratio']:>8.2f} | "
                  f"{row['ours_ms']:>12.1f} {row['x_floor']:>7.2f} {own:>11.2f} {own_ref:>15.2f} | "
                  + ", ".join(f"{k} {v:.1f}" for k, v in floor.items()), flush=True)
            out.append({**row, "floor": floor})
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--steps", type=int, default=30)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--device", default="cpu")
    a = p.parse_args()
    torch.set_num_threads(a.threads)
    compare(a.steps, a.repeats, a.device)


if __name__ == "__main__":
    main()
