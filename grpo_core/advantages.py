"""Advantage estimators: rewards of a rollout -> one advantage per response. Pure tensor functions.

Each takes rewards [P, G] (P prompts, G responses per prompt) and returns advantages [P, G]. Every mode
but reinforce_pp subtracts a baseline from the response's own group, so a group whose responses all
scored the same gets exactly zero advantage and contributes no policy gradient (notes, section 9 q.2);
they differ in the baseline and in what they divide by. reinforce_pp has no group baseline at all.

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


@ADVANTAGES.register("rloo")
def rloo(rewards: torch.Tensor, eps: float = 1e-6, unbiased: bool = True) -> torch.Tensor:
    """RLOO (Ahmadian et al. 2024): r minus the mean of the group's other G - 1 rewards, not divided.

    r_i - (sum - r_i) / (G - 1) = G / (G - 1) (r_i - mean): the group z-score's direction without the
    std, scaled up by G / (G - 1) because a response is not its own baseline. [P, G].
    """
    G = rewards.shape[1]
    return group_baseline(rewards, (G - 1) / G)


@ADVANTAGES.register("reinforce_pp")
def reinforce_pp(rewards: torch.Tensor, eps: float = 1e-6, unbiased: bool = True) -> torch.Tensor:
    """REINFORCE++ (Hu 2025) for an outcome reward: (r - batch mean) / (batch std + eps), no group baseline.

    The paper (and verl, OpenRLHF) whiten the per-token returns, so a long response weighs more in the
    batch mean and std; here each response weighs once, as every other mode does (equal with equal lengths).
    A group of equal rewards keeps a non-zero advantage when the batch mean differs. [P, G].
    """
    centered = rewards - rewards.mean()
    std = rewards.std(correction=int(unbiased)) if rewards.numel() > 1 else rewards.new_zeros(())
    constant = (rewards == rewards.reshape(-1)[0]).all()  # 0, not 0 / 0 or a rounding residue / eps
    return torch.where(constant, 0.0, centered / (std + eps))


@ADVANTAGES.register("reinforce_pp_baseline")
def reinforce_pp_baseline(rewards: torch.Tensor, eps: float = 1e-6, unbiased: bool = True) -> torch.Tensor:
    """REINFORCE++-baseline (Hu 2025): r - group mean, then divided by the std of those over the batch.

    The batch mean of the centred values is 0 by construction (each group sums to 0), so whitening is a
    division; it differs from "batch" (std of the raw rewards) in removing the spread between prompts. [P, G].
    """
    centered = group_baseline(rewards)
    std = centered.std(correction=int(unbiased)) if centered.numel() > 1 else centered.new_zeros(())
    return group_baseline(rewards, std + eps)


def zero_variance_groups(rewards: torch.Tensor) -> torch.Tensor:
    """rewards [P, G] -> bool [P], True where every response of the group scored the same."""
    return (rewards == rewards[:, :1]).all(dim=1)
