"""Sampling a group of responses per prompt and scoring them -> a Rollout of tensors.

The B = P x G sequences are group-major (row b belongs to prompt b // G) and are decoded together in
one batch with a KV cache. Texts go to the host once, for the verifier; everything else stays on device.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import torch

from grpo_core.policy import sample
from grpo_core.tasks import Problem, Task


@dataclass
class Rollout:
    """One scored batch. B = P * G responses, L = longest prompt, N = longest completion.

    ids [B, L + N] long: left-padded prompt, then the completion, right-padded.
    mask [B, L + N] bool: real tokens (prompt and completion up to and including its end token).
    completion_mask [B, N] bool: the completion part of mask; the only tokens the loss sees.
    rollout_logp [B, N] float32: log-probs the sampling pass assigned (rollout precision), 0 off mask.
    rewards [B] float32 raw verifier rewards; passed [B] bool; lengths [B] long; truncated [B] bool.
    problems: the P prompts; texts: the B decoded completions; host: the same rewards, passed, lengths
    and truncated as Python lists (they were born on the host), for the samples table.
    """

    ids: torch.Tensor
    mask: torch.Tensor
    completion_mask: torch.Tensor
    rollout_logp: torch.Tensor
    rewards: torch.Tensor
    passed: torch.Tensor
    lengths: torch.Tensor
    truncated: torch.Tensor
    problems: list[Problem]
    texts: list[str]
    group_size: int
    host: dict[str, list]
    sample_seconds: float = 0.0

    @property
    def n(self) -> int:
        return self.completion_mask.shape[1]


def left_pad(rows: list[list[int]], pad_id: int, device) -> tuple[torch.Tensor, torch.Tensor]:
    """Token lists -> ids [B, L] and mask [B, L] (bool), padded on the left so every row ends together."""
    width = max(len(r) for r in rows)
    ids = torch.full((len(rows), width), pad_id, dtype=torch.long)
    mask = torch.zeros((len(rows), width), dtype=torch.bool)
    for i, r in enumerate(rows):
        if r:
            ids[i, width - len(r):] = torch.tensor(r)
            mask[i, width - len(r):] = True
    return ids.to(device), mask.to(device)


def decode(tokenizer, tokens: torch.Tensor, mask: torch.Tensor) -> tuple[list[str], list[int], list[bool]]:
    """Completion tokens [B, N] and mask -> texts (end token dropped), lengths, whether each ended."""
    tokens, mask = tokens.cpu(), mask.cpu()  # the one host copy of the rollout: the verifier needs text
    texts, lengths, ended = [], [], []
    for row, m in zip(tokens.tolist(), mask.tolist()):
        kept = [t for t, keep in zip(row, m) if keep]
        has_end = bool(kept) and kept[-1] == tokenizer.eos_id
        texts.append(tokenizer.decode(kept[:-1] if has_end else kept))
        lengths.append(len(kept))
        ended.append(has_end)
    return texts, lengths, ended


def collect(net, tokenizer, task: Task, problems: list[Problem], group_size: int, rollout_cfg, device,
            generator: torch.Generator | None = None, greedy: bool = False) -> Rollout:
    """Sample group_size responses for each problem with `net` (the rollout engine) and score them."""
    prompts = [tokenizer.encode(p.prompt) for p in problems for _ in range(group_size)]
    prompt_ids, prompt_mask = left_pad(prompts, tokenizer.pad_id, device)
    t0 = time.perf_counter()
    s = sample(net, prompt_ids, prompt_mask, rollout_cfg.max_new_tokens, tokenizer.eos_id, tokenizer.pad_id,
               temperature=rollout_cfg.temperature, top_p=rollout_cfg.top_p, greedy=greedy, generator=generator)
    texts, lengths, ended = decode(tokenizer, s.tokens, s.mask)
    seconds = time.perf_counter() - t0
    scores = [task.score(text, problems[i // group_size]) for i, text in enumerate(texts)]
    host = {"reward": [sc.reward for sc in scores], "passed": [sc.passed for sc in scores],
            "num_tokens": lengths, "truncated": [not e for e in ended]}
    return Rollout(
        ids=torch.cat([prompt_ids, s.tokens], dim=1),
        mask=torch.cat([prompt_mask, s.mask], dim=1),
        completion_mask=s.mask,
        rollout_logp=s.logp,
        rewards=torch.tensor(host["reward"], dtype=torch.float32, device=device),
        passed=torch.tensor(host["passed"], dtype=torch.bool, device=device),
        lengths=torch.tensor(lengths, dtype=torch.long, device=device),
        truncated=torch.tensor(host["truncated"], dtype=torch.bool, device=device),
        problems=problems, texts=texts, group_size=group_size, host=host, sample_seconds=seconds,
    )


def evaluate(net, tokenizer, task: Task, rollout_cfg, device) -> dict[str, float]:
    """Greedy pass rate and mean reward on the held-out split (host floats)."""
    ro = collect(net, tokenizer, task, task.eval_set, 1, rollout_cfg, device, greedy=True)
    rewards, passed = ro.host["reward"], ro.host["passed"]
    return {"eval/pass_rate": sum(passed) / len(passed), "eval/reward_mean": sum(rewards) / len(rewards)}
