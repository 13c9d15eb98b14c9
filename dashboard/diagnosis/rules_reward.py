"""Reward rules: the reward does not move, is constant, is too sparse; zero-variance groups; small groups.

Notes, section 5 (limits of in-group standardisation) and section 7's first row ("reward does not move").
"""

from __future__ import annotations

import numpy as np

from dashboard.diagnosis import checks as C
from dashboard.diagnosis.build import evidence, finding, fmt
from dashboard.diagnosis.context import RunData
from dashboard.diagnosis.findings import NotJudged
from dashboard.diagnosis.registry import rule
from dashboard.diagnosis.series import (
    WARMUP_STEPS,
    early_level,
    episodes,
    late_level,
    rolling_median,
    window_for,
)

MIN_TREND_STEPS = 20  # fewer logged steps than this and "does not move" cannot be told from "has not started"
# A move of 0.1 in reward (10 points of pass rate for a binary reward) is about 2-3x the wander of a
# 10-step rolling median of a 128-sample batch's pass rate (std ~0.045 per step), so noise does not count.
MOVE_TOL = 0.1
SPARSE_LOW, SPARSE_HIGH = 0.05, 0.95  # pass rate this close to 0 or 1: few groups mix successes and failures
ZERO_VAR_WARN, ZERO_VAR_CRIT = 0.5, 0.8  # half the groups teach nothing: warning; four in five: critical
SUSTAINED_FRAC = 0.2  # a level condition must hold for a fifth of the run (at least MIN_CONSECUTIVE steps)
MIN_GROUP = 4  # notes, section 5: below this a group's mean and std rest on a couple of rewards


def reward_scale(d: RunData) -> float:
    """The reward's range per batch (1 for a binary reward), so MOVE_TOL is in reward units."""
    lo, hi = d.col("reward/min"), d.col("reward/max")
    if lo is not None and hi is not None:
        span = hi - lo
        span = span[np.isfinite(span) & (span > 0)]
        if len(span):
            return float(np.median(span))
    return 1.0


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


@rule("reward_flat", "reward does not move", "reward_flat")
def reward_flat(d: RunData):
    if (nj := d.need("reward_flat", "reward/mean", min_points=MIN_TREND_STEPS)):
        return nj
    steps, r = d.dense("reward/mean")
    w = window_for(len(r))
    base = early_level(r, w)
    med = rolling_median(r, w)[WARMUP_STEPS + w:]
    if not len(med) or not np.isfinite(base):
        return NotJudged("reward_flat", "too few finite reward values after the warm-up")
    scale = reward_scale(d)
    move = float(np.nanmax(np.abs(med - base)))
    if move >= MOVE_TOL * scale:
        return []
    late = late_level(r, w)
    ev = [evidence("reward/mean", move, MOVE_TOL * scale, f"largest |{w}-step median - early level|",
                   f"reward/mean stays within {fmt(move)} of its early level {fmt(base)} (moves under "
                   f"{fmt(MOVE_TOL * scale)} do not count); last {w} steps: {fmt(late)}")]
    return [finding("reward_flat", "critical", f"Reward does not move (stays near {fmt(base)})",
                    (int(steps[0]), int(steps[-1])), ev + sub_causes(d), C.REWARD_FLAT,
                    metrics=("reward/mean", "groups/zero_std_frac"))]


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


@rule("sparse_reward", "binary reward too sparse (pass rate near 0 or 1)", "sparse_binary")
def sparse_reward(d: RunData):
    if (nj := d.need("sparse_reward", "reward/pass_rate", min_points=5)):
        return nj
    steps, p = d.dense("reward/pass_rate")
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
        ev = [evidence("reward/pass_rate", v, bound, f"median over steps {steps[i0]}-{steps[i1]}",
                       f"pass rate {fmt(v)} {'<=' if side == 'near 0' else '>='} {bound} for "
                       f"{i1 - i0 + 1} logged steps: few groups mix successes and failures")]
        checks = (check, C.ZERO_VARIANCE, C.VERIFIER) if side == "near 0" else (check, C.ZERO_VARIANCE)
        out.append(finding("sparse_reward", "warning", f"Pass rate {side}: the task looks {what}",
                           (int(steps[i0]), int(steps[i1])), ev, checks, metrics=("reward/pass_rate",)))
    return out


@rule("zero_variance_groups", "zero-variance groups dominate", "zero_variance")
def zero_variance_groups(d: RunData):
    if (nj := d.need("zero_variance_groups", "groups/zero_std_frac", min_points=5)):
        return nj
    steps, z = d.dense("groups/zero_std_frac")
    w = window_for(len(z), lo=3, hi=20)
    med = rolling_median(z, w)
    eps = episodes(med > ZERO_VAR_WARN, min_len=sustained_len(len(z)))
    if not eps:
        return []
    i0, i1 = eps[0][0], eps[-1][1]
    v = float(np.median(z[i0:i1 + 1]))
    severity = "critical" if v > ZERO_VAR_CRIT else "warning"
    ev = [evidence("groups/zero_std_frac", v, ZERO_VAR_WARN, f"median over steps {steps[i0]}-{steps[i1]}",
                   f"{fmt(100 * v)}% of groups scored all the same (advantage 0, no signal) over "
                   f"steps {steps[i0]}-{steps[i1]}")]
    parts = {}
    for name, label in (("groups/all_fail_frac", "all-fail"), ("groups/all_pass_frac", "all-pass")):
        x = d.col(name)
        if x is not None and np.isfinite(x[i0:i1 + 1]).any():
            parts[label] = m = float(np.nanmedian(x[i0:i1 + 1]))
            ev.append(evidence(name, m, None, "median over the same steps", f"{label} groups: {fmt(m)}"))
    # "mostly X" only when X is at least two thirds of the zero-variance groups; otherwise say both.
    top = max(parts, key=parts.get) if parts else None
    split = (f" (mostly {top})" if top and parts[top] >= 2 * v / 3 else
             " (both all-pass and all-fail)" if len(parts) == 2 else "")
    title = "Zero-variance groups dominate" + split
    examples = zero_variance_examples(d, int(steps[i1]))
    return [finding("zero_variance_groups", severity, title, (int(steps[i0]), int(steps[i1])), ev,
                    (C.ZERO_VARIANCE, C.DIFFICULTY, C.TEMPERATURE, C.VERIFIER),
                    metrics=("groups/zero_std_frac", "groups/all_fail_frac", "groups/all_pass_frac"),
                    examples=examples)]


def zero_variance_examples(d: RunData, step: int, k: int = 3) -> list[dict]:
    """A few zero-variance groups at (or before) `step`, one row per group, texts as plain strings."""
    s = d.samples()
    if s is None or not {"step", "group", "reward"} <= set(s.columns):
        return []
    s = s[s["step"] <= step]
    if not len(s):
        return []
    s = s[s["step"] == s["step"].max()]
    out = []
    for g, rows in s.groupby("group", sort=True):
        if rows["reward"].nunique(dropna=False) == 1:
            ex = {"step": int(rows["step"].iloc[0]), "group": int(g), "reward": float(rows["reward"].iloc[0]),
                  "responses": len(rows)}
            for col in ("prompt", "completion"):
                if col in rows and rows[col].notna().any():
                    ex[col] = str(rows[col].iloc[0])[:200]
            out.append(ex)
        if len(out) >= k:
            break
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


@rule("small_group", "group too small: a single outlier dominates", "small_group")
def small_group(d: RunData):
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
