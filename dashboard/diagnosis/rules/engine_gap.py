"""A serving engine's log-probs against the trainer's, each measure on its own yardstick: the evidence
first_step_ratio (rules/first_step.py) reports when the rollout and the training forward of the same weights
disagree. Per token: the mean |log p rollout - log p train|, the IS ratio or weight, verl's probability gap, NeMo-RL's
exp-gap and a KL(rollout || train) estimate; per response: a product of token ratios, judged by the per-token gap
it implies over the mean response length; over time: a per-token gap that keeps growing, which numerics at fixed
weights cannot do. Each value is measured where the trainer's log-probs are taken for the batch the engine just
sampled, before any update on it. The per-token max of a gap is shown, never an alarm on its own: one rare token in a
batch differs by nats under plain bf16.
"""

from __future__ import annotations

import numpy as np

from dashboard.diagnosis.build import evidence, fmt
from dashboard.diagnosis.context import RunData
from dashboard.diagnosis.stats import first_level, trend

LOGPROB_DIFF = 1e-3  # mean |log p rollout - log p train|: fp32 vs fp32 is ~1e-7
# Serving vs training: bf16 engines differ from the trainer by ~1e-2 nats per token on average; 0.1 nats (a
# 10% probability ratio on the average token) is beyond numerics: wrong weights synced, another tokenizer or
# template. The IS ratio's mean then leaves 1 by more than 0.05. verl's mean probability gap is ~0.003 for a bf16
# vLLM rollout and ~0.012 for FP8 (reported by verl users); 10x bf16, 0.03, is beyond a precision choice.
ENGINE_LOGP_DIFF, ENGINE_IS_DEV, ENGINE_PROB_DIFF = 0.1, 0.05, 0.03
# The raw ratio's mean when a run logs it (ours, NeMo-RL, slime), else the correction weight's (TRL logs the ratio
# after its clamp, or with masked tokens as 0: a mean well below 1 then also says much was masked, itself a
# mismatch). Per token only: a per-response ratio is a product and has its own yardstick (SEQ_IS below).
IS_RATIO = ("policy/rollout_is_ratio_mean", "policy/rollout_is_weight_mean")
PROB_DIFF = ("policy/rollout_prob_abs_diff",)
# NeMo-RL's token_mult_prob_error, the mean of exp(|gap|) per token: exp(ENGINE_LOGP_DIFF) on every token is 1.105.
EXP_GAP = ("policy/rollout_exp_logprob_abs_diff",)
ENGINE_EXP_DEV = float(np.expm1(ENGINE_LOGP_DIFF))
# A per-token KL estimate of the rollout to the trainer (k1 or k3): for small gaps KL ~ E[gap^2] / 2, so
# ENGINE_LOGP_DIFF on every token is 0.005 nats, and a heavy-tailed gap of the same mean has a larger square:
# 0.01 is beyond that. OpenRLHF's vllm_kl is the same k1 estimate under its own name (`vllm_kl` below).
ENGINE_KL = 0.01
ROLLOUT_KL = ("policy/rollout_kl",)
# (column names, bound, what it measures, judged as |x - 1|?): per-token gaps, each on its own scale
ENGINE_GAPS = ((("policy/rollout_logprob_abs_diff",), ENGINE_LOGP_DIFF, "mean |log p rollout - log p train|", False),
               (IS_RATIO, ENGINE_IS_DEV, "|mean IS ratio - 1|", True),
               (PROB_DIFF, ENGINE_PROB_DIFF, "mean |p rollout - p train|", False),
               (EXP_GAP, ENGINE_EXP_DEV, "mean exp(|log p rollout - log p train|) - 1", True),
               (ROLLOUT_KL, ENGINE_KL, "KL(rollout || train) per token", False))
# A per-response ratio is the product of the response's token ratios: its log is the sum of the signed per-token
# log gaps, so |log ratio| <= length x mean |gap|. ENGINE_LOGP_DIFF on every token of an 8,000-token response
# allows a product anywhere in exp(+-800), and numerics of 1e-4 per token (ratios of 1.0001) already make 0.45 or
# 2.2. The yardstick is the per-token gap the product implies, |log ratio| / mean length, against
# ENGINE_LOGP_DIFF; without the length there is none. (A mean of products is not the product at the mean gap: the
# spread across responses pulls it up, Jensen, so below 1 this errs towards silence and above 1 towards an alarm;
# the per-token columns, when logged, judge the gap itself.)
SEQ_IS = ("policy/rollout_is_seq_ratio_mean", "policy/rollout_is_seq_weight_mean")
LENGTH = "completions/len_mean"
# A per-token gap that grows: at fixed weights the engine and the trainer differ by the same numerics at every
# step (the gap is a property of the two kernels on those weights), and a learning rate moves the weights smoothly
# (at a learning rate of 0 not at all). A gap that keeps rising from the first steps (a significant Mann-Kendall
# trend) to GAP_GROWTH times its first level says something accumulates between the two: weights not synced, a
# cache kept across updates, a drifting copy. Judged above the fp32 round-off floor LOGPROB_DIFF (1e-3 nats, in
# the gap's units: a KL of about half its square) and on MIN_GROWTH_STEPS logged steps or more.
# (column, what it is, its value at no gap, its floor)
GAP_GROWTH, MIN_GROWTH_STEPS = 3.0, 8
GROWING = (("policy/rollout_logprob_abs_diff", "mean |log p rollout - log p train|", 0.0, LOGPROB_DIFF),
           ("policy/rollout_kl", "KL(rollout || train) per token", 0.0, LOGPROB_DIFF ** 2 / 2),
           ("policy/rollout_exp_logprob_abs_diff", "mean exp(|log p rollout - log p train|) - 1", 1.0, LOGPROB_DIFF))
# A per-token gap that steps up and stays (huggingface/trl#5312: with vLLM's sleep mode the engine woke without
# the weights just synced, and sampled from them for the rest of the run: the gap at bf16 numerics on the first
# step, 0.81 nats per token at the end, an IS ratio of 3e-7). The engine's weights were right while the gap sat
# within numerics (its bound, the per-token yardstick above), then a sync, a wake-up or a reload stopped putting
# the trainer's weights in the engine. Its shape: at least one logged step within the bound; from the first step
# beyond it, a level that is GAP_GROWTH (3) times the level before (the growth bar above), reached at once (that
# first step is already JUMP_REACH of the new level: a climb crosses the bound low and keeps rising, which
# _growing_gap judges) and kept (STAY_SHARE of the later steps beyond the bound, on MIN_STAY of them or more).
JUMP_REACH, STAY_SHARE, MIN_STAY = 0.5, 0.8, 3
# (column, what it is, its value at no gap, its bound)
JUMPING = (("policy/rollout_logprob_abs_diff", "mean |log p rollout - log p train|", 0.0, ENGINE_LOGP_DIFF),
           ("policy/rollout_kl", "KL(rollout || train) per token", 0.0, ENGINE_KL),
           ("policy/rollout_exp_logprob_abs_diff", "mean exp(|log p rollout - log p train|) - 1", 1.0, ENGINE_EXP_DEV),
           ("policy/rollout_is_ratio_mean", "|mean IS ratio - 1|", 1.0, ENGINE_IS_DEV),
           ("policy/rollout_is_weight_mean", "|mean IS weight - 1|", 1.0, ENGINE_IS_DEV))
VLLM_KL = ("vllm_kl", "train/vllm_kl")
# per-token extremes shown beside a gap: (column, what it is)
GAP_EXTREMES = (("policy/rollout_logprob_abs_diff_max", "largest |log p rollout - log p train| on one token"),
                ("policy/rollout_prob_abs_diff_max", "largest |p rollout - p train| on one token"),
                ("policy/rollout_is_ratio_min", "smallest IS ratio"), ("policy/rollout_is_ratio_max", "largest IS ratio"))


def engine_gap(d: RunData) -> list:
    """[evidence] when a serving engine's log-probs are far from the trainer's, each gap on its own yardstick
    (per-token gaps, a per-response product ratio, a gap that grows), with the per-token extremes beside them."""
    out = []
    for names, bound, stat, dev in ENGINE_GAPS:
        name = next((n for n in names if d.dense(n) is not None), None)
        if name is None:
            continue
        steps, x = d.dense(name)
        gap = np.abs(x - 1.0) if dev else x
        v = float(np.median(gap))
        if v > bound:
            out.append(evidence(name, v, bound, "median over logged steps",
                                f"{stat}: median {fmt(v)} > {bound:g}, beyond bf16 numerics (at the first logged "
                                f"step {int(steps[0])}: {fmt(float(gap[0]))})"))
    out += _sequence_gap(d) + _growing_gap(d)
    if out:
        for name, what in GAP_EXTREMES:
            x = d.dense(name)
            if x is not None and len(x[1]):
                v = float(np.median(x[1]))
                out.append(evidence(name, v, None, "median over logged steps", f"{what}: median {fmt(v)}"))
    return out


def implied_token_gap(d: RunData) -> tuple[str, np.ndarray, np.ndarray, np.ndarray] | None:
    """(column, steps, per-response ratio, the per-token gap it implies |log ratio| / mean length) on the steps that
    log both a per-response ratio (SEQ_IS) and the mean completion length; None without them. (T,) arrays."""
    name = next((n for n in SEQ_IS if d.dense(n) is not None), None)
    length = d.dense(LENGTH)
    if name is None or length is None:
        return None
    steps, x = d.dense(name)
    at = np.isin(steps, length[0])
    lengths = np.interp(steps[at], length[0], length[1])
    ok = lengths > 0
    if not ok.any():
        return None
    steps, x, lengths = steps[at][ok], x[at][ok], lengths[ok]
    with np.errstate(divide="ignore"):
        per_token = np.abs(np.log(np.maximum(x, 0.0))) / lengths  # every response masked (mean 0): no bound holds
    return name, steps, x, per_token


def _sequence_gap(d: RunData) -> list:
    """[evidence] when the per-response ratio implies a per-token gap beyond ENGINE_LOGP_DIFF (SEQ_IS)."""
    got = implied_token_gap(d)
    if got is None:
        return []
    name, _, x, per_token = got
    v = float(np.median(per_token))
    if not v > ENGINE_LOGP_DIFF:
        return []
    length = float(np.median(d.dense(LENGTH)[1]))
    return [evidence(name, float(np.median(x)), None, "median over logged steps",
                     f"per-response IS ratio (a product over the response's tokens): median {fmt(float(np.median(x)))} "
                     f"over responses of {fmt(length)} tokens on average is a per-token gap of {fmt(v)} nats "
                     f"(|log ratio| / length) > {ENGINE_LOGP_DIFF:g}, beyond bf16 numerics")]


def _growing_gap(d: RunData) -> list:
    """[evidence] when a per-token gap rises from its first steps to GAP_GROWTH times its first level (GROWING)."""
    for name, what, zero, floor in GROWING:
        x = d.dense(name)
        if x is None or len(x[1]) < MIN_GROWTH_STEPS:
            continue
        steps, gap = x[0], np.abs(x[1] - zero)
        start, end = first_level(gap), float(np.median(gap[-max(3, len(gap) // 4):]))
        t = trend(steps, gap)
        if t is None or t.direction() != "up" or not end > max(floor, GAP_GROWTH * start):
            continue
        # the raw column: an all-zero learning rate reads as "not logged" through d.col (a placeholder zero)
        lr = d.values("optim/lr")
        lr = None if lr is None else lr[np.isin(d.steps, steps)]
        still = lr is not None and len(lr) > 0 and bool(np.all(lr == 0))
        return [evidence(name, end, GAP_GROWTH * start, "median of the last quarter of the logged steps",
                         f"{what} grows from {fmt(start)} (first steps) to {fmt(end)} (last quarter), "
                         f"{fmt(end / start) + ' times' if start > 0 else 'from 0'}, rising step after step "
                         f"(Mann-Kendall p = {t.p:.2g})" + (" while the learning rate is 0: the weights did not move"
                                                             if still else "")
                         + "; numerics at fixed weights give the same gap at every step")]
    return []


def gap_jump(d: RunData) -> tuple[list, int | None]:
    """([evidence], the step it jumped at) of the first per-token gap (JUMPING) that sits within its bound, then steps up to a new level and
    stays there: the weights the engine samples from stopped being the trainer's at that step. ([], None): none."""
    for name, what, zero, bound in JUMPING:
        x = d.dense(name)
        if x is None:
            continue
        steps, gap = x[0], np.abs(x[1] - zero)
        beyond = np.flatnonzero(gap > bound)
        if not len(beyond) or beyond[0] == 0:
            continue
        k = int(beyond[0])
        before, after = float(np.median(gap[:k])), float(np.median(gap[k:]))
        if (len(gap) - k < MIN_STAY or np.mean(gap[k:] > bound) < STAY_SHARE or after < GAP_GROWTH * before
                or gap[k] < JUMP_REACH * after):
            continue
        return [evidence(name, after, bound, f"median from step {int(steps[k])} on",
                         f"{what} sits at {fmt(before)} (within numerics) until step {int(steps[k - 1])}, then jumps "
                         f"to {fmt(float(gap[k]))} at step {int(steps[k])} and stays (median {fmt(after)} over "
                         f"{len(gap) - k} logged steps): from there the engine samples from other weights than the "
                         "trainer's")], int(steps[k])
    return [], None


def vllm_kl(d: RunData) -> list:
    """[evidence] when OpenRLHF's vllm_kl (k1 KL of vLLM's sampling to the trainer) is beyond ENGINE_KL."""
    name = next((n for n in VLLM_KL if d.dense(n) is not None), None)
    if name is None:
        return []
    steps, x = d.dense(name)
    v = float(np.median(x))
    if v <= ENGINE_KL:
        return []
    return [evidence(name, v, ENGINE_KL, "median over logged steps",
                     f"{name} (log p vLLM - log p trainer on vLLM's tokens, a KL estimate): median {fmt(v)} > "
                     f"{ENGINE_KL:g} nats, beyond bf16 numerics (at the first logged step {int(steps[0])}: "
                     f"{fmt(float(x[0]))})")]
