"""first_step_ratio: the ratio before the first update is not 1 (notes, section 8 and section 9 q.3): the
rollout's old log-probs disagree with the training model (precision, serving engine, wrong policy).

When the old log-probs and the current policy should be the same model, the ratio on the first minibatch
should be very close to 1. Our trainer logs that ratio; other frameworks do not, so each is judged on what
it logs:
- TRL with several optimizer steps per generation batch (num_iterations > 1, or steps_per_generation above
  gradient_accumulation_steps): the first optimizer step of each batch is on-policy, so its clip fraction must
  be 0 (ratio 1 clips nothing); a clip fraction there is a mismatch. Which steps are first comes from the
  run's config; judged only when every step is logged (logging_steps = 1), since TRL averages between logs.
- TRL with vLLM: `sampling/sampling_logp_difference/mean` (our policy/rollout_logprob_abs_diff) and
  `sampling/importance_sampling_ratio/mean` (policy/rollout_is_weight_mean: TRL logs it after its correction);
  verl: `training/rollout_probs_diff_mean` (policy/rollout_prob_abs_diff) when it is logged; our trainer with a
  rollout correction: policy/rollout_is_ratio_mean. Each is measured where the trainer's log-probs are taken
  for the batch the engine just sampled, before any update on it: every logged value is a first-step value.
  These compare the serving engine with the trainer; TRL and verl correct small gaps, so only a gap far above
  bf16 numerics is reported, as a warning. The per-token max of the gap is evidence, never an alarm on its own:
  one rare token in a batch differs by nats under plain bf16.
"""

from __future__ import annotations

import numpy as np

from dashboard.diagnosis import checks as C
from dashboard.diagnosis.build import evidence, finding, fmt
from dashboard.diagnosis.context import RunData
from dashboard.diagnosis.findings import NotJudged
from dashboard.diagnosis.registry import rule

# First-step ratio. Recomputing old log-probs with the training model in the same precision gives |r-1|
# ~1e-6 (fp32 round-off); a bf16 rollout pass against fp32 training gives per-token deviations of
# 1e-2 to 1e-1 (bf16 keeps 8 mantissa bits; measured on CPU: 0.03-0.05). A max deviation of 0.01 sits
# orders of magnitude above the first and below the second.
FIRST_STEP_MAX_DEV = 0.01
FIRST_STEP_MEAN_DEV = 0.01  # |mean ratio - 1| on the first minibatch
LOGPROB_DIFF = 1e-3  # mean |log p rollout - log p train|: fp32 vs fp32 is ~1e-7
# A clip fraction on on-policy steps: ratio 1 clips nothing, and fp noise (|r - 1| ~ 1e-3) never reaches the
# clip range (0.2); so any clip there is a mismatch. Half of the first steps with some clipping, and 3 of them.
CLIP_ON_POLICY_SHARE, MIN_FIRST_STEPS = 0.5, 3
# Serving vs training: bf16 engines differ from the trainer by ~1e-2 nats per token on average; 0.1 nats (a
# 10% probability ratio on the average token) is beyond numerics: wrong weights synced, another tokenizer or
# template. The IS ratio's mean then leaves 1 by more than 0.05. verl's mean probability gap is ~0.003 for a bf16
# vLLM rollout and ~0.012 for FP8 (reported by verl users); 10x bf16, 0.03, is beyond a precision choice.
ENGINE_LOGP_DIFF, ENGINE_IS_DEV, ENGINE_PROB_DIFF = 0.1, 0.05, 0.03
# The raw ratio's mean when a run logs it (ours), else the correction weight's (TRL logs the ratio after its
# clamp, or with masked tokens as 0: a mean well below 1 then also says much was masked, itself a mismatch).
IS_RATIO = ("policy/rollout_is_ratio_mean", "policy/rollout_is_weight_mean")
PROB_DIFF = ("policy/rollout_prob_abs_diff",)
# (column names, bound, what it measures, judged as |x - 1|?)
ENGINE_GAPS = ((("policy/rollout_logprob_abs_diff",), ENGINE_LOGP_DIFF, "mean |log p rollout - log p train|", False),
               (IS_RATIO, ENGINE_IS_DEV, "|mean IS ratio - 1|", True),
               (PROB_DIFF, ENGINE_PROB_DIFF, "mean |p rollout - p train|", False))
# per-token extremes shown beside a gap: (column, what it is)
GAP_EXTREMES = (("policy/rollout_logprob_abs_diff_max", "largest |log p rollout - log p train| on one token"),
                ("policy/rollout_prob_abs_diff_max", "largest |p rollout - p train| on one token"),
                ("policy/rollout_is_ratio_min", "smallest IS ratio"), ("policy/rollout_is_ratio_max", "largest IS ratio"))


def on_policy_steps(d: RunData) -> tuple[np.ndarray, str] | None:
    """(mask (T,) of the optimizer steps that start a TRL generation batch, how) from the run's config; None when
    the config does not say, every step is on-policy anyway, or steps are not logged one by one."""
    it = d.number("num_iterations")
    spg, ga = d.number("steps_per_generation"), d.number("gradient_accumulation_steps")
    log = d.number("logging_steps")
    if it is None or log is None or log[1] != 1:
        return None
    per_batch = it[1] * (spg[1] / ga[1] if spg and ga and ga[1] > 0 else 1.0)  # optimizer steps per generation
    if per_batch <= 1 or per_batch != int(per_batch):
        return None
    p = int(per_batch)
    how = f"num_iterations = {it[1]:g}" + (f", steps_per_generation = {spg[1]:g} / gradient_accumulation_steps = "
                                             f"{ga[1]:g}" if spg and ga else "") + f": one optimizer step in {p} starts a batch"
    return (d.steps - 1) % p == 0, how


def _trl_first_steps(d: RunData) -> list:
    """[evidence] when the clip fraction is not 0 on most on-policy first steps of TRL's generation batches."""
    hit, clip = on_policy_steps(d), d.col("policy/clipfrac")
    if hit is None or clip is None:
        return []
    mask, how = hit
    first = clip[mask & np.isfinite(clip)]
    if len(first) < MIN_FIRST_STEPS:
        return []
    share = float((first > 0).mean())
    if share < CLIP_ON_POLICY_SHARE:
        return []
    return [evidence("policy/clipfrac", float(np.median(first)), 0.0, f"median over {len(first)} on-policy steps",
                     f"the clip fraction is above 0 on {fmt(100 * share)}% of the {len(first)} first optimizer steps "
                     f"of a generation batch ({how}), where the policy still equals the one that sampled")]


def _engine_gap(d: RunData) -> list:
    """[evidence] when a serving engine's log-probs are far from the trainer's (TRL+vLLM, verl, ours), with the
    value at the first logged step and the per-token extremes beside it."""
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
    if out:
        for name, what in GAP_EXTREMES:
            x = d.dense(name)
            if x is not None and len(x[1]):
                v = float(np.median(x[1]))
                out.append(evidence(name, v, None, "median over logged steps", f"{what}: median {fmt(v)}"))
    return out


@rule("first_step_ratio", "first-step ratio away from 1 (old log-prob / precision mismatch)", "first_step_ratio")
def first_step_ratio(d: RunData):
    # Judged from the first step on, without a warm-up: a precision mismatch is there from step 0, and the
    # median over the steps seen so far keeps one odd step from firing it once more steps exist.
    dev = d.dense("policy/ratio_first_step_max_dev")
    mean = d.dense("policy/ratio_first_step")
    if dev is None and mean is None:
        return from_proxies(d)
    ev, fire_at = [], []
    if dev is not None and len(dev[1]):
        v = float(np.median(dev[1]))
        if v > FIRST_STEP_MAX_DEV:
            ev.append(evidence("policy/ratio_first_step_max_dev", v, FIRST_STEP_MAX_DEV, "median over logged steps",
                               f"max |ratio - 1| before any update: median {fmt(v)} > {FIRST_STEP_MAX_DEV}"))
            fire_at.append(dev[0][dev[1] > FIRST_STEP_MAX_DEV])
    if mean is not None and len(mean[1]):
        v = float(np.median(np.abs(mean[1] - 1.0)))
        if v > FIRST_STEP_MEAN_DEV:
            ev.append(evidence("policy/ratio_first_step", 1.0 + v, 1.0 + FIRST_STEP_MEAN_DEV, "median |ratio - 1|",
                               f"mean first-step ratio off 1 by {fmt(v)} (median) > {FIRST_STEP_MEAN_DEV}"))
            fire_at.append(mean[0][np.abs(mean[1] - 1.0) > FIRST_STEP_MEAN_DEV])
    if not ev:
        return []
    diff = d.dense("policy/rollout_logprob_abs_diff")
    if diff is not None and len(diff[1]):
        v = float(np.median(diff[1]))
        ev.append(evidence("policy/rollout_logprob_abs_diff", v, LOGPROB_DIFF, "median over logged steps",
                           f"rollout vs training log-probs of the same tokens differ by {fmt(v)} on average"))
    clip0 = d.dense("policy/clipfrac")
    if clip0 is not None and len(clip0[1]):
        ev.append(evidence("policy/clipfrac", float(np.median(clip0[1])), None, "median",
                           f"clip fraction median {fmt(float(np.median(clip0[1])))}"))
    steps = np.concatenate(fire_at)
    return [finding("first_step_ratio", "critical", "First-step ratio is not 1: old log-probs disagree with the "
                    "training model", (int(steps.min()), int(steps.max())), ev, C.FIRST_STEP,
                    metrics=("policy/ratio_first_step", "policy/ratio_first_step_max_dev"))]



def from_proxies(d: RunData):
    """The check for frameworks without our ratio: TRL's on-policy first steps (critical: ratio 1 clips nothing),
    else a serving-engine gap far beyond numerics (warning: TRL and verl correct the small ones)."""
    first = _trl_first_steps(d)
    gap = _engine_gap(d)
    if not first and not gap:
        known = on_policy_steps(d) is not None or any(d.dense(n) is not None for n in
                                                          ("policy/rollout_logprob_abs_diff", *IS_RATIO, *PROB_DIFF))
        if known:
            return []
        return NotJudged("first_step_ratio", "neither policy/ratio_first_step nor a framework's stand-in (TRL clip "
                         "fraction on the first step of a generation batch with num_iterations > 1 and "
                         "logging_steps = 1, vLLM or verl rollout-vs-training log-prob gaps) is logged")
    rng = (int(d.steps[0]), int(d.steps[-1]))
    if first:
        return [finding("first_step_ratio", "critical", "First-step ratio is not 1: the clip fraction is not 0 on "
                        "on-policy steps", rng, first + gap, C.FIRST_STEP, metrics=("policy/clipfrac",))]
    return [finding("first_step_ratio", "warning", "The rollout engine's log-probs are far from the trainer's", rng,
                    gap, C.FIRST_STEP, metrics=tuple(e.metric for e in gap))]
