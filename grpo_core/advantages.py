"""Advantage estimators: rewards of a rollout -> one advantage per response. Pure tensor functions.

Each takes rewards [P, G] (P prompts, G responses per prompt) and returns advantages [P, G]. Every mode
subtracts the group mean, so a group whose responses all scored the same gets exactly zero advantage
and contributes no policy gradient (notes, section 9 q.2); they differ in what they divide by.

The std is torch.std with Bessel's correction by default (n - 1, as TRL and verl compute it); with
rewards [1, 0, 0, 0] that is 0.5, so the advantages are [1.5, -0.5, -0.5, -0.5]. eps is added to the
std, not to the variance: A = (r - mean) / (std + eps).
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from grpo_core.registry import Registry

Advantage = Callable[..., torch.Tensor]
ADVANTAGES: Registry = Registry("advantage mode")


def group_baseline(rewards: torch.Tensor, scale: torch.Tensor | float = 1.0) -> torch.Tensor:
    """rewards [P, G] -> (r - mean over the group) / scale, [P, G]; exactly 0 in a group of equal rewards.

    The explicit zero matters twice: the float mean of [0.7] * 3 is not exactly 0.7, and a residue of 1e-17
    divided by a std of 0 + eps would become a spurious advantage of 1e-11 rather than none; and with
    eps = 0 the division is 0 / 0. So the zero is applied after the division, never before it.
    """
    centered = (rewards - rewards.mean(dim=1, keepdim=True)) / scale
    return torch.where(zero_variance_groups(rewards)[:, None], 0.0, centered)


@ADVANTAGES.register("group")
def group_zscore(rewards: torch.Tensor, eps: float = 1e-6, unbiased: bool = True) -> torch.Tensor:
    """DeepSeekMath GRPO: (r - group mean) / (group std + eps). [P, G] -> [P, G]."""
    std = rewards.std(dim=1, keepdim=True, correction=int(unbiased))
    return group_baseline(rewards, std + eps)


@ADVANTAGES.register("batch")
def batch_scaled(rewards: torch.Tensor, eps: float = 1e-6, unbiased: bool = True) -> torch.Tensor:
    """Group mean as baseline, std over the whole batch as scale (TRL scale_rewards="batch"). [P, G]."""
    std = rewards.std(correction=int(unbiased)) if rewards.numel() > 1 else rewards.new_zeros(())
    return group_baseline(rewards, std + eps)


@ADVANTAGES.register("mean_only")
def mean_only(rewards: torch.Tensor, eps: float = 1e-6, unbiased: bool = True) -> torch.Tensor:
    """Dr. GRPO: r - group mean, no division, so easy and hard prompts are not re-weighted. [P, G]."""
    return group_baseline(rewards)


def zero_variance_groups(rewards: torch.Tensor) -> torch.Tensor:
    """rewards [P, G] -> bool [P], True where every response of the group scored the same."""
    return (rewards == rewards[:, :1]).all(dim=1)
