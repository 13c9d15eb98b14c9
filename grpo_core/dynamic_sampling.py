"""A step's rollout, sampled: this rank's share of the prompts, G responses each, scored; with DAPO's
dynamic sampling and refill (algo.refill_rounds), more rounds until the batch holds prompts_per_step
groups of mixed rewards. Decided on host data, so it costs no device sync.
"""

from __future__ import annotations

import itertools
import random
from typing import TYPE_CHECKING

import torch

from grpo_core import distributed as D
from grpo_core.advantages import zero_variance_groups
from grpo_core.rollout import Rollout, collect, concat, take_groups

if TYPE_CHECKING:
    from grpo_core.trainer import Trainer


def sample_groups(tr: Trainer, step: int) -> Rollout:
    """This rank's share of the step's prompts, G responses each, scored; with dynamic sampling and
    refill, more rounds until prompts_per_step groups of mixed rewards (or refill_rounds run out)."""
    cfg, r = tr.cfg, tr.cfg.rollout
    problems = D.shard(tr.task.sample(tr.rng, r.prompts_per_step), tr.world)  # every rank draws the same
    parts = [collect(tr.engine, tr.tokenizer, tr.task, problems, r.group_size, r, tr.device, tr.gen)]
    want, rng = len(problems), random.Random(f"refill-{cfg.seed}-{step}-{tr.world.rank}")
    for _ in range(cfg.algo.refill_rounds):
        missing = want - sum(mixed_groups(parts, r.group_size))
        if missing <= 0:
            break
        extra = collect(tr.engine, tr.tokenizer, tr.task, tr.task.sample(rng, want), r.group_size, r, tr.device,
                        tr.gen)
        # only the first groups of the round that bring the missing mixed ones: the batch stays prompts_per_step
        found = itertools.accumulate(mixed_groups([extra], r.group_size))
        take = next((i + 1 for i, n in enumerate(found) if n >= missing), len(extra.problems))
        parts.append(take_groups(extra, take))
    return concat(parts)


def mixed_groups(parts: list[Rollout], group_size: int) -> list[bool]:
    """Per group of the rollouts, in order: True when its rewards are not all equal (host data)."""
    rewards = torch.tensor([x for ro in parts for x in ro.host["reward"]]).view(-1, group_size)
    return (~zero_variance_groups(rewards)).tolist()
