"""Rollout/training mismatch correction: importance weights pi_train / pi_rollout on the policy term.

When the rollout engine is not the training model (a bf16 or fp16 copy, vLLM, a stale weight sync),
the tokens were sampled from pi_rollout while the loss assumes pi_old, the training model's log-probs
before the update. The correction multiplies each token's policy loss by a detached weight
w = pi_old / pi_rollout, either truncated at a cap (TIS: Yao et al. 2025, "Your efficient RL framework
secretly brings you off-policy RL training") or zeroed outside [min, max] (MIS, masked importance
sampling), per token or per sequence (w = exp of the sum of the response's token log ratios).
TRL names the same four modes vllm_importance_sampling_mode = token_truncate, token_mask,
sequence_truncate, sequence_mask; verl calls them rollout_is token/sequence with truncate/mask.

Each function: old_logp, rollout_logp [B, N], mask [B, N] bool, lo, hi floats -> weights [B, N], 0 off mask.
"""

from __future__ import annotations

import torch

from grpo_core.registry import Registry

ROLLOUT_CORRECTIONS: Registry = Registry("rollout correction")


def token_log_weight(old_logp: torch.Tensor, rollout_logp: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    return (old_logp - rollout_logp) * mask


def sequence_log_weight(old_logp: torch.Tensor, rollout_logp: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """The log of the product of the response's token ratios, broadcast to its tokens. [B, N]."""
    return token_log_weight(old_logp, rollout_logp, mask).sum(1, keepdim=True) * mask


def truncate(log_w: torch.Tensor, mask: torch.Tensor, lo: float, hi: float) -> torch.Tensor:
    return torch.exp(log_w).clamp(min=lo, max=hi) * mask


def masked(log_w: torch.Tensor, mask: torch.Tensor, lo: float, hi: float) -> torch.Tensor:
    w = torch.exp(log_w)
    return torch.where((w < lo) | (w > hi), 0.0, w) * mask


@ROLLOUT_CORRECTIONS.register("token_truncate")
def token_tis(old_logp, rollout_logp, mask, lo: float, hi: float) -> torch.Tensor:
    """TIS per token: min(max(pi_old / pi_rollout, lo), hi) on each token."""
    return truncate(token_log_weight(old_logp, rollout_logp, mask), mask, lo, hi).detach()


@ROLLOUT_CORRECTIONS.register("token_mask")
def token_mis(old_logp, rollout_logp, mask, lo: float, hi: float) -> torch.Tensor:
    """MIS per token: the ratio itself inside [lo, hi], 0 (the token drops out of the loss) outside."""
    return masked(token_log_weight(old_logp, rollout_logp, mask), mask, lo, hi).detach()


@ROLLOUT_CORRECTIONS.register("sequence_truncate")
def sequence_tis(old_logp, rollout_logp, mask, lo: float, hi: float) -> torch.Tensor:
    """TIS per sequence: the product of the response's token ratios, truncated, on each of its tokens."""
    return truncate(sequence_log_weight(old_logp, rollout_logp, mask), mask, lo, hi).detach()


@ROLLOUT_CORRECTIONS.register("sequence_mask")
def sequence_mis(old_logp, rollout_logp, mask, lo: float, hi: float) -> torch.Tensor:
    """MIS per sequence: a response whose ratio product leaves [lo, hi] drops out of the loss whole."""
    return masked(sequence_log_weight(old_logp, rollout_logp, mask), mask, lo, hi).detach()
