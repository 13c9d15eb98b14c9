"""Facts about a run that several rules and the verdict share: the reward's scale and trend, the eval trend,
steps with no update, steps where no group had any reward spread. Pure functions of `RunData`.
"""

from __future__ import annotations

import numpy as np

from dashboard.diagnosis import stats
from dashboard.diagnosis.context import RunData

REWARD = "reward/mean"
EVAL = ("eval/pass_rate", "eval/reward_mean")
MIN_EVAL_POINTS = 6  # fewer evals than this give no trend worth stating
MIN_TREND_STEPS = 20  # fewer logged points than this and "does not move" cannot be told from "has not started"


def reward_scale(d: RunData) -> tuple[float, str]:
    return d.memo("reward_scale", _reward_scale)


def _reward_scale(d: RunData) -> tuple[float, str]:
    """The reward's own scale, so a move is judged in the run's units (rewards come on any scale).

    The typical spread between responses of a step (median `reward/std`, or the mean within-group std); for a
    0/1 reward (a logged pass rate that is the reward, or one recognised from its moments) the larger of that and
    its known spread sqrt(p (1 - p)) at the run's mean pass rate p: a logged std can be far smaller where most
    groups tie (TRL's reward_std is the mean within-group std: a run saturated at 0.95 logs 0.03 and made a fall
    of 0.009 look large). Else the spread of the responses pooled over the run, else of the step means.
    (scale, how it was measured); (1.0, ...) when nothing says.
    """
    binary = _binary_spread(d)
    logged = _logged_spread(d)
    if binary is not None and (logged is None or binary[0] > logged[0]):
        return binary
    if logged is not None:
        return logged
    pooled = _pooled_spread(d)
    if pooled > 0:
        return pooled, "spread of every response over the run (most steps have none)"
    bounded = _bounded_spread(d)
    if bounded is not None:
        return bounded
    r = d.dense(REWARD)
    if r is not None and len(r[1]) > 2:
        s = stats.spread(r[1])
        if s > 0:
            return s, "robust std of the reward over steps"
        s = float(np.std(r[1]))
        if s > 0 and np.ptp(r[1]) > 0:  # one value repeated has a float std of ~1e-17, not a spread
            return s, "std of the reward over steps"
    return 1.0, "no spread logged (taken as 1)"


def _logged_spread(d: RunData) -> tuple[float, str] | None:
    """(median per-step reward std, or median within-group std, how); None when neither is logged above 0."""
    for name, how in (("reward/std", "median per-step reward std"),
                      ("groups/reward_std_mean", "median within-group reward std")):
        x = d.dense(name)
        if x is not None and len(x[1]) and np.median(x[1]) > 0:
            return float(np.median(x[1])), how
    return None


def _binary_spread(d: RunData) -> tuple[float, str] | None:
    """(sqrt(p (1 - p)), how) when the reward is a 0/1 score whose pass rate p the run knows: the pass rate is
    recognised from the reward's moments, or logged and equal to the reward at every step. None otherwise."""
    got = pass_rate(d)
    r = d.dense(REWARD)
    if got is None or r is None:
        return None
    steps, p, how = got
    if how == "reward/pass_rate":
        both = np.intersect1d(steps, r[0])
        if not len(both) or not np.allclose(p[np.isin(steps, both)], r[1][np.isin(r[0], both)], atol=1e-9):
            return None  # a pass rate beside a graded or shaped reward says nothing of the reward's spread
    m = float(np.mean(p))
    if not 0.0 < m < 1.0:
        return None
    return float(np.sqrt(m * (1.0 - m))), f"spread of a 0/1 reward at its mean pass rate {m:.3g}"


def _bounded_spread(d: RunData) -> tuple[float, str] | None:
    """(sqrt of the mean of (m - lo)(hi - m), how) over the steps that log the reward's mean m, min lo and max hi
    with lo < hi: by the Bhatia-Davis inequality no reward within [lo, hi] at mean m spreads more, and a 0/1
    reward (verl's score, lo 0 and hi 1) spreads exactly that much. Without a logged std this is nearer the
    spread between responses than the spread of the step means, which is smaller by sqrt(responses a step) (256
    responses at a 0.95 score: 0.012 against 0.22). None when min and max are not logged."""
    r, lo, hi = d.col(REWARD), d.col("reward/min"), d.col("reward/max")
    if r is None or lo is None or hi is None:
        return None
    ok = np.isfinite(r) & np.isfinite(lo) & np.isfinite(hi) & (hi > lo) & (r >= lo) & (r <= hi)
    if ok.sum() < 3:
        return None
    v = float(np.sqrt(np.mean((r[ok] - lo[ok]) * (hi[ok] - r[ok]))))
    return (v, "largest spread a reward within its logged min and max has at its mean (Bhatia-Davis)") if v > 0 else None


def saturated(d: RunData) -> float | None:
    """Where the reward sits in its own range, when that is known and near the top: the median over steps of
    (m - lo) / (hi - lo) from the logged mean, min and max (lo < hi), else the median pass rate of a 0/1 reward;
    that value when it is at least ALL_PASS (most responses get the best score there is: saturation, not a
    failure to learn), else None. The range the run happened to reach says nothing (same_score_side)."""
    r, lo, hi = d.col(REWARD), d.col("reward/min"), d.col("reward/max")
    if r is not None and lo is not None and hi is not None:
        ok = np.isfinite(r) & np.isfinite(lo) & np.isfinite(hi) & (hi > lo)
        level = float(np.median((r[ok] - lo[ok]) / (hi[ok] - lo[ok]))) if ok.sum() >= 3 else None
    else:
        got = pass_rate(d)
        level = float(np.median(got[1])) if got is not None and len(got[1]) else None
    return level if level is not None and level >= ALL_PASS else None


def _pooled_spread(d: RunData) -> float:
    """The spread of every response of the run: sqrt(mean within-step variance + variance of the step means),
    over the steps that log both; 0 when fewer than 3 do. Where most steps have no spread at all (almost every
    response fails, or passes) the median per-step std is 0, yet the responses do differ: a binary reward at pass
    rate p has this spread sqrt(p (1 - p)), where the spread of the step means alone (the next fallback) is
    several times smaller and made small moves of the reward look like learning."""
    s, r = d.dense("reward/std"), d.dense(REWARD)
    if s is None or r is None:
        return 0.0
    both = np.intersect1d(s[0], r[0])
    if len(both) < 3:
        return 0.0
    within, means = s[1][np.isin(s[0], both)], r[1][np.isin(r[0], both)]
    return float(np.sqrt(np.mean(within ** 2) + np.var(means)))


def reward_trend(d: RunData) -> stats.Trend | None:
    r = d.dense(REWARD)
    return None if r is None else d.memo("reward_trend", lambda _: stats.trend(*r))


def eval_trend(d: RunData) -> tuple[str, stats.Trend] | None:
    """(metric, trend) of the first eval metric with at least MIN_EVAL_POINTS evals, else None."""
    return d.memo("eval_trend", _eval_trend)


def _eval_trend(d: RunData) -> tuple[str, stats.Trend] | None:
    for name in EVAL:
        e = d.dense(name)
        if e is not None and len(e[1]) >= MIN_EVAL_POINTS:
            t = stats.trend(*e, min_points=MIN_EVAL_POINTS)
            if t is not None:
                return name, t
    return None


# The reward's change over the run is judged on `Trend.change_bounds`, the hull of Theil-Sen's and the
# least-squares line's CIs: Theil-Sen's rank interval alone collapses to 0 .. 0 when most steps tie (a sparse
# reward at 0), which would make "flat beyond doubt" rest on the ties. Flat, rises and falls read that one
# interval, so at most one of them holds.
# A change whose interval over the whole run stays within this fraction of the reward's own spread between
# responses is flat beyond doubt (a binary reward at pass rate 0.5 has spread 0.5: +-0.05).
FLAT_BAND = 0.1


def reward_stuck(d: RunData) -> bool:
    """True when the reward is flat beyond doubt: both CIs of its change over the run (Theil-Sen's and the
    least-squares line's) stay within FLAT_BAND of the reward's spread. Not merely "no significant trend", which
    a noisy short run also gives."""
    t = reward_trend(d)
    if t is None:
        return False
    lo, hi = t.change_bounds
    return max(abs(lo), abs(hi)) <= FLAT_BAND * reward_scale(d)[0]


RISE_BAND = 0.1  # a rise counts when even its CI's low end is a tenth of the reward's spread between responses


def rises(d: RunData, t: stats.Trend | None) -> bool:
    """True when a reward trend rises significantly (Mann-Kendall) and the low ends of both change CIs are above
    RISE_BAND of the reward's spread."""
    return t is not None and t.direction() == "up" and t.change_bounds[0] > RISE_BAND * reward_scale(d)[0]


def falls(d: RunData, t: stats.Trend | None, band: float) -> bool:
    """True when a reward trend falls significantly (Mann-Kendall) and the high ends of both change CIs are a
    fall of at least `band` x the reward's spread."""
    return t is not None and t.direction() == "down" and t.change_bounds[1] <= -band * reward_scale(d)[0]


def improving(d: RunData) -> bool:
    """True when the reward rises significantly and by a part of its own spread that matters, or the eval score
    rises significantly: the run learns."""
    e = eval_trend(d)
    return rises(d, reward_trend(d)) or (e is not None and e[1].direction() == "up")


def no_update_steps(d: RunData) -> tuple[np.ndarray, str] | None:
    """(mask (T,), what) of the steps with no update at all: gradient norm exactly 0, or loss exactly 0 where
    no gradient norm is logged. None when neither is logged. An exact 0 is no rounding accident: a step whose
    every group scored alike has advantage 0 everywhere, hence loss 0 and gradient 0."""
    gn = d.col("optim/grad_norm")
    if gn is not None:
        return (gn == 0.0), "gradient norm exactly 0"
    if loss_zero_expected(d):
        return None
    for name in ("loss/policy", "loss/total"):
        x = d.col(name)
        if x is not None:
            return (x == 0.0), f"{name} exactly 0"
    return None


def loss_zero_expected(d: RunData) -> bool:
    """Whether the config makes a loss of exactly 0 the expected value (huggingface/trl#3452): no KL term (beta 0)
    and one pass over each rollout (num_iterations 1: the ratio is exactly 1 where the loss is computed), so
    the group-centred advantages sum the policy term to 0 while its gradient is not 0."""
    beta = d.number("beta", "kl_coef", "init_kl_coef")
    passes = d.number("num_iterations", "ppo_epochs", "algo.epochs")
    return beta is not None and beta[1] == 0 and passes is not None and passes[1] == 1


def no_spread_steps(d: RunData) -> tuple[np.ndarray, str] | None:
    """(mask (T,), what) of the steps where no group had any reward spread: zero-variance fraction 1, or the
    step's reward std exactly 0 (every response of the step scored the same, so every group did)."""
    z = d.col("groups/zero_std_frac")
    if z is not None:
        return (z >= 1.0), "every group zero-variance (groups/zero_std_frac = 1)"
    s = d.col("reward/std")
    if s is not None:
        return (s == 0.0), "reward/std exactly 0 (no group had any spread)"
    return None


ALL_PASS, ALL_FAIL = 0.9, 0.1  # pass rate on the no-spread steps that says their groups all passed / all failed


def same_score_side(d: RunData, mask: np.ndarray) -> str | None:
    """On steps where no group had spread, were the groups all-pass or all-fail? From a known scale only: a pass
    rate (logged, or a reward recognised as 0/1) near 1 there is "all-pass", near 0 "all-fail"; None otherwise.

    The reward's observed range says nothing of it: a reward pinned at a partial credit (a format bonus of 0.07
    on a reward that can reach 1 and more) sits at the top of what the run saw, and is no solved prompt.
    mask: (T,) bool over the run's rows, steps with no spread."""
    got = pass_rate(d)
    if got is None or not mask.any():
        return None
    at = got[1][np.isin(got[0], d.steps[mask])]
    at = at[np.isfinite(at)]
    if not len(at):
        return None
    level = float(np.median(at))
    return "all-pass" if level >= ALL_PASS else "all-fail" if level <= ALL_FAIL else None


# Advantage estimators by whether their baseline is the response's own group (the group mean, leave-one-out, the
# group std): only then do group statistics (the group size, per-group std normalisation, tied groups) apply.
# Names as each framework spells them: verl algorithm.adv_estimator, OpenRLHF advantage_estimator, our
# algo.adv_mode; TRL's GRPOTrainer is always a group estimator and has no such key.
ESTIMATOR_KEYS = ("algo.adv_mode", "adv_estimator", "advantage_estimator")
GROUP_ESTIMATORS = frozenset({"group", "grpo", "rloo", "group_norm", "dr_grpo", "mean_only", "grpo_passk", "opo",
                              "gpg", "reinforce_baseline", "reinforce_plus_plus_baseline", "reinforce_pp_baseline",
                              "grpo_vectorized", "seq_mean_grpo"})
NO_GROUP_ESTIMATORS = frozenset({"gae", "reinforce", "reinforce_plus_plus", "reinforce_pp", "remax", "batch"})


def group_baseline(d: RunData) -> tuple[bool | None, str]:
    """(True: a group-baseline estimator / False: not one / None: unknown, "key = value" or why)."""
    hit = d.setting(*ESTIMATOR_KEYS)
    if hit is None:
        return None, "the config names no advantage estimator"
    name = str(hit[1]).strip().lower()
    said = f"{hit[0]} = {hit[1]}"
    return (True, said) if name in GROUP_ESTIMATORS else (False, said) if name in NO_GROUP_ESTIMATORS else (None, said)


BINARY_MIN_STEPS = 5  # steps with 0 < mean < 1 needed to recognise a binary reward from its moments
BINARY_TOL = 0.02  # relative spread of std^2 / (p (1 - p)) across those steps
# Without a logged std: the step means of a 0/1 reward over n responses are all k/n. Up to 16 responses a step
# (1 to 2 prompts of a small group, as custom scripts log them) the lattice is coarse enough that a graded reward
# (or one printed with a few decimals) leaves it within a few steps; above, 1/n is near a printed value's rounding.
LATTICE_MAX = 16
LATTICE_TOL = 1e-3  # a printed mean's rounding (4 decimals: 0.0001 off k/n), per unit of n
# A 0/1 reward's step means vary (binomially): one level repeated tests no lattice, it is k/n for some n whatever
# it is (a constant 0.3 is 3/10). 3 of 10 passing at each of 60 steps has probability 0.267^60 ~ 1e-34.
LATTICE_MIN_LEVELS = 2


def pass_rate(d: RunData) -> tuple[np.ndarray, np.ndarray, str] | None:
    """(steps, pass rate, where from): `reward/pass_rate`, else the mean of a reward recognised as binary.

    A 0/1 reward has std^2 = p (1 - p) x n / (n - 1) at every step (n responses; sample std) or exactly
    p (1 - p) (population std): the ratio is one constant across steps. Any other reward (graded, shaped,
    several functions summed) breaks that on most steps. Without a logged std: step means that are all k/n for one
    small n (responses_per_step). None when neither holds.
    """
    logged = d.dense("reward/pass_rate")
    if logged is not None:
        return logged[0], logged[1], "reward/pass_rate"
    r, s = d.col(REWARD), d.col("reward/std")
    if r is not None and s is None:
        return _lattice_pass_rate(d, r)
    if r is None or s is None:
        return None
    ok = np.isfinite(r) & np.isfinite(s)
    if not ok.any() or r[ok].min() < 0 or r[ok].max() > 1:
        return None
    mid = ok & (r > 0) & (r < 1)
    if mid.sum() < BINARY_MIN_STEPS:
        return None
    ratio = s[mid] ** 2 / (r[mid] * (1 - r[mid]))
    c = float(np.median(ratio))
    if not (1.0 - BINARY_TOL <= c <= 2.0) or float(np.median(np.abs(ratio - c))) > BINARY_TOL * c:
        return None
    return d.steps[ok], r[ok], f"reward/mean of a 0/1 reward (std^2 / p(1-p) = {c:.3g} on {int(mid.sum())} steps)"


def responses_per_step(d: RunData) -> int | None:
    """n when every logged reward mean lies in [0, 1] on the lattice k/n (n <= LATTICE_MAX) with at least
    BINARY_MIN_STEPS means strictly between 0 and 1, and LATTICE_MIN_LEVELS distinct means or more: a 0/1 reward over n
    responses a step. Else None."""
    r = d.dense(REWARD)
    if r is None or not len(r[1]) or r[1].min() < 0 or r[1].max() > 1:
        return None
    if int(np.sum((r[1] > 0) & (r[1] < 1))) < BINARY_MIN_STEPS or len(np.unique(r[1])) < LATTICE_MIN_LEVELS:
        return None
    n = stats.lattice_size(r[1], LATTICE_MAX, LATTICE_TOL)
    return None if n is None or n < 2 else n


def _lattice_pass_rate(d: RunData, r: np.ndarray) -> tuple[np.ndarray, np.ndarray, str] | None:
    n = responses_per_step(d)
    if n is None:
        return None
    ok = np.isfinite(r)
    return d.steps[ok], r[ok], f"reward/mean of a 0/1 reward (every step's mean is k/{n}: {n} responses a step)"

