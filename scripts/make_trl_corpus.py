"""Make tests/fixtures/trl_corpus/: runs of TRL's real GRPOTrainer on CPU, a healthy one and each failure of the
notes' section 7 that TRL can express, with a manifest of the diagnosis rules each must (or may) raise.

    python scripts/make_trl_corpus.py [--out tests/fixtures/trl_corpus] [--only NAME ...]   (make trl-corpus)

The policy is the project's tiny random Qwen2 (tests/fixtures/tiny_hf.py: 2 layers, hidden 32, a 300-token
BPE learnt here), first trained with supervised steps on `a+b=c<eos>` until its sampled pass rate reaches the
spec's target (an SFT before GRPO: without it a random model never emits EOS and never answers), then
GRPOTrainer on `a+b=` prompts with a verifier as reward. Each run keeps what TRL wrote that the readers use and nothing heavy:
trainer_state.json and training_args.bin from its last checkpoint, and the completions parquet files of
every KEEP_COMPLETIONS-th logged step. Model weights, optimizer state and the rest are deleted.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

os.environ.setdefault("WANDB_MODE", "disabled")
ROOT = Path(__file__).resolve().parents[1]
KEEP_COMPLETIONS = 5  # keep the completions of one logged step in five (and the last ones): enough to read
KEEP_FILES = ("trainer_state.json", "training_args.bin")


def answer(prompt: str) -> str:
    return str(sum(int(x) for x in prompt.rstrip("=").split("+")))


def exact_sum(completions, prompts, **kwargs):
    """The task's verifier: 1 when the completion is the sum, else 0."""
    return [float(c.strip() == answer(p)) for c, p in zip(completions, prompts, strict=True)]


def padded_exact(completions, prompts, **kwargs):
    """A broken verifier: compares with ' ' + answer after stripping the completion, so nothing ever passes."""
    return [float(c.strip() == " " + answer(p)) for c, p in zip(completions, prompts, strict=True)]


def length_bonus(completions, prompts, **kwargs):
    """A reward that pays for length: the answer as a prefix earns 1, plus 0.5 per extra character (up to 4)."""
    out = []
    for c, p in zip(completions, prompts, strict=True):
        c, a = c.strip(), answer(p)
        out.append(1.0 + 0.5 * min(len(c) - len(a), 4) if c.startswith(a) else 0.0)
    return out


REWARDS = {f.__name__: f for f in (exact_sum, padded_exact, length_bonus)}


@dataclass(frozen=True)
class Spec:
    name: str
    description: str  # the mechanism
    symptom: str  # what the log shows
    reward: str = "exact_sum"
    args: dict[str, Any] = field(default_factory=dict)  # GRPOConfig overrides
    warm: float = 0.4  # supervised warm start until this sampled pass rate (on 1-digit sums)
    digits: int = 1  # operands of the training prompts have this many digits
    # from the mechanism (the reward, the config), never from what the diagnosis says: expected rules must fire
    # at warning or above and are the only ones that may be critical; allowed: rule id -> its highest severity
    expected_rules: tuple[str, ...] = ()
    allowed_rules: dict[str, str] = field(default_factory=dict)


BASE = {"max_steps": 100, "num_generations": 8, "per_device_train_batch_size": 32, "max_completion_length": 8,
            "learning_rate": 1e-3, "beta": 0.04, "logging_steps": 1, "temperature": 1.0, "seed": 0}
# Reward exactly 0 on every response (nothing passes): no spread, every group all-fail, no update from the reward
NOTHING_PASSES = ("reward_flat", "reward_constant", "zero_variance_groups")
# What a collapsed policy (lr 50x) shows besides the KL jump: a consequence, at most a warning
BROKEN_POLICY = dict.fromkeys(("entropy_collapse", "no_learning", "reward_flat", "zero_variance_groups",
                               "low_diversity", "length_drift", "truncation", "sparse_reward", "reward_constant"),
                              "warning")

SPECS = [
    Spec("healthy_g8", "exact-sum reward after a warm start to 40% pass, G=8, lr 1e-3, beta 0.04, every step logged",
         "reward rises, KL small, entropy falls slowly"),
    Spec("healthy_g4_seed1", "as healthy_g8 with G=4 (8 prompts per step) and seed 1", "reward rises",
         args={"num_generations": 4, "seed": 1}),
    Spec("healthy_g16_seed2", "as healthy_g8 with G=16 (2 prompts per step) and seed 2", "reward rises",
         args={"num_generations": 16, "seed": 2}),
    Spec("healthy_log5", "as healthy_g8, 200 steps logged every 5 (TRL averages the 5 steps of a log), seed 3",
         "reward rises, 40 logged points", args={"max_steps": 200, "logging_steps": 5, "seed": 3}),
    Spec("healthy_log10", "as healthy_g8, 200 steps logged every 10, seed 4", "reward rises, 20 logged points",
         args={"max_steps": 200, "logging_steps": 10, "seed": 4}),
    Spec("broken_verifier", "the verifier compares with ' ' + answer after stripping: nothing ever passes",
         "reward 0 on every step, every group zero-variance, no update", reward="padded_exact",
         expected_rules=(*NOTHING_PASSES, "verifier_suspect"),
         allowed_rules={"sparse_reward": "warning", "no_learning": "warning"}),
    Spec("broken_verifier_log10", "as broken_verifier, 200 steps logged every 10",
         "reward 0 on every logged step", reward="padded_exact", args={"max_steps": 200, "logging_steps": 10},
         expected_rules=(*NOTHING_PASSES, "verifier_suspect"),
         allowed_rules={"sparse_reward": "warning", "no_learning": "warning"}),
    Spec("too_hard", "2-digit sums for a policy warm-started on 1-digit sums: every group all-fail",
         "reward about 0, zero-variance groups about 1", digits=2, args={"seed": 1},
         expected_rules=NOTHING_PASSES, allowed_rules={"sparse_reward": "warning", "no_learning": "warning"}),
    Spec("too_easy", "warm start continued to 99% pass: nearly every group all-pass",
         "reward near 1, zero-variance groups high", warm=0.99,
         expected_rules=("zero_variance_groups",),  # a reward at its ceiling; a policy trained to 99% is sharp
         allowed_rules=dict.fromkeys(("reward_flat", "sparse_reward", "no_learning", "low_diversity"), "warning")),
    Spec("lr_too_high", "learning rate 0.05, 50x healthy", "KL to the reference jumps and stays high",
         args={"learning_rate": 0.05},
         expected_rules=("kl_clip_explode",), allowed_rules=BROKEN_POLICY),
    Spec("lr_too_high_log5", "as lr_too_high, 200 steps logged every 5", "KL jumps between two logs and stays",
         args={"learning_rate": 0.05, "max_steps": 200, "logging_steps": 5},
         expected_rules=("kl_clip_explode",), allowed_rules=BROKEN_POLICY),
    Spec("low_temperature", "sampling temperature 0.1: a group's responses are nearly identical",
         "entropy near 0, zero-variance groups high", args={"temperature": 0.1},
         # near-identical responses: most groups zero-variance. TRL divides the logits by the temperature in the
         # loss too: a 10x sharper update drifts the policy (a side effect, at most a warning); entropy is low from
         # the first step, so a fall from an early level is not this run's mechanism
         expected_rules=("low_diversity", "zero_variance_groups"),
         allowed_rules={"reward_flat": "warning", "sparse_reward": "warning", "no_learning": "warning",
                        "kl_clip_explode": "warning", "entropy_collapse": "info"}),
    Spec("small_group", "G = 2 (16 prompts per step): one response decides each group", "advantages +-1 or 0",
         args={"num_generations": 2},
         # TRL's default scale_rewards="group" divides by the std of 2 rewards
         expected_rules=("small_group", "config_small_group_adv"), allowed_rules={"zero_variance_groups": "warning"}),
    Spec("length_reward", "a reward that pays 0.5 per character after the answer (up to 4), no KL, lr 2e-3",
         "completion length and reward grow", reward="length_bonus",
         args={"beta": 0.0, "learning_rate": 2e-3, "max_steps": 200},
         # completions grow to the 8-token cap; no KL term, the policy sharpens on the long answers
         expected_rules=("length_drift",),
         allowed_rules={"truncation": "warning", "zero_variance_groups": "warning", "entropy_collapse": "warning"}),
    Spec("many_reuses", "num_iterations 8: each rollout is reused for 8 optimizer steps",
         "clip fraction is non-zero after the first step of each rollout", args={"num_iterations": 8},
         # each rollout's later reuses clip (the PPO clip bounding the stale update, back to 0 at each new
         # rollout) while the KL to the reference stays small: the reuse count is the finding, no explosion
         expected_rules=("config_many_reuses",),
         allowed_rules=dict.fromkeys(("kl_clip_explode", "entropy_collapse", "reward_flat", "no_learning",
                                      "zero_variance_groups"), "warning")),
]


def problems(digits: int) -> list[tuple[str, str]]:
    lo, hi = (0, 10) if digits == 1 else (10, 100)
    return [(f"{a}+{b}=", str(a + b)) for a in range(lo, hi) for b in range(lo, hi)]


def _sft_batch(tok, rows, rng, n: int = 64):
    """Prompt + answer + EOS token ids, loss on the answer and EOS only; right-padded."""
    import torch

    seqs = []
    for p, a in rng.choices(rows, k=n):
        pi, ai = tok(p)["input_ids"], tok(a)["input_ids"] + [tok.eos_token_id]
        seqs.append((pi + ai, [-100] * len(pi) + ai))
    width = max(len(s) for s, _ in seqs)
    pad = [(width - len(s)) for s, _ in seqs]
    ids = torch.tensor([s + [tok.pad_token_id] * k for (s, _), k in zip(seqs, pad, strict=True)])
    labels = torch.tensor([y + [-100] * k for (_, y), k in zip(seqs, pad, strict=True)])
    mask = torch.tensor([[1] * (width - k) + [0] * k for k in pad])
    return ids, labels, mask


def _sampled_pass_rate(model, tok, rows, rng, n: int = 256) -> float:
    import torch

    batch = rng.choices(rows, k=n)
    tok.padding_side = "left"
    enc = tok([p for p, _ in batch], return_tensors="pt", padding=True)
    model.eval()
    with torch.no_grad():
        out = model.generate(**enc, do_sample=True, max_new_tokens=8, temperature=1.0, top_k=0,
                             pad_token_id=tok.pad_token_id)
    model.train()
    texts = tok.batch_decode(out[:, enc["input_ids"].shape[1]:], skip_special_tokens=True)
    return sum(t.strip() == a for t, (_, a) in zip(texts, batch, strict=True)) / n


def warm_start(model_dir: str, target: float, dest: Path) -> tuple[str, int, float]:
    """Supervised steps on 1-digit sums until the sampled pass rate reaches `target`, like an SFT before GRPO.
    Returns (folder, steps, pass rate)."""
    import random

    import torch
    import transformers

    torch.manual_seed(0)  # the pass-rate checks sample: the same warm start whatever ran before
    tok = transformers.AutoTokenizer.from_pretrained(model_dir)
    model = transformers.AutoModelForCausalLM.from_pretrained(model_dir)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3)
    rng, rows = random.Random(0), problems(1)
    step, rate = 0, 0.0
    while rate < target and step < 2000:
        for _ in range(25):
            ids, labels, mask = _sft_batch(tok, rows, rng)
            model(input_ids=ids, attention_mask=mask, labels=labels).loss.backward()
            opt.step()
            opt.zero_grad()
        step += 25
        rate = _sampled_pass_rate(model, tok, rows, rng)
    tok.padding_side = "left"
    model.save_pretrained(dest)
    tok.save_pretrained(dest)
    return str(dest), step, rate


def run_one(spec: Spec, model_dir: str, work: Path) -> Path:
    """Train one spec into work/<name>; return TRL's output folder."""
    from datasets import Dataset
    from trl import GRPOConfig, GRPOTrainer

    args = {**BASE, **spec.args}
    out = work / spec.name
    cfg = GRPOConfig(output_dir=str(out), save_strategy="steps", save_steps=args["max_steps"], save_only_model=True,
                     log_completions=True, num_completions_to_print=0, report_to=[], use_cpu=True,
                     disable_tqdm=True, **args)
    train = Dataset.from_dict({"prompt": [p for p, _ in problems(spec.digits)]})
    trainer = GRPOTrainer(model=model_dir, reward_funcs=REWARDS[spec.reward], args=cfg, train_dataset=train)
    trainer.train()
    return out


def keep_small(trl_out: Path, dest: Path) -> None:
    """Copy into dest what the readers use: the last checkpoint's state and args, some completions."""
    shutil.rmtree(dest, ignore_errors=True)
    ckpt = max(trl_out.glob("checkpoint-*"), key=lambda p: int(p.name.split("-")[1]))
    (dest / ckpt.name).mkdir(parents=True)
    for f in KEEP_FILES:
        shutil.copy2(ckpt / f, dest / ckpt.name / f)
    files = sorted((trl_out / "completions").glob("completions_*.parquet"))
    keep = set(files[::KEEP_COMPLETIONS]) | set(files[-3:])
    (dest / "completions").mkdir()
    for f in sorted(keep):
        shutil.copy2(f, dest / "completions" / f.name)


def manifest_entry(spec: Spec) -> dict:
    return {"path": spec.name, "symptom": spec.symptom, "expected_rules": list(spec.expected_rules),
            "allowed_rules": dict(spec.allowed_rules), "description": spec.description,
            "command": f"python scripts/make_trl_corpus.py --only {spec.name}",
            "reward": spec.reward, "warm_start_pass_rate": spec.warm, "digits": spec.digits,
            "grpo_config": {**BASE, **spec.args}}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", default=str(ROOT / "tests" / "fixtures" / "trl_corpus"))
    p.add_argument("--only", nargs="*", default=None)
    a = p.parse_args(argv)
    import torch

    sys.path.insert(0, str(ROOT / "tests" / "fixtures"))
    from tiny_hf import save_tiny_model

    torch.set_num_threads(1)
    out = Path(a.out)
    specs = [s for s in SPECS if a.only is None or s.name in a.only]
    t_all = time.perf_counter()
    warm: dict[float, tuple[str, int, float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        model_dir = save_tiny_model(Path(tmp) / "model", "qwen2", max_positions=128)
        for spec in specs:
            t0 = time.perf_counter()
            if spec.warm not in warm:
                warm[spec.warm] = warm_start(model_dir, spec.warm, Path(tmp) / f"warm-{spec.warm}")
                print(f"warm start to {spec.warm}: {warm[spec.warm][1]} steps, sampled pass rate "
                      f"{warm[spec.warm][2]:.2f}", flush=True)
            keep_small(run_one(spec, warm[spec.warm][0], Path(tmp) / "runs"), out / spec.name)
            print(f"{spec.name:22s} {time.perf_counter() - t0:6.1f} s", flush=True)
    path = out / "manifest.json"
    manifest = json.loads(path.read_text()) if path.exists() else {"schema": 1, "runs": {}}
    manifest["runs"].update({s.name: manifest_entry(s) for s in specs})
    manifest["runs"] = {s.name: manifest["runs"][s.name] for s in SPECS if s.name in manifest["runs"]}
    path.write_text(json.dumps(manifest, indent=1) + "\n")
    print(f"{len(specs)} runs in {time.perf_counter() - t_all:.1f} s -> {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
