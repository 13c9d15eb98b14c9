"""What a Chinese page may keep in English, and a finder of the English it should not keep (the browser tests' and
the catalog tests' shared check)."""

from __future__ import annotations

import re

# English the Chinese pages keep: the field's terms the notes write in English (grpo-notes.zh.txt), tool and
# format names, the language switch's own names. Ids (metric keys, rule ids, config keys, run keys: a '/', '_'
# or '.' inside) and the runs' names are left out before the check.
NOTES_TERMS = {
    "reward", "rewards", "advantage", "advantages", "ratio", "group", "groups", "rollout", "rollouts", "verifier",
    "old", "log-prob", "log-probs", "clip", "fraction", "clipfrac", "entropy", "epoch", "epochs", "kl", "loss",
    "policy", "eval", "prompt", "prompts", "completion", "completions", "token", "tokens", "batch", "std", "mean",
    "pass", "rate", "lr", "grpo", "ppo", "optimizer", "step", "minibatch", "warm-up", "nats", "mann-kendall",
    "theil-sen", "ci", "bf16", "fp16", "fp32", "vllm", "verl", "trl", "openrlhf", "mode", "collapse", "on-policy",
    "sequence-level", "stale", "staleness", "grad", "norm", "ema", "markdown", "html", "language", "english", "utc",
    "estimator", "beta", "actor", "trainer", "reference", "autocast", "cuda", "low", "high", "tau", "nan", "inf",
    "clip-higher", "max", "min", "hacking", "scale", "mask", "sign", "detached", "curriculum", "adapter",
    "checkpoint", "base", "model", "raw", "engine", "objective", "response", "responses", "sequence",
    "zero-variance", "eps",
    # methods by their names (as grpo and ppo), and the notes' baseline
    "gspo", "dapo", "rloo", "dr", "baseline",
}


def english_left(text: str, names: set[str]) -> list[str]:
    """The English words of `text` that are no id, no run name and no term the notes keep in English."""
    out = []
    for w in re.findall(r"(?<![A-Za-z0-9_./])[A-Za-z][A-Za-z0-9_./'\-]*", text):
        w = w.strip(".'-")
        if not w or re.search(r"[/_.\d]", w) or w in names or len(w) == 1:
            continue  # an id, a name, a hash or a number, a variable (G, p)
        if w.lower() not in NOTES_TERMS and not all(p.lower() in NOTES_TERMS for p in w.split("-")):
            out.append(w)
    return out
