"""The GRPO objective as pure tensor functions, each family looked up by name in a registry.

Shapes: B responses, N completion positions. logp, old_logp, ref_logp: [B, N] float32 log-probs of the
sampled tokens; mask: [B, N] bool, True on completion tokens (end token included), False on padding;
adv: [B], one advantage per response, applied to each of its tokens (outcome reward, notes section 3).

An aggregation returns a (sum, count) pair rather than a mean, so that a minibatch split across
processes divides every rank's sum by the count of the whole minibatch: the sum of the ranks' gradients
is then exactly the gradient of the one-process loss, for token- and sequence-level means alike.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from grpo_core.registry import Registry

RATIOS: Registry = Registry("ratio level")  # (logp, old_logp, mask) -> log ratio [B, N]
AGGREGATIONS: Registry = Registry("loss aggregation")  # (values [B, N], mask, norm) -> (sum, count)
KL_ESTIMATORS: Registry = Registry("KL estimator")  # (logp, ref_logp) -> per-token KL(pi || ref) [B, N]
POLICY_LOSSES: Registry = Registry("policy loss")  # (log_ratio, adv, algo) -> (loss [B, N], low, high, dual)


def masked_mean(x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Mean of x over the True entries of mask (0 when there are none)."""
    return (x * mask).sum() / mask.sum().clamp(min=1)


def aggregate(name: str, values: torch.Tensor, mask: torch.Tensor, norm: float,
              total: Callable[[torch.Tensor], torch.Tensor] | None = None) -> torch.Tensor:
    """The loss of `values` [B, N] under aggregation `name`: its sum over the count of the whole minibatch.

    total maps this process's count to the minibatch's (a sum over ranks); None in a single process.
    """
    s, count = AGGREGATIONS[name](values, mask, norm)
    return s / (total(count) if total is not None else count).clamp(min=1)


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
def token_mean(values: torch.Tensor, mask: torch.Tensor, norm: float):
    """DAPO: every token of the batch weighs the same, so long responses weigh more."""
    return (values * mask).sum(), mask.sum()


@AGGREGATIONS.register("seq_mean_token_mean")
def seq_mean_token_mean(values: torch.Tensor, mask: torch.Tensor, norm: float):
    """DeepSeekMath GRPO: mean over each response's tokens, then over responses (each response weighs
    the same, so a token of a short response weighs more)."""
    return ((values * mask).sum(1) / mask.sum(1).clamp(min=1)).sum(), values.new_tensor(float(len(values)))


@AGGREGATIONS.register("seq_mean_token_sum_norm")
def seq_mean_token_sum_norm(values: torch.Tensor, mask: torch.Tensor, norm: float):
    """Dr. GRPO: sum over each response's tokens divided by a constant (max tokens), then mean over
    responses: no length-dependent weighting at all."""
    return ((values * mask).sum(1) / norm).sum(), values.new_tensor(float(len(values)))


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


@KL_ESTIMATORS.register("low_var_kl")
def kl_k3_clamped(logp: torch.Tensor, ref_logp: torch.Tensor) -> torch.Tensor:
    """verl's k3 ("low_var_kl"): log(pi_ref/pi) clamped to [-20, 20] before exp, the result to [-10, 10].

    The clamps matter once the policy has drifted far from the reference on a token: exp(log_r) then
    overflows or one token's KL dominates the batch; within them it equals k3 exactly.
    """
    log_r = (ref_logp - logp).clamp(-20.0, 20.0)
    return (torch.exp(log_r) - 1 - log_r).clamp(-10.0, 10.0)


@POLICY_LOSSES.register("clip")
def clipped_surrogate(log_ratio: torch.Tensor, adv: torch.Tensor, algo):
    """PPO's pessimistic surrogate -min(r A, clip(r, 1 - eps_low, 1 + eps_high) A) per token.

    Returns loss [B, N] and bool [B, N] masks of the tokens clipped below (r < 1 - eps_low, A < 0) and
    above (r > 1 + eps_high, A > 0): exactly the tokens whose gradient the clip removed; and of the tokens
    held by a dual-clip bound (none here: see dual_clip).
    """
    ratio, a, lo, hi = torch.exp(log_ratio), adv[:, None], algo.clip_eps_low, algo.clip_eps_high
    loss = -torch.min(ratio * a, ratio.clamp(1 - lo, 1 + hi) * a)
    return loss, (ratio < 1 - lo) & (a < 0), (ratio > 1 + hi) & (a > 0), torch.zeros_like(ratio, dtype=torch.bool)


@POLICY_LOSSES.register("dual_clip")
def dual_clip_surrogate(log_ratio: torch.Tensor, adv: torch.Tensor, algo):
    """Dual-clip PPO (Ye et al. 2020, verl's clip_ratio_c): the clipped surrogate, and for A < 0 the
    loss is also capped at -c A, so a token whose ratio has run far above 1 cannot push without bound.

    Dual mask: the tokens held by the cap (A < 0 and r above c), verl's pg_clipfrac_lower.
    """
    loss, low, high, _ = clipped_surrogate(log_ratio, adv, algo)
    a, c = adv[:, None], algo.clip_ratio_c
    capped = (a < 0) & (loss > -c * a)
    return torch.where(capped, -c * a, loss), low, high, capped


@POLICY_LOSSES.register("cispo")
def cispo(log_ratio: torch.Tensor, adv: torch.Tensor, algo):
    """CISPO (MiniMax-M1, 2025): -sg(min(r, 1 + eps_high)) A log pi per token; the importance weight is
    truncated and detached, so no token loses its gradient (the clip only bounds its size).

    log_ratio stands in for log pi: they differ by the constant log pi_old, so the gradient is the same.
    High mask: tokens whose weight was truncated; no lower bound (the paper sets eps_low_IS large).
    """
    ratio = torch.exp(log_ratio)
    cap = 1 + algo.clip_eps_high
    weight = ratio.clamp(max=cap).detach()
    none = torch.zeros_like(ratio, dtype=torch.bool)
    return -weight * adv[:, None] * log_ratio, none, ratio > cap, none


@POLICY_LOSSES.register("sapo")
def sapo(log_ratio: torch.Tensor, adv: torch.Tensor, algo):
    """SAPO (Gao et al. 2025, Soft Adaptive Policy Optimization): a smooth gate instead of a hard clip,
    -A sigmoid(tau (r - 1)) 4 / tau, with tau_pos for A > 0 and tau_neg otherwise. Its gradient in r is
    1 at r = 1 and fades away from it, on both sides; nothing is clipped, so both masks are empty.
    """
    ratio, a = torch.exp(log_ratio), adv[:, None]
    tau = torch.where(a > 0, algo.sapo_tau_pos, algo.sapo_tau_neg)
    gate = torch.sigmoid(tau * (ratio - 1)) * 4 / tau
    none = torch.zeros_like(ratio, dtype=torch.bool)
    return -gate * a, none, none, none


def grpo_loss(logp: torch.Tensor, old_logp: torch.Tensor, ref_logp: torch.Tensor | None, adv: torch.Tensor,
              mask: torch.Tensor, algo, norm: float, kl_in_loss: bool, detach_policy: bool = False,
              is_weight: torch.Tensor | None = None,
              total: Callable[[torch.Tensor], torch.Tensor] | None = None) -> tuple[torch.Tensor, dict]:
    """The objective of one minibatch. Returns (loss to backpropagate, {canonical name: 0-d tensor}).

    algo: the AlgoConfig (ratio, policy_loss, loss_agg, kl_estimator, kl_coef, clip eps, ...). ref_logp may be
    None (no reference kept); the KL term joins the loss only when kl_in_loss. is_weight [B, N]: the rollout
    correction's detached weights (rollout_correction.py), multiplying the policy term only, or None. total:
    see `aggregate`. detach_policy is a FAULT for teaching/testing (faults.detach_policy_term): the ratio is
    cut from the graph, only the KL trains. The stats are means over this process's tokens.
    """
    mask = mask.to(logp.dtype)
    log_ratio = RATIOS[algo.ratio](logp.detach() if detach_policy else logp, old_logp, mask)
    if algo.log_ratio_clamp > 0:  # verl's +-20: exp() of a stale token's log ratio cannot overflow
        log_ratio = log_ratio.clamp(-algo.log_ratio_clamp, algo.log_ratio_clamp)
    token_loss, low, high, dual = POLICY_LOSSES[algo.policy_loss](log_ratio, adv, algo)
    if is_weight is not None:
        token_loss = token_loss * is_weight
    policy_loss = aggregate(algo.loss_agg, token_loss, mask, norm, total)
    total_loss = policy_loss
    with torch.no_grad():
        ratio, on = torch.exp(log_ratio), mask.bool()
        token_lr = logp - old_logp
        stats = {
            "loss/policy": policy_loss.detach(),
            "policy/clipfrac": masked_mean((low | high | dual).float(), mask),
            "policy/clipfrac_low": masked_mean(low.float(), mask),
            "policy/clipfrac_high": masked_mean(high.float(), mask),
            "policy/clipfrac_dual": masked_mean(dual.float(), mask),
            "policy/ratio_mean": masked_mean(ratio, mask),
            "policy/ratio_max": torch.where(on, ratio, float("-inf")).max(),
            "policy/approx_kl_old": masked_mean(torch.exp(token_lr) - 1 - token_lr, mask),  # k3 of KL(old||pi)
        }
    if ref_logp is not None:
        kl = KL_ESTIMATORS[algo.kl_estimator](logp, ref_logp)
        stats["policy/kl_ref"] = masked_mean(kl.detach(), mask)
        if algo.kl_bias_correction:
            kl = bias_corrected_kl(kl, log_ratio)
        if kl_in_loss:
            kl_loss = algo.kl_coef * aggregate(algo.loss_agg, kl, mask, norm, total)
            total_loss = total_loss + kl_loss
            stats["loss/kl"] = kl_loss.detach()
    stats["loss/total"] = total_loss.detach()
    if not total_loss.requires_grad:  # detached policy term and no KL in the loss: a zero gradient, not a crash
        total_loss = total_loss + 0.0 * logp.sum()
    return total_loss, stats


def bias_corrected_kl(kl: torch.Tensor, log_ratio: torch.Tensor) -> torch.Tensor:
    """TRL's use_bias_correction_kl: the per-token KL times the importance ratio pi/pi_old (not detached).

    The tokens were sampled from pi_old, so an estimate of KL(pi || ref) under pi weighs each by pi/pi_old;
    on the first, on-policy step the value is unchanged and only the gradient gains kl * grad(ratio).
    """
    return kl * torch.exp(log_ratio)
