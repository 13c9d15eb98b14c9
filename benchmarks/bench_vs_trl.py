"""Our trainer against TRL's GRPOTrainer, side by side on the same locally built tiny Qwen2, on CPU.

    python benchmarks/bench_vs_trl.py [--steps 30] [--repeats 3] [--threads 1] [--device cpu]

Both train the same random 2-layer Qwen2 (width 32, a 300-token BPE tokenizer learnt here: nothing is
downloaded) on "a+b=" prompts: 16 completions of 8 tokens per optimizer step (2 prompts x G = 8), AdamW,
with 1 and 2 iterations per generation (TRL num_iterations, our algo.epochs) and the KL term on (beta
0.04) and off. Runs are interleaved (ours, TRL, ours, TRL ...) so that a noisy shared machine hurts both
alike. A run's rate is its steady steps/s: steps between the end of step 5 and the last step over the
time between them (TRL: on_step_end of a callback; ours: the wall_time of the logged rows, so both
include logging). Printed: the median rate of each side per row, their ratio, and our floor: the
median time of one generation, one forward+backward and one AdamW step measured alone on the same batch.
"""

from __future__ import annotations

import argparse
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


def ours(model: str, out: Path, steps: int, iterations: int, beta: float, device: str) -> float:
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
    train(cfg)
    wall = load_run(out).metrics["wall_time"].to_numpy()
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

    net, tok, _ = load_hf(model)
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

    fwd_bwd()
    parts = {"generation": timed(lambda: sample(net, ids, mask, TOKENS, tok.eos_id, tok.pad_id)),
             "forward+backward": timed(fwd_bwd), "adamw": timed(opt.step)}
    parts["floor"] = sum(parts.values())
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
        floor = floor_ms(model, device)
        print("our floor (median ms): " + ", ".join(f"{k} {v:.1f}" for k, v in floor.items()))
        print(f"{'iterations':>10} {'beta':>5} | {'ours steps/s':>12} {'TRL steps/s':>11} {'ours/TRL':>8} | "
              f"{'ours ms/step':>12} {'x floor':>7}")
        for iterations, beta in ROWS:
            rates: dict[str, list[float]] = {"ours": [], "trl": []}
            for r in range(repeats):
                for side, fn in (("ours", ours), ("trl", trl_run)):
                    rates[side].append(fn(model, Path(tmp) / f"{side}-{iterations}-{beta}-{r}", steps,
                                          iterations, beta, device))
            mine, theirs = statistics.median(rates["ours"]), statistics.median(rates["trl"])
            # with 2 iterations one generation serves two steps: the floor per step is half a generation
            per_step_floor = floor["generation"] / iterations + floor["forward+backward"] + floor["adamw"]
            row = {"iterations": iterations, "beta": beta, "ours": mine, "trl": theirs, "ratio": mine / theirs,
                   "ours_ms": 1000 / mine, "x_floor": 1000 / mine / per_step_floor}
            print(f"{iterations:>10} {beta:>5} | {mine:>12.1f} {theirs:>11.1f} {row['ratio']:>8.2f} | "
                  f"{row['ours_ms']:>12.1f} {row['x_floor']:>7.2f}", flush=True)
            out.append(row)
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
