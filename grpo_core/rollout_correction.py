"""Rollout/training mismatch correction: importance weights pi_train / pi_rollout on the policy term.

When the rollout engine is not the training model (a bf16 or fp16 copy, vLLM, a stale weight sync),
the tokens were sampled from pi_rollout while the loss assumes pi_old, the training model's log-probs
before the update. The correction multiplies each token's policy loss by a detached weight
w = pi_old / pi_rollout, either truncated at a cap (TIS: Yao et al. 2025, "Your efficient RL framework
secretly brings you off-policy RL training") or zeroed outside [min, max] (MIS, masked importance
sampling), per token or per sequence (w = exp of the sum of the response's token log ratios).
TRL names the same four modes vllm_importance_sampling_mode = token_truncate, token_mask,
sequence_truncate, sequence_mask; verl calls them rollout_is token/sequence with truncate/mask.

Each function: old_logp, rollout_logp [B, N], mask [B, N] bool, lo, hi floats -> (weights [B, N], 0 off
mask; {policy/rollout_is_*: 0-d tensor}). The statistics are over the units the weight is made of: tokens
for the token modes (policy/rollout_is_*), responses for the sequence modes (policy/rollout_is_seq_*).
"""

from __future__ import annotations

import torch

from grpo_core.registry import Registry

ROLLOUT_CORRECTIONS: Registry = Registry("rollout correction")


def token_log_weight(old_logp: torch.Tensor, rollout_logp: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    return (old_logp - rollout_logp) * mask


def sequence_log_weight(old_logp: torch.Tensor, rollout_logp: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """The log of the product of the response's token ratios. [B, N] -> [B, 1]."""
    return token_log_weight(old_logp, rollout_logp, mask).sum(1, keepdim=True)


def truncate(ratio: torch.Tensor, lo: float, hi: float) -> torch.Tensor:
    return ratio.clamp(min=lo, max=hi)


def masked(ratio: torch.Tensor, lo: float, hi: float) -> torch.Tensor:
    return torch.where((ratio < lo) | (ratio > hi), 0.0, ratio)


# Column prefixes per unit: a response's ratio is a product of token ratios and has its own columns (its
# yardstick grows with the response's length; collectors/schema.py).
TOKEN_STATS, SEQUENCE_STATS = "policy/rollout_is_", "policy/rollout_is_seq_"


def correction_stats(ratio: torch.Tensor, weight: torch.Tensor, on: torch.Tensor, lo: float,
                     hi: float, prefix: str = TOKEN_STATS) -> dict[str, torch.Tensor]:
    """ratio, weight, on: one value per unit (token [B, N] or response [B, 1]); on: bool, the units that count.

    ratio_* describe pi_old / pi_rollout before the correction touched it; weight_mean is what the loss
    used (a masked unit as 0); masked_frac counts the units outside [lo, hi], truncated or masked alike.
    """
    n = on.sum().clamp(min=1)
    outside = ((ratio < lo) | (ratio > hi)) & on
    return {
        prefix + "ratio_mean": (ratio * on).sum() / n,
        prefix + "ratio_min": torch.where(on, ratio, float("inf")).min(),
        prefix + "ratio_max": torch.where(on, ratio, float("-inf")).max(),
        prefix + "weight_mean": (weight * on).sum() / n,
        prefix + "masked_frac": outside.sum() / n,
    }


def token_level(treat, old_logp, rollout_logp, mask, lo: float, hi: float):
    ratio = torch.exp(token_log_weight(old_logp, rollout_logp, mask)).detach()
    weight = treat(ratio, lo, hi)
    return weight * mask, correction_stats(ratio, weight, mask.bool(), lo, hi)


def sequence_level(treat, old_logp, rollout_logp, mask, lo: float, hi: float):
    ratio = torch.exp(sequence_log_weight(old_logp, rollout_logp, mask)).detach()  # [B, 1]
    weight = treat(ratio, lo, hi)
    return weight * mask, correction_stats(ratio, weight, mask.bool().any(1, keepdim=True), lo, hi,
                                           SEQUENCE_STATS)


@ROLLOUT_CORRECTIONS.register("token_truncate")
def token_tis(old_logp, rollout_logp, mask, lo: float, hi: float):
    """TIS per token: min(max(pi_old / pi_rollout, lo), hi) on each token."""
    return token_level(truncate, old_logp, rollout_logp, mask, lo, hi)


@ROLLOUT_CORRECTIONS.register("token_mask")
def token_mis(old_logp, rollout_logp, mask, lo: float, hi: float):
    """MIS per token: the ratio itself inside [lo, hi], 0 (the token drops out of the loss) outside."""
    return token_level(masked, old_logp, rollout_logp, mask, lo, hi)


@ROLLOUT_CORRECTIONS.register("sequence_truncate")
def sequence_tis(old_logp, rollout_logp, mask, lo: float, hi: float):
    """TIS per sequence: the product of the response's token ratios, truncated, on each of its tokens."""
    return sequence_level(truncate, old_logp, rollout_logp, mask, lo, hi)


@ROLLOUT_CORRECTIONS.register("sequence_mask")
def sequence_mis(old_logp, rollout_logp, mask, lo: float, hi: float):
    """MIS per sequence: a response whose ratio product leaves [lo, hi] drops out of the loss whole."""
    return sequence_level(masked, old_logp, rollout_logp, mask, lo, hi)
