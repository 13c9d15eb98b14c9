"""first_step_ratio: the ratio before the first update is not 1 (notes, section 8 and section 9 q.3): the
rollout's old log-probs disagree with the training model (precision, serving engine, wrong policy).

When the old log-probs and the current policy should be the same model, the ratio on the first minibatch
should be very close to 1. Our trainer logs that ratio; other frameworks do not, so each is judged on what
it logs:
- TRL with several optimizer steps per generation batch (num_iterations > 1, or steps_per_generation above
  gradient_accumulation_steps): the first optimizer step of each batch is on-policy, so its clip fraction must
  be 0 (ratio 1 clips nothing); a clip fraction there is a mismatch. Which steps are first comes from the
  run's config; judged only when every step is logged (logging_steps = 1), since TRL averages between logs.
- A serving engine's gap to the trainer, each measure on its own yardstick (collectors/schema.py keeps one
  meaning per column): per token, the mean |log p rollout - log p train| (TRL's sampling_logp_difference, slime's
  train_rollout_logprob_abs_diff), the IS ratio or weight (NeMo-RL's sampling_importance_ratio, slime's tis,
  TRL's in its token modes, ours), verl's probability gap, NeMo-RL's exp-gap (token_mult_prob_error) and a
  KL(rollout || train) estimate (NeMo-RL's gen_kl_error, prime-rl's mismatch_kl, ms-swift's k3_kl, AReaL's
  behave_approx_kl negated); per response, a product of token ratios (TRL's sequence modes, ours), judged by the
  per-token gap it implies over the mean response length; and over time, a per-token gap that keeps
  growing, which numerics at fixed weights cannot do (rules/engine_gap.py). Each is measured where the trainer's log-probs are
  taken for the batch the engine just sampled, before any update on it: every logged value is a first-step value.
  These frameworks correct small gaps, so only a gap far above bf16 numerics is reported, as a warning. The
  per-token max of the gap is evidence, never an alarm on its own: one rare token in a batch differs by nats
  under plain bf16. OpenRLHF with --enable_vllm_is_correction logs
  `vllm_kl`, the mean of log p rollout - log p old on the tokens vLLM sampled: a k1 estimate of KL(vLLM ||
  trainer), judged on the same yardstick (a gap of ENGINE_LOGP_DIFF nats on every token is a KL of about half
  its square).
- TRL's first logged step, when it is step 1: a log at step 1 covers the first optimizer step alone, which is
  on-policy whatever the config (the old log-probs were taken with the same weights), so its clip fraction must
  be 0 where TRL computes old log-probs at all (a clip fraction is logged above 0 only then). Judged without
  the config; a clip level present from this step on is a mismatch signature, not an explosion (issue 24).
- Any framework whose first logged step (step 1, before which nothing was updated) falls in a learning-rate
  warm-up (OpenRLHF, verl, TRL with warm-up): the step's clip fraction and old-vs-current KL average the step's
  minibatches, the first of them on-policy and the others after updates at that small learning rate, so they
  can only be what that learning rate moves. The yardstick is the clip range and the learning rate: a
  full-learning-rate step of healthy PPO clips at most CLIP_AT_FULL_LR of the tokens at a clip range of
  EPS_REF; a step at a fraction f of the run's learning rate moves each log-ratio about f as far (Adam steps
  scale with the learning rate), so with a tail no heavier than 1/t a token clips at most CLIP_AT_FULL_LR x f x
  EPS_REF / eps as often; the KL likewise stays under KL_AT_FULL_LR x f. Far above that, the old log-probs and
  the training forward of the same weights disagree (precision, kernels, packing, the wrong weights synced).
  OpenRLHF's `logprobs_diff` (log p actor - log p reference, signed) is shown beside it: it measures the
  reference, not the rollout, and reference_mismatch judges the KL to the reference.
"""

from __future__ import annotations

import numpy as np

from dashboard.diagnosis import checks as C
from dashboard.diagnosis.build import evidence, finding, fmt
from dashboard.diagnosis.context import RunData
from dashboard.diagnosis.findings import NotJudged
from dashboard.diagnosis.registry import rule
from dashboard.diagnosis.rules.engine_gap import (
    EXP_GAP,
    IS_RATIO,
    LOGPROB_DIFF,
    PROB_DIFF,
    ROLLOUT_KL,
    VLLM_KL,
    engine_gap,
    gap_jump,
    implied_token_gap,
    vllm_kl,
)

# First-step ratio. Recomputing old log-probs with the training model in the same precision gives |r-1|
# ~1e-6 (fp32 round-off); a bf16 rollout pass against fp32 training gives per-token deviations of
# 1e-2 to 1e-1 (bf16 keeps 8 mantissa bits; measured on CPU: 0.03-0.05). A max deviation of 0.01 sits
# orders of magnitude above the first and below the second.
FIRST_STEP_MAX_DEV = 0.01
FIRST_STEP_MEAN_DEV = 0.01  # |mean ratio - 1| on the first minibatch
# A clip fraction on on-policy steps: ratio 1 clips nothing, and fp noise (|r - 1| ~ 1e-3) never reaches the
# clip range (0.2); so any clip there is a mismatch. Half of the first steps with some clipping, and 3 of them.
CLIP_ON_POLICY_SHARE, MIN_FIRST_STEPS = 0.5, 3
LOGPROBS_DIFF = ("logprobs_diff", "train/logprobs_diff")
# TRL's step 1 (on-policy): ratio 1 clips nothing; above half a percent of the tokens is no rare-token round-off.
CLIP_STEP_ONE = 0.005
# Warm-up yardstick (module docstring): PPO practice keeps the clip fraction under 0.2 at a clip range of 0.2 on a
# full-learning-rate step (kl.CLIP_HIGH) and its old-vs-current KL near 0.01-0.02 (the target_kl of PPO codes); a
# step is "in warm-up" at half the run's learning rate or less. Floors: half a percent of the tokens, 1e-3 nats.
CLIP_AT_FULL_LR, EPS_REF, KL_AT_FULL_LR = 0.2, 0.2, 0.02
WARMUP_FRACTION = 0.5
MIN_CLIP, MIN_KL = 0.005, 1e-3
WARMUP_CRITICAL = 10.0  # this many times what the learning rate allows: beyond doubt
# the run's configured learning rate (OpenRLHF before and from 0.10, verl, TRL, ours): exact names first
LR_KEYS = ("actor_learning_rate", "actor.adam.lr", "actor_rollout_ref.actor.optim.lr", "learning_rate", "optim.lr")
# clip range: (low, high) pairs, then single values
CLIP_PAIRS = (("eps_clip_low_high",), ("clip_ratio_low", "clip_ratio_high"), ("algo.clip_eps_low", "algo.clip_eps_high"),
              ("epsilon", "epsilon_high"))
CLIP_SINGLE = ("eps_clip", "clip_ratio", "cliprange", "epsilon")
TRL_SOURCES = ("trl", "trl-console", "trl-notebook")


def on_policy_steps(d: RunData) -> tuple[np.ndarray, str] | None:
    """(mask (T,) of the optimizer steps that start a TRL generation batch, how) from the run's config; None when
    the config does not say, every step is on-policy anyway, or steps are not logged one by one."""
    it = d.number("num_iterations")
    spg, ga = d.number("steps_per_generation"), d.number("gradient_accumulation_steps")
    log = d.number("logging_steps")
    if log is None and d.n >= 2 and d.steps[0] == 1 and bool(np.all(np.diff(d.steps) == 1)):
        log = ("every step logged", 1.0)  # a config without logging_steps (a console log): the steps say so
    if it is None or log is None or log[1] != 1:
        return None
    per_batch = it[1] * (spg[1] / ga[1] if spg and ga and ga[1] > 0 else 1.0)  # optimizer steps per generation
    if not np.isfinite(per_batch) or per_batch <= 1 or per_batch != int(per_batch):  # inf: a damaged config
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



def is_trl(d: RunData) -> bool:
    """A TRL run: read by a TRL reader, or configured with GRPOConfig's own names."""
    return d.source in TRL_SOURCES or (d.setting("num_generations") is not None
                                       and d.setting("num_iterations") is not None)


def _first(d: RunData, names: tuple[str, ...]) -> tuple[str, float] | None:
    """(name, value) of the first of `names` logged at the run's first logged step, when that is step 1 or
    earlier (nothing was updated before it)."""
    if not d.n or d.steps[0] > 1:
        return None
    for name in names:
        x = d.dense(name)
        if x is not None and len(x[0]) and x[0][0] == d.steps[0]:
            return name, float(x[1][0])
    return None


def trl_step_one(d: RunData) -> tuple[float, float] | None:
    """(clip fraction at TRL's step 1, the run's median clip fraction) when a TRL run logs step 1 and clips more
    than CLIP_STEP_ONE of its tokens there; else None. A log at step 1 covers the first optimizer step alone,
    on-policy in every configuration: a clip fraction there is a mismatch."""
    if not is_trl(d) or not d.n or d.steps[0] != 1:
        return None
    hit = _first(d, ("policy/clipfrac",))
    if hit is None or not hit[1] > CLIP_STEP_ONE:
        return None
    return hit[1], float(np.median(d.dense("policy/clipfrac")[1]))


def clip_range(d: RunData) -> tuple[float, str]:
    """(the smaller side of the PPO clip range, where it comes from): the config's, else EPS_REF assumed."""
    for names in CLIP_PAIRS:
        found = [(n, hit[1]) for n in names if (hit := d.setting(n)) is not None]
        values = [v for _, v in found for v in (v if isinstance(v, list) else [v])]
        nums = [float(v) for v in values if isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0]
        if nums:
            return min(nums), f"from config {' / '.join(d.setting(n)[0] for n, _ in found)}"
    hit = d.number(*CLIP_SINGLE)
    if hit is not None and hit[1] > 0:
        return hit[1], f"from config {hit[0]}"
    return EPS_REF, "assumed: not in the config"


def _lr_reference(d: RunData, lrs: np.ndarray) -> tuple[float, str]:
    """(the run's learning rate after warm-up, how it is known): the config's or the largest logged, the larger."""
    top = float(np.max(lrs))
    cfg = d.number(*LR_KEYS)
    if cfg is not None and np.isfinite(cfg[1]) and cfg[1] > top:
        return cfg[1], f"config {cfg[0]} = {fmt(cfg[1])}"
    return top, f"the run's largest logged learning rate {fmt(top)}"


def warmup_first_step(d: RunData) -> tuple[list, bool, tuple[int, int]] | None:
    """(evidence, beyond doubt?, step range) when the first step's clip fraction or old-vs-current KL is far above
    what its warm-up learning rate can move (module docstring); the warm-up steps after it are counted beside it.
    None when it is not, or when the first step is not in a warm-up (see `warmup_judged`)."""
    got = warmup_judged(d)
    if got is None:
        return None
    lr_steps, lrs, ref, how = got
    eps, eps_how = clip_range(d)
    warm = lr_steps[:int(np.argmax(lrs > WARMUP_FRACTION * ref))] if (lrs > WARMUP_FRACTION * ref).any() else lr_steps
    ev, crit = [], False
    for name, per_f, floor, what in (("policy/clipfrac", CLIP_AT_FULL_LR * EPS_REF / eps, MIN_CLIP,
                                      "of the tokens clipped"),
                                     ("policy/approx_kl_old", KL_AT_FULL_LR, MIN_KL, "nats old-vs-current KL")):
        x = d.dense(name)
        if x is None or x[0][0] != lr_steps[0]:
            continue
        at = np.isin(x[0], warm)
        steps, vals = x[0][at], np.abs(x[1][at])
        f = np.interp(steps, lr_steps, lrs) / ref
        bound = np.maximum(floor, per_f * f)
        over = vals > bound
        if not over[0]:
            continue
        crit |= bool(vals[0] >= WARMUP_CRITICAL * bound[0])
        shown = fmt(100 * vals[0]) + "%" if name == "policy/clipfrac" else fmt(vals[0])
        allows = fmt(100 * bound[0]) + "%" if name == "policy/clipfrac" else fmt(bound[0])
        ev.append(evidence(name, float(vals[0]), float(bound[0]), f"value at step {int(steps[0])} (warm-up)",
                           f"at step {int(steps[0])}, {shown} {what} with the learning rate at {fmt(f[0] * ref)}, "
                           f"{fmt(f[0])} of {how}: that moves at most {allows} (clip range {fmt(eps)}, {eps_how}); "
                           f"over it on {int(over.sum())} of {len(over)} warm-up step(s)"))
    if not ev:
        return None
    diff = _first(d, LOGPROBS_DIFF)
    if diff is not None:
        ev.append(evidence(diff[0], diff[1], None, f"value at step {int(d.steps[0])}",
                           f"{diff[0]} (log p actor - log p reference, signed) at the first step: {fmt(diff[1])}"))
    return ev, crit, (int(warm[0]), int(warm[-1]))


def warmup_judged(d: RunData) -> tuple[np.ndarray, np.ndarray, float, str] | None:
    """(steps and values of the logged learning rate, the run's learning rate after warm-up, how it is known) when
    the run's first logged step is step 1 or earlier, logs its learning rate, and that is in a warm-up (at most
    WARMUP_FRACTION of the run's); None otherwise."""
    lr = _first(d, ("optim/lr",))
    if lr is None:
        return None
    lr_steps, lrs = d.dense("optim/lr")
    ref, how = _lr_reference(d, lrs)
    if not (np.isfinite(ref) and ref > 0) or max(lr[1], 0.0) > WARMUP_FRACTION * ref:
        return None
    return lr_steps, lrs, ref, how


def from_proxies(d: RunData):
    """The check for frameworks without our ratio: TRL's on-policy steps (step 1, and the first step of each
    generation batch; critical: ratio 1 clips nothing), a first step in warm-up clipping far more than its learning
    rate moves (warning; critical ten times over), else a serving-engine gap far beyond numerics (warning: TRL,
    verl and OpenRLHF correct the small ones)."""
    first = _trl_first_steps(d)
    one = trl_step_one(d)
    warm = warmup_first_step(d)
    jump, jumped_at = gap_jump(d)
    gap = jump + [e for e in engine_gap(d) + vllm_kl(d) if e.metric not in {j.metric for j in jump}]
    sync = (C.WEIGHT_SYNC,) if jump else ()  # huggingface/trl#5312: the maintainers' first check
    if not (first or one or warm or gap):
        known = (on_policy_steps(d) is not None or (is_trl(d) and _first(d, ("policy/clipfrac",)) is not None)
                 or (warmup_judged(d) is not None and any(d.dense(n) is not None for n in
                                                          ("policy/clipfrac", "policy/approx_kl_old")))
                 or any(d.dense(n) is not None for n in ("policy/rollout_logprob_abs_diff", *IS_RATIO, *PROB_DIFF,
                                                         *EXP_GAP, *ROLLOUT_KL, *VLLM_KL))
                 or implied_token_gap(d) is not None)
        if known:
            return []
        return NotJudged("first_step_ratio", "neither policy/ratio_first_step nor a framework's stand-in (TRL's clip "
                         "fraction on its on-policy steps: step 1, or the first step of a generation batch with "
                         "num_iterations > 1; a clip fraction or old-vs-current KL at a step 1 in learning-rate "
                         "warm-up; a serving engine's rollout-vs-training log-prob gap, as TRL with vLLM, verl, "
                         "OpenRLHF, NeMo-RL, slime, AReaL, prime-rl and ms-swift log it) is logged")
    rng = (int(d.steps[0]), int(d.steps[-1]))
    if first or one:
        ev = list(first)
        if one is not None:
            c1, med = one
            level = med >= CLIP_STEP_ONE and c1 >= 0.5 * med
            ev.append(evidence("policy/clipfrac", c1, CLIP_STEP_ONE, "value at step 1",
                               f"{fmt(100 * c1)}% of the tokens clipped at step 1, TRL's first optimizer step, where "
                               "the policy is the one that sampled (ratio 1 clips nothing)"
                               + (f"; the run's median is {fmt(100 * med)}%: a level present from the on-policy "
                                  "step on, not an explosion" if level else "")))
        severity = "critical" if first or (one is not None and (one[1] >= CLIP_STEP_ONE and one[0] >= 0.5 * one[1])
                                           and one[0] >= 2 * CLIP_STEP_ONE) else "warning"
        return [finding("first_step_ratio", severity, "First-step ratio is not 1: the clip fraction is not 0 on "
                        "on-policy steps", rng, ev + (warm[0] if warm else []) + gap, sync + C.FIRST_STEP,
                        metrics=("policy/clipfrac",))]
    if warm:
        ev, crit, wrng = warm
        return [finding("first_step_ratio", "critical" if crit else "warning",
                        "First-step ratio is not 1: the first step moves far more than its warm-up learning rate "
                        "can", wrng, ev + gap, sync + C.FIRST_STEP,
                        metrics=tuple(dict.fromkeys(e.metric for e in ev)) + ("optim/lr",))]
    cut = truncated_sampling(d)
    if cut is not None:  # huggingface/trl#6789: the engine samples from a cut distribution the trainer does not
        gap = [*gap, evidence(f"config:{cut.split(' = ')[0]}", float("nan"), None, "config",
                              f"{cut}: the engine samples from a truncated distribution and reports its log-probs, "
                              "the trainer scores the full softmax")]
    if jump:
        return [finding("first_step_ratio", "warning", "The rollout engine's log-probs jump away from the trainer's "
                        "and stay: the engine samples from other weights", (jumped_at, rng[1]), gap,
                        sync + ((C.SAMPLING_TRUNCATION,) if cut else ()) + C.FIRST_STEP,
                        metrics=tuple(e.metric for e in gap if not e.metric.startswith("config:")))]
    return [finding("first_step_ratio", "warning", "The rollout engine's log-probs are far from the trainer's", rng,
                    gap, ((C.SAMPLING_TRUNCATION,) if cut else ()) + C.FIRST_STEP,
                    metrics=tuple(e.metric for e in gap if not e.metric.startswith("config:")))]


def truncated_sampling(d: RunData) -> str | None:
    """"top_p = 0.9" / "top_k = 50" when the config samples from a cut distribution (top_p below 1, top_k of 1
    or more: vLLM and verl write -1, TRL 0 or None for none), else None."""
    p, k = d.number("rollout.top_p", "top_p"), d.number("rollout.top_k", "top_k")
    if p is not None and 0 < p[1] < 1:
        return f"{p[0]} = {p[1]:g}"
    if k is not None and k[1] >= 1:
        return f"{k[0]} = {k[1]:g}"
    return None
