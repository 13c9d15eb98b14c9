"""Learning rules: nothing learned although the loss looks normal, eval diverging from train, non-finite
metrics. Notes, section 7 rows 2 and 5."""

from __future__ import annotations

import numpy as np
import pandas as pd

from dashboard.diagnosis import checks as C
from dashboard.diagnosis import facts, stats
from dashboard.diagnosis.build import evidence, finding, fmt
from dashboard.diagnosis.context import RunData
from dashboard.diagnosis.findings import NotJudged
from dashboard.diagnosis.registry import RECHECK_LONG, rule
from dashboard.diagnosis.rules.kl import KL_FLOOR, _jumps
from dashboard.diagnosis.series import WARMUP_STEPS, early_level, late_level, window_for

GRAD_ZERO = 1e-6  # a grad norm this small with non-zero advantages: the gradient never reaches the weights
ADV_SIGNAL = 0.01  # advantage std above this: the batch did carry a learning signal
POLICY_STILL = 1e-8  # KL to the reference this small after the warm-up: the policy never moved
# A fall counts when even the CI's smallest fall is a fifth of the reward's spread between responses. It is
# critical only when the trend test is sure (p < 0.001: a noisy run drifts down by chance, t = -1.3 seen) and the
# fall is large as well: half the spread. Significant is not important: on a long run a fall of 0.009 on a score
# held at 0.95 has a CI that excludes 0, and changes nothing a user would act on.
FALL_BAND, FALL_CRIT_BAND, STRONG_P = 0.2, 0.5, 1e-3
# Greedy eval on a 64-prompt split moves by 0.1-0.15 between evals of a healthy run (seen: 0.5, 0.45, 0.5,
# 0.35), so a fall counts from 0.15 on, between medians of at least two evals each.
EVAL_FALL, EVAL_FALL_CRIT = 0.15, 0.25
MIN_EVALS = 6
# A held-out score need not be a pass rate near 0.5: a recommender's recall@10 sits at 0.04, where 0.15 is four
# times the whole score. There a fall is judged in the score's own units: Mann-Kendall says the evals fall (p <
# ALPHA, the rank test a healthy run's wobble does not pass: it needs 6 evals in nearly falling order), the fall
# (median of the last third of the evals against the first third) is at least EVAL_REL_FALL of the early level
# (a tenth of the held-out score lost is a regression whatever the score's scale; a round share, fitted to no run)
# and at least EVAL_NOISE_FALL times the eval's point-to-point noise (stats.noise: a fall of one eval's wobble is
# no fall, however the ranks line up), while the train reward rises by the test facts.rises applies.
EVAL_REL_FALL, EVAL_NOISE_FALL = 0.1, 2.0
NON_FINITE_WATCH = ("loss/total", "loss/policy", "optim/grad_norm", "policy/entropy", "policy/kl_ref",
                    "reward/mean", "adv/std")


@rule("no_learning", "loss looks normal but nothing is learned", "no_learning", recheck_rows=RECHECK_LONG)
def no_learning(d: RunData):
    if (nj := d.need("no_learning", "reward/mean", min_points=facts.MIN_TREND_STEPS)):
        return nj
    steps, _ = d.dense("reward/mean")
    rng = (int(steps[WARMUP_STEPS]), int(steps[-1]))
    gn, adv, kl = d.dense("optim/grad_norm"), d.dense("adv/std"), d.dense("policy/kl_ref")
    if gn is not None and adv is not None and len(gn[1]) > WARMUP_STEPS:
        g, a = float(np.median(gn[1][WARMUP_STEPS:])), float(np.median(adv[1]))
        if g < GRAD_ZERO and a > ADV_SIGNAL:
            ev = [evidence("optim/grad_norm", g, GRAD_ZERO, "median after the warm-up",
                           f"grad norm median {fmt(g)} although advantages have std {fmt(a)}: the gradient is cut"),
                  evidence("adv/std", a, ADV_SIGNAL, "median", f"advantage std median {fmt(a)}")]
            return [finding("no_learning", "critical", "Nothing is learned: the gradient does not reach the policy",
                            rng, ev, (C.DETACHED, C.MASK, C.SIGN), metrics=("optim/grad_norm", "adv/std"))]
    if kl is not None and len(kl[1]) > 2 * WARMUP_STEPS and np.nanmax(kl[1][WARMUP_STEPS:]) < POLICY_STILL:
        lr = d.number("optim.lr", "learning_rate", "lr")
        if lr is None or lr[1] > 0:
            v = float(np.nanmax(kl[1][WARMUP_STEPS:]))
            ev = [evidence("policy/kl_ref", v, POLICY_STILL, "max after the warm-up",
                           f"KL to the reference never exceeds {fmt(v)}: the policy did not change")]
            return [finding("no_learning", "critical", "Nothing is learned: the policy does not move", rng, ev,
                            (C.DETACHED, C.MASK, C.SAME_SCORE), metrics=("policy/kl_ref",))]
    return reward_falls(d, steps, kl)


def reward_falls(d: RunData, steps: np.ndarray, kl):
    """The other side of reward_flat's test: a significant fall, larger than FALL_BAND of the reward's spread."""
    t = facts.reward_trend(d)
    scale, how = facts.reward_scale(d)
    if not facts.falls(d, t, FALL_BAND):
        return []
    if kl is not None and len(kl[1]) > 10 and _jumps(kl[1], KL_FLOOR).any():
        return []  # a reward that falls after the KL exploded is kl_clip_explode's finding, not a sign bug
    lo, hi = t.change_bounds
    ev = [evidence("reward/mean", t.change, -FALL_BAND * scale, "Theil-Sen change over the run",
                   f"reward falls by {fmt(-t.change)} (95% CI {fmt(-hi)} .. {fmt(-lo)}, Theil-Sen's and the "
                   f"least-squares line's together; "
                   f"Mann-Kendall p = {t.p:.2g} over {t.n} points) against a reward spread of {fmt(scale)} ({how}) "
                   "while the loss stays finite")]
    lp = d.dense("loss/policy")
    if lp is not None and len(lp[1]):
        ev.append(evidence("loss/policy", float(np.median(lp[1])), None, "median",
                           f"policy loss median {fmt(float(np.median(lp[1])))}: looks ordinary"))
    severity = "critical" if t.p < STRONG_P and facts.falls(d, t, FALL_CRIT_BAND) else "warning"
    return [finding("no_learning", severity, "Reward falls: the update may push the wrong way",
                    (int(steps[0]), int(steps[-1])), ev, (C.SIGN, C.MASK, C.DETACHED),
                    metrics=("reward/mean", "loss/policy"))]


@rule("eval_diverges", "reward rises but eval falls", "reward_up_eval_down", recheck_rows=RECHECK_LONG)
def eval_diverges(d: RunData):
    name = next((m for m in ("eval/pass_rate", "eval/reward_mean") if d.dense(m) is not None), None)
    if name is None:
        return NotJudged("eval_diverges", "no eval metric (eval/pass_rate or eval/reward_mean) is logged")
    if (nj := d.need("eval_diverges", name, min_points=MIN_EVALS)) or (nj := d.need("eval_diverges", "reward/mean",
                                                                                     min_points=facts.MIN_TREND_STEPS)):
        return nj
    es, e = d.dense(name)
    k = max(2, len(e) // 3)
    e0, e1 = float(np.median(e[:k])), float(np.median(e[-k:]))
    _, r = d.dense("reward/mean")
    w = window_for(len(r))
    rise = late_level(r, w) - early_level(r, w)
    if e0 - e1 > EVAL_FALL and rise > 0:
        bar, how = e0 - EVAL_FALL, f"median of the last {k} evals vs the first {k}"
        said = f"{name} fell from {fmt(e0)} to {fmt(e1)} while train reward changed by {fmt(rise):s}"
    elif (own := eval_falls_in_own_units(d, name, e0, e1)) is not None:
        bar, how, said = own
    else:
        return []
    ev = [evidence(name, e1, bar, how, said),
          evidence("reward/mean", rise, 0.0, f"last {w} steps minus early level", f"train reward {fmt(rise)} up")]
    ln = d.dense("completions/len_mean")
    if ln is not None and len(ln[1]) > 2 * w:
        l0, l1 = early_level(ln[1], w), late_level(ln[1], w)
        ev.append(evidence("completions/len_mean", l1, None, "late vs early", f"completion length {fmt(l0)} -> {fmt(l1)}"))
    severity = "critical" if e0 - e1 > EVAL_FALL_CRIT else "warning"
    return [finding("eval_diverges", severity, "Train reward rises but eval falls", (int(es[0]), int(es[-1])), ev,
                    C.EVAL_DIVERGES, metrics=(name, "reward/mean", "completions/len_mean"))]


def eval_falls_in_own_units(d: RunData, name: str, e0: float, e1: float) -> tuple[float, str, str] | None:
    """(threshold, how, what) when the eval `name` falls from its early level e0 to its late level e1 in its own units
    (EVAL_REL_FALL, EVAL_NOISE_FALL: a significant Mann-Kendall fall, a tenth of its level, twice its noise)
    while the train reward rises significantly (facts.rises); None otherwise."""
    got = facts.eval_trend(d)
    if got is None or got[0] != name or got[1].direction() != "down" or not facts.rises(d, facts.reward_trend(d)):
        return None
    t, fall, wobble = got[1], e0 - e1, stats.noise(d.dense(name)[1])
    if not (e0 > 0 and fall >= EVAL_REL_FALL * e0 and np.isfinite(wobble) and fall >= EVAL_NOISE_FALL * wobble):
        return None
    rt = facts.reward_trend(d)
    return (e0 * (1.0 - EVAL_REL_FALL), "fall against its own level and noise, Mann-Kendall over the evals",
            (f"{name} fell from {fmt(e0)} to {fmt(e1)} ({fmt(100 * fall / e0)}% of its level, {fmt(fall / wobble)} "
             f"times its eval-to-eval noise {fmt(wobble)}; Mann-Kendall p = {t.p:.2g} over {t.n} evals) while the "
             f"train reward rose (p = {rt.p:.2g})"))


def _step_numbers(steps) -> np.ndarray:
    """(K,) int64: the whole-number steps of a reader's NaN bookkeeping. A step of None or NaN (a row whose step
    was lost in a damaged file, issue 38) matches no row: it is left out, not int() of None."""
    x = pd.to_numeric(pd.Series(list(steps), dtype=object), errors="coerce").to_numpy(dtype=np.float64)
    return x[np.isfinite(x)].astype(np.int64)


def _logged_nans(d: RunData):
    """A function (column, values (T,)) -> (T,) bool: where the column holds a NaN that was logged.

    Readers that keep a NaN apart from a null say where NaNs were logged (d.nan_at), and a value still NaN
    there is one (a later write may have replaced it). For the others a NaN in a row that logged a reward
    is taken as real, since a sparse key (eval, rollout-only metrics) is null on the other rows.
    """
    update = np.ones(d.n, dtype=bool)
    dropped = d.col("groups/dropped_frac")
    if dropped is not None:
        # Dynamic sampling (DAPO) that dropped every group skips the update: a NaN loss there is no alarm.
        update = ~(dropped >= 1.0)
    if d.nan_at is not None:
        def known(name: str, x: np.ndarray) -> np.ndarray:
            steps = d.nan_at.get(name)
            if not steps:
                return np.zeros(len(x), dtype=bool)
            return np.isnan(x) & update & np.isin(d.steps, _step_numbers(steps))
        return known
    r = d.col("reward/mean")
    logged = update & (np.isfinite(r) if r is not None else True)
    return lambda name, x: np.isnan(x) & logged


# A metric NaN from its first row on, while these stay finite, was never computed (TRL logs kl as NaN when
# beta = 0; a custom trainer writes NaN for what it does not measure): "not logged", not a divergence. So is one
# whose every finite value is exactly 0 (Unsloth's GRPO at beta = 0 logs kl as 0 or NaN, step to step, from step
# 1 at learning rate 0 on): it never measured anything, and its NaNs are the same placeholder.
COMPUTED_BESIDE = ("loss/total", "loss/policy", "optim/grad_norm")


def _never_computed(d: RunData, name: str, x: np.ndarray) -> np.ndarray:
    """(T,) bool: the leading NaNs of `x` (none finite before them), or every NaN of an `x` whose finite values
    are all exactly 0, on rows where the loss or the gradient norm is finite; all False when `name` is one of
    those, or neither is logged."""
    if name in COMPUTED_BESIDE:
        return np.zeros(len(x), dtype=bool)
    beside = [c for n in COMPUTED_BESIDE if (c := d.col(n)) is not None]
    if not beside:
        return np.zeros(len(x), dtype=bool)
    finite = x[np.isfinite(x)]
    zeros = len(finite) > 0 and not finite.any() and not np.isinf(x).any()
    placeholder = np.isnan(x) if zeros else np.logical_and.accumulate(np.isnan(x))
    return placeholder & np.logical_or.reduce([np.isfinite(c) for c in beside])


@rule("non_finite", "NaN or inf in the metrics", "non_finite")
def non_finite(d: RunData):
    if d.n == 0:
        return NotJudged("non_finite", "the run has no metric rows")
    bad_at: dict[str, np.ndarray] = {}
    nan_mask = _logged_nans(d)
    # one pass over the float block for inf (a guard check runs this every few steps); then per column only
    # where there is something to look at: an inf, a watched metric's NaN, a column that is not numeric
    has_inf = d.inf_columns()
    for name in d.metric_names():
        if not (has_inf.get(name, name not in has_inf) or name in NON_FINITE_WATCH):
            continue
        if d.nan_at is None and d.col(name) is None:
            continue  # all null: without NaN bookkeeping that is "not logged", never a run of NaNs
        x = d.values(name)
        bad = np.isinf(x)
        if name in NON_FINITE_WATCH:
            bad |= nan_mask(name, x) & ~_never_computed(d, name, x)
        if bad.any():
            bad_at[name] = d.steps[bad]
    if not bad_at:
        return []
    first = min(int(s.min()) for s in bad_at.values())
    last = max(int(s.max()) for s in bad_at.values())
    ev = [evidence(name, float(len(s)), 0.0, "count of non-finite values",
                   f"{name}: {len(s)} NaN/inf value(s), first at step {int(s.min())}")
          for name, s in sorted(bad_at.items(), key=lambda kv: int(kv[1].min()))[:6]]
    checks = (C.REWARD_RETURNS, C.NON_FINITE, C.LR) if _from_the_reward(d, bad_at) else (C.NON_FINITE, C.LR)
    return [finding("non_finite", "critical", f"NaN/inf in {len(bad_at)} metric(s) from step {first}",
                    (first, last), ev, checks, metrics=tuple(e.metric for e in ev))]


def _from_the_reward(d: RunData, bad_at: dict[str, np.ndarray]) -> bool:
    """Whether the NaN starts at the reward (modelscope/ms-swift#8123: a reward function returning None/NaN for
    some responses turns the group's advantages NaN: loss 0.0, grad_norm NaN): the reward is NaN, or the
    gradient norm is NaN on steps whose loss is exactly 0."""
    if "reward/mean" in bad_at:
        return True
    gn, loss = bad_at.get("optim/grad_norm"), d.col("loss/total")
    if gn is None or loss is None:
        return False
    return bool(np.any(loss[np.isin(d.steps, gn)] == 0.0))
