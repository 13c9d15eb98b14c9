"""Reward rules: the reward does not move, is constant, is too sparse; zero-variance groups; small groups.

Notes, section 5 (limits of in-group standardisation) and section 7's first row ("reward does not move").
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from dashboard.diagnosis import checks as C
from dashboard.diagnosis import facts, stats
from dashboard.diagnosis.build import evidence, finding, fmt
from dashboard.diagnosis.context import RunData
from dashboard.diagnosis.findings import NotJudged
from dashboard.diagnosis.registry import RECHECK_LONG, rule
from dashboard.diagnosis.series import early_level, episodes, rolling_median, window_for

STRONG_SHARE = 0.5  # most steps without an update: strong support for "nothing is learned"
EXPLAINED = 0.9  # ...unless nine in ten of them had no group with any spread (zero_variance_groups' finding)
SPARSE_LOW, SPARSE_HIGH = 0.05, 0.95  # pass rate this close to 0 or 1: few groups mix successes and failures
ZERO_VAR_WARN, ZERO_VAR_CRIT = 0.5, 0.8  # half the groups teach nothing: warning; four in five: critical
NO_SPREAD_SHARE = 0.2  # a fifth of the steps where no group had any spread is a finding on its own
SUSTAINED_FRAC = 0.2  # a level condition must hold for a fifth of the run (at least MIN_CONSECUTIVE steps)
# Half the second half's logged steps at one exact step mean with no spread: the reward has settled, whatever it
# did before (a trend test over the whole run reads the climb to it as learning)
PINNED_SHARE = 0.5
PINNED_DIGITS = 6  # a logged mean's digits compared (TRL's JSON floats; printed logs keep 4)
MIN_GROUP = 4  # notes, section 5: below this a group's mean and std rest on a couple of rewards


def sustained_len(n: int) -> int:
    return max(5, round(SUSTAINED_FRAC * n))


def sub_causes(d: RunData) -> list:
    """Evidence for the sub-causes of a flat reward, in the order of the notes' table."""
    out = []
    for name, label in (("groups/zero_std_frac", "zero-variance groups"), ("groups/all_fail_frac", "all-fail groups"),
                        ("groups/all_pass_frac", "all-pass groups"), ("policy/entropy", "entropy")):
        x = d.dense(name)
        if x is not None and len(x[1]):
            v = float(np.median(x[1]))
            out.append(evidence(name, v, None, "median over the run", f"{label}: median {fmt(v)}"))
    t = d.number("rollout.temperature", "temperature")
    if t is not None:
        out.append(evidence(f"config:{t[0]}", t[1], None, "config", f"sampling temperature {fmt(t[1])}"))
    return out


def share_evidence(d: RunData, hit: tuple[np.ndarray, str] | None, what: str) -> tuple[float, list]:
    """(share of logged steps where `hit`'s mask holds, [evidence]) for no-update / no-spread steps."""
    if hit is None:
        return 0.0, []
    mask, how = hit
    share = float(mask.mean()) if len(mask) else 0.0
    if not mask.any():
        return 0.0, []
    metric = "optim/grad_norm" if "gradient" in how else "reward/std" if "reward/std" in how else \
        "groups/zero_std_frac" if "zero_std" in how else how.split()[0]
    return share, [evidence(metric, share, STRONG_SHARE, "share of logged steps",
                            f"{int(mask.sum())} of {len(mask)} logged steps {what} ({how})")]


@rule("reward_flat", "reward does not move", "reward_flat", recheck_rows=RECHECK_LONG)
def reward_flat(d: RunData):
    if (nj := d.need("reward_flat", "reward/mean", min_points=facts.MIN_TREND_STEPS)):
        return nj
    steps, r = d.dense("reward/mean")
    t = facts.reward_trend(d)
    scale, how = facts.reward_scale(d)
    lo, hi = t.change_bounds
    tight = facts.reward_stuck(d)
    if t.direction() != "flat" and not tight:
        # it moves: up is learning, a significant fall is no_learning's finding; unless it settled on one value
        return pinned_reward(d)
    ev = [evidence("reward/mean", t.change, facts.FLAT_BAND * scale, f"Theil-Sen change over steps {steps[0]}-{steps[-1]}",
                   f"{'no trend beyond the noise' if t.direction() == 'flat' else 'a trend too small to matter'}: "
                   f"Mann-Kendall p = {t.p:.2g} over {t.n} points; change {fmt(t.change)} (95% CI {fmt(lo)} .. "
                   f"{fmt(hi)}, Theil-Sen's and the least-squares line's together) against a reward spread of "
                   f"{fmt(scale)} ({how})")]
    idle_hit, still_hit = facts.no_update_steps(d), facts.no_spread_steps(d)
    idle, ev_idle = share_evidence(d, idle_hit, "had no update at all")
    _, ev_still = share_evidence(d, still_hit, "had no group with any reward spread")
    # Steps without an update are strong evidence unless zero-variance groups explain them (then that finding
    # carries the weight): an update that does nothing although groups had spread is a bug to find.
    explained = idle_hit is not None and still_hit is not None and \
        (idle_hit[0] & still_hit[0]).sum() >= EXPLAINED * idle_hit[0].sum()
    strong = tight or (idle >= STRONG_SHARE and not explained)
    e = facts.eval_trend(d)
    rising_eval = e is not None and e[1].direction() == "up"
    if rising_eval:
        ev.append(evidence(e[0], e[1].change, None, "Theil-Sen change", f"but {e[0]} rises ({fmt(e[1].change)}, "
                           f"p = {e[1].p:.2g}): something is learned"))
    top = facts.saturated(d)
    if top is not None:
        ev.append(evidence("reward/mean", top, facts.ALL_PASS, "median place in the reward's own range",
                           f"the reward sits at {fmt(100 * top)}% of its range (its logged min to max, or a pass rate): "
                           "saturated"))
    severity = "critical" if strong and not rising_eval and top is None else "warning"
    return [finding("reward_flat", severity, f"Reward does not move (stays near {fmt(float(np.median(r)))})",
                    (int(steps[0]), int(steps[-1])), ev + ev_idle + ev_still + sub_causes(d), C.REWARD_FLAT,
                    metrics=("reward/mean", "groups/zero_std_frac"))]


def pinned_reward(d: RunData) -> list:
    """A reward that moved, then settled on one exact value with no spread (a partial credit every response gets,
    as a format bonus): on at least PINNED_SHARE of the second half's logged steps the step mean is the mode of
    that half to the printed digits, and the step's std (where logged) is 0. A mean over many responses repeats
    exactly only when they all score alike. A 0/1 reward pinned at its pass rate's top (all pass) is saturation,
    not a plateau (zero_variance_groups says it). [] when it does not hold."""
    steps, r = d.dense("reward/mean")
    half = len(r) // 2
    late = np.round(r[half:], PINNED_DIGITS)
    values, counts = np.unique(late, return_counts=True)
    v = float(values[np.argmax(counts)])
    at = np.round(r, PINNED_DIGITS) == v
    sd = d.col("reward/std")
    if sd is not None and len(sd) == len(d.steps):
        at &= np.isin(steps, d.steps[np.nan_to_num(sd, nan=1.0) == 0.0])
    share = float(at[half:].mean())
    if share < PINNED_SHARE or (facts.pass_rate(d) is not None and facts.same_score_side(
            d, np.isin(d.steps, steps[at])) == "all-pass"):
        return []
    i0 = int(np.argmax(at))
    ev = [evidence("reward/mean", v, None, f"share of the second half's {len(late)} logged steps at one value",
                   f"the reward sits at exactly {fmt(v)}{' with no spread' if sd is not None else ''} on "
                   f"{int(at[half:].sum())} of the last {len(late)} logged steps ({fmt(100 * share)}%), from step "
                   f"{steps[i0]} on: every response gets the same score")]
    return [finding("reward_flat", "warning", f"Reward pinned at {fmt(v)}", (int(steps[i0]), int(steps[-1])),
                    ev + sub_causes(d), C.REWARD_FLAT, metrics=("reward/mean", "groups/zero_std_frac"))]


@rule("reward_constant", "reward constant across the whole run", "reward_flat")
def reward_constant(d: RunData):
    if (nj := d.need("reward_constant", "reward/mean", min_points=10)):
        return nj
    steps, r = d.dense("reward/mean")
    span = float(np.max(r) - np.min(r))
    within = d.col("reward/std")
    inner = float(np.nanmax(within)) if within is not None and np.isfinite(within).any() else 0.0
    if span > 1e-9 or inner > 1e-9:
        return []
    ev = [evidence("reward/mean", span, 1e-9, "max - min over the run",
                   f"every response of every step scored {fmt(float(r[0]))} (range {fmt(span)}, "
                   f"largest in-batch std {fmt(inner)})")]
    checks = (C.VERIFIER, C.Check("the reward function's inputs", "print what the verifier receives for one "
                                  "response: the completion text, the answer field, their types", None))
    return [finding("reward_constant", "critical", f"Reward is constant ({fmt(float(r[0]))}) over the whole run",
                    (int(steps[0]), int(steps[-1])), ev, checks, metrics=("reward/mean",))]


@rule("sparse_reward", "binary reward too sparse (pass rate near 0 or 1)", "sparse_binary", recheck_rows=RECHECK_LONG)
def sparse_reward(d: RunData):
    got = facts.pass_rate(d)
    if got is None or len(got[1]) < 5:
        return NotJudged("sparse_reward", "no pass rate: reward/pass_rate is not logged and the reward is not "
                         "recognisably 0/1")
    steps, p, how = got
    w = window_for(len(p), lo=3, hi=20)
    med = rolling_median(p, w)
    out = []
    for mask, side, bound, check in ((med <= SPARSE_LOW, "near 0", SPARSE_LOW, C.DIFFICULTY),
                                     (med >= SPARSE_HIGH, "near 1", SPARSE_HIGH, C.DIFFICULTY)):
        eps = episodes(mask, min_len=sustained_len(len(p)))
        if not eps:
            continue
        i0, i1 = eps[0][0], eps[-1][1]
        v = float(np.median(p[i0:i1 + 1]))
        what = "too hard, or the verifier rejects right answers" if side == "near 0" else "too easy"
        metric = "reward/pass_rate" if how == "reward/pass_rate" else "reward/mean"
        ev = [evidence(metric, v, bound, f"median over steps {steps[i0]}-{steps[i1]}",
                       f"pass rate {fmt(v)} {'<=' if side == 'near 0' else '>='} {bound} for "
                       f"{i1 - i0 + 1} logged steps: few groups mix successes and failures (from {how})")]
        checks = (check, C.ZERO_VARIANCE, C.VERIFIER) if side == "near 0" else (check, C.ZERO_VARIANCE)
        out.append(finding("sparse_reward", "warning", f"Pass rate {side}: the task looks {what}",
                           (int(steps[i0]), int(steps[i1])), ev, checks, metrics=(metric,)))
    return out


@rule("zero_variance_groups", "zero-variance groups dominate", "zero_variance")
def zero_variance_groups(d: RunData):
    if d.dense("groups/zero_std_frac") is None:
        return zero_advantage_share(d) or no_spread_steps(d)
    if (nj := d.need("zero_variance_groups", "groups/zero_std_frac", min_points=5)):
        return nj
    steps, z = d.dense("groups/zero_std_frac")
    if np.isin(z, (0.0, 1.0)).all() and (z == 0.0).any() and (z == 1.0).any():
        # one group a step (a share that is 0 on some steps, 1 on others, nothing between): each step is tied or
        # not, and a windowed median of such steps is 1 wherever a few tied ones cluster; the share of tied steps
        # is the level (no_spread_steps). A share constant at 1 says nothing of the groups' count: judged as a level
        return no_spread_steps(d)
    level = _held_above(z)
    if level is None:
        # a share that jumps between 0 and 1 (one prompt a step, or a few) has a median of 0 while a third of the
        # steps have no group with spread at all: those steps update nothing, judged as without a logged share
        return no_spread_steps(d)
    high, i0, i1, v = level
    ev = [evidence("groups/zero_std_frac", v, ZERO_VAR_WARN, f"median over the {int(high.sum())} logged steps "
                   f"above {ZERO_VAR_WARN}", f"{fmt(100 * v)}% of groups scored all the same (advantage 0, no signal) "
                   f"on {int(high.sum())} of {len(z)} logged steps (windowed median) between steps {steps[i0]} and "
                   f"{steps[i1]}")]
    side, split_ev = _split(d, i0, i1, v)
    ev += split_ev
    # critical when the level clears the bar beyond what its points leave uncertain: the median of a few points
    # (a log thinned to every 10th step) moves by a group or two between samplings of the same run
    severity = "critical" if stats.median_low(z[high]) > ZERO_VAR_CRIT else "warning"
    return [_zero_variance_finding(d, severity, side, (int(steps[i0]), int(steps[i1])), ev)]


def _split(d: RunData, i0: int, i1: int, v: float) -> tuple[str | None, list]:
    """("all-pass" / "all-fail" / "both" / None, evidence) over points i0..i1 of the run's rows: the logged
    split when there is one, else which end of the reward range the no-spread steps sit at."""
    parts, ev = {}, []
    for name, label in (("groups/all_fail_frac", "all-fail"), ("groups/all_pass_frac", "all-pass")):
        x = d.col(name)
        if x is not None and np.isfinite(x[i0:i1 + 1]).any():
            parts[label] = m = float(np.nanmedian(x[i0:i1 + 1]))
            ev.append(evidence(name, m, None, "median over the same steps", f"{label} groups: {fmt(m)}"))
    if parts:
        # "mostly X" only when X is at least two thirds of the zero-variance groups; otherwise say both.
        top = max(parts, key=parts.get)
        return (top if parts[top] >= 2 * v / 3 else "both" if len(parts) == 2 else None), ev
    hit = facts.no_spread_steps(d)
    side = facts.same_score_side(d, hit[0]) if hit is not None else None
    if side is not None:
        ev.append(evidence("reward/mean", float("nan"), None, "reward on the steps without any spread",
                           f"on the steps where no group had spread the reward sits at the {'top' if side == 'all-pass' else 'bottom'} "
                           f"of its range: the groups were {side}"))
    return side, ev


def _zero_variance_finding(d: RunData, severity: str, side: str | None, rng: tuple[int, int], ev: list):
    """Zero-variance groups known to be all-pass (a split or a pass rate says so) are saturation: say so and
    suggest harder prompts; otherwise the notes' checks for a missing learning signal, at its severity while the
    run learns too (a rising run whose no-spread groups mostly fail is not saturating: its hard prompts give no
    signal; a reward's observed range never says which side a tie is on)."""
    rising = facts.improving(d)
    if side == "all-pass":
        # Solved prompts the policy learned to solve (the share grows as the reward climbs) are the saturation of
        # a healthy run; half the groups solved from the first steps on is a task too easy for this policy.
        early = _early_zero_variance(d)
        from_start = early is not None and early >= ZERO_VAR_WARN
        severity = "info" if rising and not from_start else "warning"
        if from_start:
            ev = [*ev, evidence("groups/zero_std_frac", early, ZERO_VAR_WARN, "early level (first steps)",
                                f"{fmt(100 * early)}% of groups tied already at the first steps: too easy for this "
                                "policy from the start")]
        title = "Zero-variance groups from solved prompts: the task saturates"
        checks = (C.HARDER_PROMPTS, C.ZERO_VARIANCE)
    else:
        # A majority of tied groups stays a warning (almost all: critical) while the reward rises: more than half
        # the rollout compute teaches nothing, the rise rests on the few groups left, and nothing known says the
        # tied ones are solved.
        title = "Zero-variance groups dominate" + {"all-fail": " (mostly all-fail)", "all-pass": " (mostly all-pass)",
                                                   "both": " (both all-pass and all-fail)"}.get(side or "", "")
        checks = (C.ZERO_VARIANCE, C.DIFFICULTY, C.TEMPERATURE, C.VERIFIER)
    return finding("zero_variance_groups", severity, title, rng, ev, checks,
                   metrics=("groups/zero_std_frac", "groups/all_fail_frac", "groups/all_pass_frac"),
                   examples=zero_variance_examples(d, rng[1]) if d.wants_examples("zero_variance_groups") else ())


def _early_zero_variance(d: RunData) -> float | None:
    """The zero-variance fraction's early level (series.early_level), None when it is not logged."""
    z = d.dense("groups/zero_std_frac")
    if z is None or len(z[1]) < 5:
        return None
    return float(early_level(z[1], window_for(len(z[1]), lo=3, hi=20)))


def _held_above(z: np.ndarray) -> tuple[np.ndarray, int, int, float] | None:
    """A share held above ZERO_VAR_WARN: (mask of the points whose windowed median is above it, first and last
    such point, the median over them), None when they are fewer than sustained_len. z: (T,) a share per logged
    step. A level, not an episode: with one or two prompts per step the share jumps between 0 and 1, so runs of
    consecutive steps would miss it."""
    high = rolling_median(z, window_for(len(z), lo=3, hi=20)) > ZERO_VAR_WARN
    if high.sum() < sustained_len(len(z)):
        return None
    return high, int(np.argmax(high)), len(high) - 1 - int(np.argmax(high[::-1])), float(np.median(z[high]))


def zero_advantage_share(d: RunData) -> list:
    """Without the tied groups' share: the share of responses whose advantage is exactly 0 (adv/zero_frac, as
    RDAN-GRPO on ROLL logs it). Every response of a tied group has advantage 0, so this share is at least the tied
    share's response-weighted value and may hold more (a response exactly at its group's mean): judged on the same
    bar over a sustained stretch, a warning at most, not a count of groups. [] when not logged or not high."""
    got = d.dense("adv/zero_frac")
    if got is None or len(got[1]) < 5:
        return []
    steps, z = got
    if (level := _held_above(z)) is None:
        return []
    high, i0, i1, v = level
    ev = [evidence("adv/zero_frac", v, ZERO_VAR_WARN, f"median over the {int(high.sum())} logged steps above "
                   f"{ZERO_VAR_WARN}", f"{fmt(100 * v)}% of responses had advantage exactly 0 on {int(high.sum())} of "
                   f"{len(z)} logged steps (windowed median) between steps {steps[i0]} and {steps[i1]}; tied groups "
                   "are not logged, and every response of one has advantage 0")]
    side, split_ev = _split(d, i0, i1, v)
    return [_zero_variance_finding(d, "warning", side, (int(steps[i0]), int(steps[i1])), ev + split_ev)]


def no_spread_steps(d: RunData):
    """Without a zero-variance fraction: the steps whose reward std is exactly 0 had no group with any spread."""
    hit = facts.no_spread_steps(d)
    if hit is None:
        return estimated_ties(d)
    mask, how = hit
    share = float(mask.mean())
    if share < NO_SPREAD_SHARE or mask.sum() < 3:
        return []
    idx = np.nonzero(mask)[0]
    ev = [evidence("reward/std", share, NO_SPREAD_SHARE, "share of logged steps",
                   f"on {int(mask.sum())} of {d.n} logged steps {how}: those updates had no signal at all")]
    side, split_ev = _split(d, 0, d.n - 1, share)
    # a share of the logged steps, critical when it clears the bar beyond its sampling uncertainty (stats.share_low)
    severity = "critical" if stats.share_low(int(mask.sum()), len(mask)) > ZERO_VAR_CRIT else "warning"
    return [_zero_variance_finding(d, severity, side, d.step_range(int(idx[0]), int(idx[-1])), ev + split_ev)]


def estimated_ties(d: RunData):
    """Neither the tied share nor the reward's spread logged: the share a 0/1 reward at pass rate p gives groups of
    G, p^G + (1 - p)^G (stats.tied_share: at least that over prompts of varying difficulty). p: the pass rate
    over a window of steps; G: the group size from the config or the samples, else the responses a step (the
    step means' lattice, facts.responses_per_step: G is at most that, so the share at least this). Judged as the
    logged share is, a warning at most: an estimate, not a count."""
    got, g = facts.pass_rate(d), group_size(d)
    n = facts.responses_per_step(d) if g is None else None
    if got is None or (g is None and n is None):
        return NotJudged("zero_variance_groups", "neither groups/zero_std_frac nor reward/std is logged, and no "
                         "pass rate with a group size to estimate the tied groups from")
    steps, p, _how = got
    size, said = (g[1], g[0]) if g is not None else (float(n), "responses a step, at least the group size")
    # the pass rate of a window, not of a step: a step of 2 responses has p 0, 0.5 or 1, whose own p^G + (1-p)^G
    # is 1 or 0.5 whatever the task's pass rate
    level = pd.Series(p).rolling(window_for(len(p), lo=3, hi=20), min_periods=1, center=True).mean().to_numpy()
    est = stats.tied_share(level, size)
    high = est > ZERO_VAR_WARN
    if len(p) < 5 or high.sum() < sustained_len(len(p)):
        return []
    i0, i1 = int(np.argmax(high)), len(high) - 1 - int(np.argmax(high[::-1]))
    v, pm = float(np.median(est[high])), float(np.mean(p[i0:i1 + 1]))
    ev = [evidence("reward/mean", v, ZERO_VAR_WARN, f"p^G + (1 - p)^G over steps {steps[i0]}-{steps[i1]}",
                   f"about {fmt(100 * v)}% of groups tied (advantage 0, no signal), estimated as p^G + (1 - p)^G at "
                   f"pass rate p = {fmt(pm)} and G = {size:g} ({said}); tied groups are not logged")]
    side = "all-fail" if pm <= facts.ALL_FAIL else "all-pass" if pm >= facts.ALL_PASS else None
    return [_zero_variance_finding(d, "warning", side, (int(steps[i0]), int(steps[i1])), ev)]


def zero_variance_examples(d: RunData, step: int, k: int = 3) -> list[dict]:
    """A few zero-variance groups at (or before) `step`, one row per group, texts as plain strings.

    Groups in order of their id; a group is zero-variance when its rewards are one value (a missing reward
    counts as one more). The rows of that one step come from RunData.latest_samples, then codes and
    np.unique find the groups, and only the k shown are read row by row: the live guard builds this at every
    check while the finding holds, right after a training step, where a filtered frame or a groupby costs it
    milliseconds (tests/diagnosis/test_rules_samples.py compares this with the groupby)."""
    # a live guard answers from its buffer: one step's frame of the columns read here, not every recent step's
    s = d.latest_samples(step, ("step", "group", "reward", "prompt", "completion"))
    if s is None or not all(c in s for c in ("step", "group", "reward")):
        return []
    group = s["group"].to_numpy()
    # sorted ids and their codes; np.unique for integer ids (no missing one), pd.factorize (-1: in no group) else
    groups, group_code = np.unique(group, return_inverse=True) if group.dtype.kind in "biu" else \
        pd.factorize(group, sort=True)[::-1]
    if not len(groups):
        return []
    reward = s["reward"].to_numpy()
    reward_code = pd.factorize(reward, use_na_sentinel=False)[0]
    n = int(reward_code.max()) + 1
    # (group + 1, reward) -> one key; the missing group's 0 is dropped below
    distinct = np.bincount(np.unique((group_code + 1) * n + reward_code) // n, minlength=len(groups) + 1)[1:]
    shown = np.nonzero(distinct == 1)[0][:k].tolist()
    texts = {c: s[c].to_numpy() for c in ("prompt", "completion") if c in s} if shown else {}
    out = []
    for g in shown:
        idx = np.nonzero(group_code == g)[0]
        ex = {"step": int(s["step"].iat[idx[0]]), "group": int(groups[g]), "reward": float(reward[idx[0]]),
              "responses": len(idx)}
        for col, x in texts.items():
            if len(present := [t for t in x[idx] if not pd.isna(t)]):
                ex[col] = str(present[0])[:200]  # the first text there is, never "nan"
        out.append(ex)
    return out


def group_size(d: RunData) -> tuple[str, float] | None:
    hit = d.number("rollout.group_size", "num_generations", "rollout.n", "n_samples_per_prompt")
    if hit is not None:
        return hit
    s = d.samples()
    if s is not None and {"step", "group"} <= set(s.columns) and len(s):
        sizes = s.groupby(["step", "group"]).size()
        return "samples: responses per group", float(sizes.median())
    return None


@rule("small_group", "group too small: a single outlier dominates", "small_group", recheck_rows=RECHECK_LONG)
def small_group(d: RunData):
    grouped, said = facts.group_baseline(d)
    if grouped is False:
        return NotJudged("small_group", f"{said} has no group baseline: group statistics do not apply")
    g = group_size(d)
    if g is None:
        return NotJudged("small_group", "neither the config nor the samples give the group size")
    key, size = g
    if size >= MIN_GROUP:
        return []
    ev = [evidence(f"config:{key}" if not key.startswith("samples") else "samples", size, MIN_GROUP, key,
                   f"group size G = {size:g} < {MIN_GROUP}: each group's mean and std rest on {size:g} rewards")]
    for name in ("adv/std", "optim/grad_norm"):
        x = d.dense(name)
        if x is not None and len(x[1]) > 2:
            cv = float(np.std(x[1]) / (abs(np.mean(x[1])) + 1e-12))
            ev.append(evidence(name, cv, None, "std / mean over the run", f"{name} varies by {fmt(cv)}x its mean"))
    rng = (int(d.steps[0]), int(d.steps[-1])) if d.n else None
    return [finding("small_group", "warning", f"Group too small (G = {size:g})", rng, ev,
                    (C.GROUP_SIZE, C.REWARD_SCALE), metrics=("adv/std",) if d.col("adv/std") is not None else ())]
