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
    # padded as Python lists, then one tensor each: a slice assignment per row costs more than the rest
    ids = torch.tensor([[pad_id] * (width - len(r)) + r for r in rows], dtype=torch.long)
    mask = torch.tensor([[False] * (width - len(r)) + [True] * len(r) for r in rows], dtype=torch.bool)
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
    prompts = [ids for p in problems for ids in [tokenizer.encode(p.prompt)] * group_size]  # one encode a prompt
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


def take_groups(ro: Rollout, n: int, start: int = 0) -> Rollout:
    """Groups start .. start + n - 1 of a rollout (all rows of each), as a Rollout of its own."""
    rows = slice(start * ro.group_size, (start + n) * ro.group_size)
    cut = {f: getattr(ro, f)[rows] for f in ("ids", "mask", "completion_mask", "rollout_logp", "rewards", "passed",
                                            "lengths", "truncated", "texts")}
    return Rollout(**cut, problems=ro.problems[start: start + n], group_size=ro.group_size,
                   host={key: v[rows] for key, v in ro.host.items()}, sample_seconds=ro.sample_seconds)


def _repad(ro: Rollout, prompt_width: int, n: int) -> tuple[torch.Tensor, ...]:
    """ids, mask [B, prompt_width + n] and completion_mask, rollout_logp [B, n]: the prompt part padded
    on the left, the completion part on the right (pad id 0: a masked position's id is never read)."""
    L, extra = ro.ids.shape[1] - ro.n, n - ro.n

    def widen(x: torch.Tensor, left: int, right: int) -> torch.Tensor:
        return torch.nn.functional.pad(x, (left, right))

    ids = torch.cat([widen(ro.ids[:, :L], prompt_width - L, 0), widen(ro.ids[:, L:], 0, extra)], 1)
    mask = torch.cat([widen(ro.mask[:, :L], prompt_width - L, 0), widen(ro.mask[:, L:], 0, extra)], 1)
    return ids, mask, widen(ro.completion_mask, 0, extra), widen(ro.rollout_logp, 0, extra)


def concat(parts: list[Rollout]) -> Rollout:
    """Rollouts of the same group size -> one, re-padded to the widest prompt and completion."""
    if len(parts) == 1:
        return parts[0]
    width = max(r.ids.shape[1] - r.n for r in parts)
    n = max(r.n for r in parts)
    padded = [_repad(r, width, n) for r in parts]
    ids, mask, cmask, logp = (torch.cat(col) for col in zip(*padded))
    cat = {f: torch.cat([getattr(r, f) for r in parts]) for f in ("rewards", "passed", "lengths", "truncated")}
    return Rollout(ids=ids, mask=mask, completion_mask=cmask, rollout_logp=logp, **cat,
                   problems=[p for r in parts for p in r.problems], texts=[t for r in parts for t in r.texts],
                   group_size=parts[0].group_size,
                   host={key: [v for r in parts for v in r.host[key]] for key in parts[0].host},
                   sample_seconds=sum(r.sample_seconds for r in parts))
