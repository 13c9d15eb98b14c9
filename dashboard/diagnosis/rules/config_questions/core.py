"""Answers for our own trainer's config (grpo_core/config.py: `algo.*`, `rollout.*`)."""

from __future__ import annotations

from dashboard.diagnosis.rules.config_questions.questions import (
    UNKNOWN,
    Lookup,
    Reader,
    num,
    reuse_text,
    truthy,
)

_CORE_ADV = {"group": "per prompt group: A = (r - group mean) / (group std + eps)",
             "batch": "group mean subtracted, divided by the std of the whole batch",
             "mean_only": "group mean subtracted, not divided by any std (Dr. GRPO)",
             "rloo": "leave-one-out: r minus the mean of the group's other rewards, not divided (RLOO)",
             "reinforce_pp": "no group baseline: rewards whitened over the batch's action tokens (REINFORCE++)",
             "reinforce_pp_baseline": "group mean subtracted, then whitened over the batch's action tokens "
                                      "(REINFORCE++-baseline)"}
_CORE_LOSS = {"dual_clip": "dual-clip PPO surrogate (negative-advantage loss capped at clip_ratio_c)",
              "cispo": "CISPO: truncated, detached importance weight times log-prob (no token loses its gradient)",
              "sapo": "SAPO: a soft sigmoid gate instead of the hard clip"}
_CORE_AGG = {"token_mean": "loss averaged over all tokens of the batch first (token-level, DAPO)",
             "seq_mean_token_mean": "averaged over each response's tokens, then over responses (GRPO)",
             "seq_mean_token_sum_norm": "summed over each response's tokens, divided by a constant, then "
                                        "averaged over responses (Dr. GRPO)"}


def _core_q1(lk: Lookup) -> str:
    mode = lk.get("algo.adv_mode")
    if mode is None:
        return UNKNOWN
    text = _CORE_ADV.get(str(mode), f"adv_mode={mode}")
    if truthy(lk.get("algo.drop_zero_var_groups")):
        text += "; zero-variance groups are dropped before the update"
        if num(lk.get("algo.refill_rounds")) > 0:
            text += f", and refilled by up to {lk.get('algo.refill_rounds')} more sampling rounds (DAPO)"
    if num(lk.get("algo.overlong_buffer")) > 0:
        text += (f"; DAPO soft overlong penalty: up to -{lk.get('algo.overlong_penalty')} reward over the last "
                 f"{lk.get('algo.overlong_buffer')} tokens before the limit")
    return text


def _core_q2(lk: Lookup) -> str:
    ratio, agg = lk.get("algo.ratio"), lk.get("algo.loss_agg")
    if ratio is None and agg is None:
        return UNKNOWN
    r = {"token": "ratio per token", "sequence": "sequence-level ratio (geometric mean of token ratios, GSPO)"}
    parts = [r.get(str(ratio), f"ratio={ratio}") if ratio is not None else "ratio level unknown",
             _CORE_AGG.get(str(agg), f"loss_agg={agg}") if agg is not None else "aggregation unknown"]
    loss = lk.get("algo.policy_loss")
    if loss is not None and str(loss) != "clip":
        parts.append(_CORE_LOSS.get(str(loss), f"policy_loss={loss}"))
    if truthy(lk.get("algo.mask_truncated")):
        parts.append("truncated completions get no loss (overlong filtering)")
    return "; ".join(parts)


def _core_q3(lk: Lookup) -> str:
    src = lk.get("algo.old_logprob_source")
    if src is None:
        return UNKNOWN
    if str(src) == "recompute":
        text = "recomputed by the training model (no grad) before the update, so they match it by construction"
    else:
        text, dtype = "taken from the rollout pass", lk.get("rollout.dtype")
        if dtype is not None:
            text += f" in {dtype}"
            if str(dtype) != "fp32":
                text += "; the training side runs in fp32 (bf16 autocast on CUDA), so expect a first-step ratio away from 1"
    corr = lk.get("algo.rollout_correction")
    if corr:
        text += (f"; rollout/training mismatch corrected by {corr} importance weights in "
                 f"[{lk.get('algo.rollout_correction_min')}, {lk.get('algo.rollout_correction_max')}]")
    return text


def _core_q4(lk: Lookup) -> str:
    mode, coef, est = lk.get("algo.kl_mode"), lk.get("algo.kl_coef"), lk.get("algo.kl_estimator")
    if mode is None:
        return UNKNOWN
    detail = ", ".join(x for x in (f"estimator {est}" if est else "", f"coef {coef}" if coef is not None else "") if x)
    text = {"none": "not used", "loss": "added to the loss, outside the reward",
            "reward": "folded into the reward (subtracted per sequence)"}.get(str(mode), f"kl_mode={mode}")
    if str(mode) == "loss" and truthy(lk.get("algo.kl_bias_correction")):
        detail += ", weighted by pi/pi_old (bias-corrected)"
    return text + (f" ({detail})" if detail and str(mode) != "none" else "")


def _core_q5(lk: Lookup) -> str:
    epochs, mbs = lk.get("algo.epochs"), lk.get("algo.minibatches")
    if epochs is None and mbs is None:
        return UNKNOWN
    return reuse_text(epochs, mbs)


READER: Reader = (_core_q1, _core_q2, _core_q3, _core_q4, _core_q5)
