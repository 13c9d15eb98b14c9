"""The GRPO objective as pure tensor functions, each family looked up by name in a registry.

Shapes: B responses, N completion positions. logp, old_logp, ref_logp: [B, N] float32 log-probs of the
sampled tokens; mask: [B, N] bool, True on completion tokens (end token included), False on padding;
adv: [B], one advantage per response, applied to each of its tokens (outcome reward, notes section 3).
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from grpo_core.registry import Registry

RATIOS: Registry = Registry("ratio level")  # (logp, old_logp, mask) -> log ratio [B, N]
AGGREGATIONS: Registry = Registry("loss aggregation")  # (values [B, N], mask, norm) -> scalar
KL_ESTIMATORS: Registry = Registry("KL estimator")  # (logp, ref_logp) -> per-token KL(pi || ref) [B, N]
POLICY_LOSSES: Registry = Registry("policy loss")  # (log_ratio, adv, eps_low, eps_high) -> (loss [B, N], low, high)


def masked_mean(x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Mean of x over the True entries of mask (0 when there are none)."""
    return (x * mask).sum() / mask.sum().clamp(min=1)


@RATIOS.register("token")
def token_log_ratio(logp: torch.Tensor, old_logp: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """log pi(y_t) / pi_old(y_t) per token (PPO, GRPO, DAPO). [B, N]."""
    return (logp - old_logp) * mask


@RATIOS.register("sequence")
def sequence_log_ratio(logp: torch.Tensor, old_logp: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """GSPO: the mean token log ratio of each response, so exp() is the geometric mean of its token
    ratios, broadcast to its tokens. [B, N]; the gradient reaches every token through the mean."""
    seq = ((logp - old_logp) * mask).sum(1) / mask.sum(1).clamp(min=1)
    return seq[:, None] * mask


@AGGREGATIONS.register("token_mean")
def token_mean(values: torch.Tensor, mask: torch.Tensor, norm: float) -> torch.Tensor:
    """DAPO: every token of the batch weighs the same, so long responses weigh more."""
    return masked_mean(values, mask)


@AGGREGATIONS.register("seq_mean_token_mean")
def seq_mean_token_mean(values: torch.Tensor, mask: torch.Tensor, norm: float) -> torch.Tensor:
    """DeepSeekMath GRPO: mean over each response's tokens, then over responses (each response weighs
    the same, so a token of a short response weighs more)."""
    return ((values * mask).sum(1) / mask.sum(1).clamp(min=1)).mean()


@AGGREGATIONS.register("seq_mean_token_sum_norm")
def seq_mean_token_sum_norm(values: torch.Tensor, mask: torch.Tensor, norm: float) -> torch.Tensor:
    """Dr. GRPO: sum over each response's tokens divided by a constant (max tokens), then mean over
    responses: no length-dependent weighting at all."""
    return ((values * mask).sum(1) / norm).mean()


@KL_ESTIMATORS.register("k1")
def kl_k1(logp: torch.Tensor, ref_logp: torch.Tensor) -> torch.Tensor:
    """log pi/pi_ref: unbiased, high variance, can be negative."""
    return logp - ref_logp


@KL_ESTIMATORS.register("k2")
def kl_k2(logp: torch.Tensor, ref_logp: torch.Tensor) -> torch.Tensor:
    """(log pi/pi_ref)^2 / 2: biased, low variance, >= 0."""
    return 0.5 * (logp - ref_logp) ** 2


@KL_ESTIMATORS.register("k3")
def kl_k3(logp: torch.Tensor, ref_logp: torch.Tensor) -> torch.Tensor:
    """pi_ref/pi - 1 - log(pi_ref/pi): unbiased, >= 0 (DeepSeekMath's choice)."""
    log_r = ref_logp - logp
    return torch.exp(log_r) - 1 - log_r


@POLICY_LOSSES.register("clip")
def clipped_surrogate(log_ratio: torch.Tensor, adv: torch.Tensor, eps_low: float, eps_high: float):
    """PPO's pessimistic surrogate -min(r A, clip(r, 1 - eps_low, 1 + eps_high) A) per token.

    Returns loss [B, N] and bool [B, N] masks of the tokens clipped below (r < 1 - eps_low, A < 0) and
    above (r > 1 + eps_high, A > 0): exactly the tokens whose gradient the clip removed.
    """
    ratio, a = torch.exp(log_ratio), adv[:, None]
    loss = -torch.min(ratio * a, ratio.clamp(1 - eps_low, 1 + eps_high) * a)
    return loss, (ratio < 1 - eps_low) & (a < 0), (ratio > 1 + eps_high) & (a > 0)


def grpo_loss(logp: torch.Tensor, old_logp: torch.Tensor, ref_logp: torch.Tensor | None, adv: torch.Tensor,
              mask: torch.Tensor, algo, norm: float, kl_in_loss: bool,
              detach_policy: bool = False) -> tuple[torch.Tensor, dict]:
    """The objective of one minibatch. Returns (loss to backpropagate, {canonical name: 0-d tensor}).

    algo: the AlgoConfig (ratio, policy_loss, loss_agg, kl_estimator, kl_coef, clip eps). ref_logp may be
    None (no reference kept); the KL term joins the loss only when kl_in_loss. detach_policy is a FAULT for
    teaching/testing (config faults.detach_policy_term): the ratio is cut from the graph, only the KL trains.
    """
    mask = mask.to(logp.dtype)
    log_ratio = RATIOS[algo.ratio](logp.detach() if detach_policy else logp, old_logp, mask)
    token_loss, low, high = POLICY_LOSSES[algo.policy_loss](log_ratio, adv, algo.clip_eps_low, algo.clip_eps_high)
    aggregate: Callable = AGGREGATIONS[algo.loss_agg]
    policy_loss = aggregate(token_loss, mask, norm)
    total = policy_loss
    with torch.no_grad():
        ratio, on = torch.exp(log_ratio), mask.bool()
        token_lr = logp - old_logp
        stats = {
            "loss/policy": policy_loss.detach(),
            "policy/clipfrac": masked_mean((low | high).float(), mask),
            "policy/clipfrac_low": masked_mean(low.float(), mask),
            "policy/clipfrac_high": masked_mean(high.float(), mask),
            "policy/ratio_mean": masked_mean(ratio, mask),
            "policy/ratio_max": torch.where(on, ratio, float("-inf")).max(),
            "policy/approx_kl_old": masked_mean(torch.exp(token_lr) - 1 - token_lr, mask),  # k3 of KL(old||pi)
        }
    if ref_logp is not None:
        kl = KL_ESTIMATORS[algo.kl_estimator](logp, ref_logp)
        stats["policy/kl_ref"] = masked_mean(kl.detach(), mask)
        if kl_in_loss:
            kl_loss = algo.kl_coef * aggregate(kl, mask, norm)
            total = total + kl_loss
            stats["loss/kl"] = kl_loss.detach()
    stats["loss/total"] = total.detach()
    if not total.requires_grad:  # detached policy term and no KL in the loss: a zero gradient, not a crash
        total = total + 0.0 * logp.sum()
    return total, stats
