"""Advantage estimators: rewards of a rollout -> one advantage per response. Pure tensor functions.

Each takes rewards [P, G] (P prompts, G responses per prompt) and tokens [P, G] (each response's action
token count, which only the REINFORCE++ modes use: they whiten over tokens) and returns advantages [P, G].
The group modes subtract a baseline from the response's own group, so a group whose responses all
scored the same gets exactly zero advantage and contributes no policy gradient (notes, section 9 q.2);
they differ in the baseline and in what they divide by. The REINFORCE++ modes shift by a batch mean.

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
def group_zscore(rewards: torch.Tensor, eps: float = 1e-6, unbiased: bool = True,
                 tokens: torch.Tensor | None = None) -> torch.Tensor:
    """DeepSeekMath GRPO: (r - group mean) / (group std + eps). [P, G] -> [P, G]."""
    std = rewards.std(dim=1, keepdim=True, correction=int(unbiased))
    return group_baseline(rewards, std + eps)


@ADVANTAGES.register("batch")
def batch_scaled(rewards: torch.Tensor, eps: float = 1e-6, unbiased: bool = True,
                 tokens: torch.Tensor | None = None) -> torch.Tensor:
    """Group mean as baseline, std over the whole batch as scale (TRL scale_rewards="batch"). [P, G]."""
    std = rewards.std(correction=int(unbiased)) if rewards.numel() > 1 else rewards.new_zeros(())
    return group_baseline(rewards, std + eps)


@ADVANTAGES.register("mean_only")
def mean_only(rewards: torch.Tensor, eps: float = 1e-6, unbiased: bool = True,
              tokens: torch.Tensor | None = None) -> torch.Tensor:
    """Dr. GRPO: r - group mean, no division, so easy and hard prompts are not re-weighted. [P, G]."""
    return group_baseline(rewards)


@ADVANTAGES.register("rloo")
def rloo(rewards: torch.Tensor, eps: float = 1e-6, unbiased: bool = True,
         tokens: torch.Tensor | None = None) -> torch.Tensor:
    """RLOO (Ahmadian et al. 2024): r minus the mean of the group's other G - 1 rewards, not divided.

    r_i - (sum - r_i) / (G - 1) = G / (G - 1) (r_i - mean): the group z-score's direction without the
    std, scaled up by G / (G - 1) because a response is not its own baseline. [P, G].
    """
    G = rewards.shape[1]
    return group_baseline(rewards, (G - 1) / G)


def token_whiten(values: torch.Tensor, tokens: torch.Tensor | None, eps: float, unbiased: bool) -> torch.Tensor:
    """values [P, G], one per response, spread over its tokens -> (v - mean) / (std + eps), [P, G], with the
    mean and std over every action token of the batch: a response of n tokens weighs n (tokens [P, G] its
    token count; None: each weighs 1). unbiased: Bessel's n - 1 over the token count, as verl's
    masked_whiten; False: OpenRLHF's population variance. Exactly 0 where every counted value is equal.
    """
    w = torch.ones_like(values) if tokens is None else tokens.to(values.dtype)
    n = w.sum()
    mean = (values * w).sum() / n.clamp(min=1)
    var = ((values - mean) ** 2 * w).sum() / (n - int(unbiased)).clamp(min=1)
    # equal counted values (or none): 0, not a rounding residue / eps; max <= min needs no host sync
    constant = torch.where(w > 0, values, -torch.inf).max() <= torch.where(w > 0, values, torch.inf).min()
    return torch.where(constant, 0.0, (values - mean) / (var.sqrt() + eps))


@ADVANTAGES.register("reinforce_pp")
def reinforce_pp(rewards: torch.Tensor, eps: float = 1e-6, unbiased: bool = True,
                 tokens: torch.Tensor | None = None) -> torch.Tensor:
    """REINFORCE++ (Hu 2025) for an outcome reward: the return of every action token is the response's
    reward, whitened over all action tokens of the batch, no group baseline. [P, G].

    Token-level, as OpenRLHF (advantage_estimator=reinforce) and verl (reinforce_plus_plus) whiten: a long
    response weighs more in the batch mean and std. Both put their epsilon under the root (verl
    rsqrt(var + 1e-8), OpenRLHF rsqrt(max(var, 1e-8))); ours is added to the std as in every other mode,
    the same to 1e-7 relative once the std is not tiny. With the KL in the reward their per-token returns
    differ by the KL still to come; here (algo.kl_mode=reward) the response's whole KL is on every token.
    A group of equal rewards keeps a non-zero advantage when the batch mean differs.
    """
    return token_whiten(rewards, tokens, eps, unbiased)


@ADVANTAGES.register("reinforce_pp_baseline")
def reinforce_pp_baseline(rewards: torch.Tensor, eps: float = 1e-6, unbiased: bool = True,
                          tokens: torch.Tensor | None = None) -> torch.Tensor:
    """REINFORCE++-baseline (Hu 2025): r - group mean (each response weighs once), then whitened over all
    action tokens of the batch, mean shift included (OpenRLHF reinforce_baseline, verl
    reinforce_plus_plus_baseline). With unequal lengths the token mean of the centred rewards is not 0, so
    a group of equal rewards gets -mean / std rather than 0; it differs from "batch" (std of the raw
    rewards, per response) in removing the spread between prompts. [P, G].
    """
    return token_whiten(group_baseline(rewards), tokens, eps, unbiased)


def zero_variance_groups(rewards: torch.Tensor) -> torch.Tensor:
    """rewards [P, G] -> bool [P], True where every response of the group scored the same."""
    return (rewards == rewards[:, :1]).all(dim=1)
