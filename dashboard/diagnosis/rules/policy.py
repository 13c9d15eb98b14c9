"""Policy rules: entropy collapse, low diversity (notes, section 7 row 4)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from dashboard.diagnosis import checks as C
from dashboard.diagnosis import facts, stats
from dashboard.diagnosis.build import evidence, finding, fmt
from dashboard.diagnosis.context import RunData
from dashboard.diagnosis.findings import NotJudged
from dashboard.diagnosis.registry import RECHECK_LONG, rule
from dashboard.diagnosis.series import WARMUP_STEPS, early_level, episodes, rolling_median, window_for

ENTROPY_COLLAPSE_FRAC = 0.5  # entropy at less than half its own early level...
ENTROPY_FAST_STEPS = 50  # ...reached within this many steps of leaving 90% of it is "fast"
ENTROPY_SEVERE_FRAC = 0.25
LOW_TEMPERATURE = 0.5  # notes, section 7 row 1: a low temperature makes groups alike
# Per-token entropy of a sampling LLM at temperature 1 is 0.3-1.5 nats on reasoning tasks; below 0.1 nats from
# the first step on, the policy is nearly deterministic before any RL (an SFT'd policy): low diversity.
ENTROPY_NEAR_ZERO = 0.1
IDENTICAL_GROUPS = 0.5  # half the groups with every response the same text: no exploration


@rule("entropy_collapse", "entropy collapses fast", "entropy_collapse")
def entropy_collapse(d: RunData):
    if (nj := d.need("entropy_collapse", "policy/entropy", min_points=WARMUP_STEPS + 10)):
        return nj
    steps, h = d.dense("policy/entropy")
    w = window_for(len(h), lo=5, hi=20)
    base = early_level(h, w)
    if not np.isfinite(base) or base <= 0:
        return NotJudged("entropy_collapse", "the early entropy level is not positive")
    if base < ENTROPY_NEAR_ZERO:
        return []  # near 0 from the start: nothing left to collapse; low_diversity reports that level
    med = rolling_median(h, w)
    low = episodes(med < ENTROPY_COLLAPSE_FRAC * base, min_len=3)
    if not low:
        return []
    i_low = low[0][0]
    above = np.nonzero(med[:i_low] >= 0.9 * base)[0]
    i_start = int(above[-1]) if len(above) else 0
    took = int(steps[i_low] - steps[i_start])
    now = float(np.nanmin(med[i_low:]))
    fast = took <= ENTROPY_FAST_STEPS
    severity = ("critical" if now < ENTROPY_SEVERE_FRAC * base else "warning") if fast else "info"
    ev = [evidence("policy/entropy", now, ENTROPY_COLLAPSE_FRAC * base, f"{w}-step median vs early level {fmt(base)}",
                   f"entropy fell from {fmt(base)} to {fmt(now)} ({fmt(100 * now / base)}% of its early level) "
                   f"in {took} steps")]
    title = "Entropy collapses fast" if fast else "Entropy declined slowly below half its early level"
    if severity != "info" and facts.improving(d):
        # a policy locking in what the reward pays for: a note while the reward (or eval) still climbs
        severity, title = "info", "Entropy falls while the reward climbs"
    return [finding("entropy_collapse", severity, title, (int(steps[i_start]), int(steps[low[-1][1]])), ev,
                    C.ENTROPY, metrics=("policy/entropy",))]


def identical_group_frac(d: RunData) -> tuple[float, int] | None:
    """Fraction of (step, group)s whose responses are all the same text, over the last steps with samples."""
    s = d.samples()
    if s is None or not {"step", "group", "completion"} <= set(s.columns) or s["completion"].isna().all():
        return None
    return same_text_share(s)


def same_text_share(s: pd.DataFrame, last_steps: int = 20) -> tuple[float, int] | None:
    """(share of groups whose responses are one text, groups counted) over the last `last_steps` steps of `s`
    (columns step, group, completion; a missing text counts as one more text). None when no row has a step and
    a group.

    Codes and np.unique, not a pandas groupby + nunique: the live guard runs this at its checks and the groupby
    cost a millisecond on a few hundred rows (tests/test_rules_samples.py compares the two)."""
    ok = (s["step"].notna() & s["group"].notna()).to_numpy()
    if not ok.any():
        return None
    s = s[ok]
    steps = s["step"].to_numpy()
    last = np.unique(steps)[-last_steps:]
    keep = np.isin(steps, last)
    group_id = _pair_codes(steps[keep], s["group"].to_numpy()[keep])
    text_id, texts = pd.factorize(s["completion"].to_numpy(dtype=object)[keep], use_na_sentinel=False)
    pairs = np.unique(group_id.astype(np.int64) * max(1, len(texts)) + text_id)
    distinct = np.bincount(pairs // max(1, len(texts)))
    return float((distinct == 1).mean()), len(distinct)


def _pair_codes(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """A code per distinct (a, b) pair: one integer key when both hold non-negative integers (the usual step
    and group), else the tuples factorized. a, b: (N,) -> (N,) int"""
    try:
        ai, bi = a.astype(np.int64), b.astype(np.int64)
        exact = (ai == a).all() and (bi == b).all() and ai.min() >= 0 and 0 <= bi.min() and bi.max() < 2**31 \
            and ai.max() < 2**62 // (int(bi.max()) + 1)  # the key a * (max b + 1) + b fits in int64
    except (TypeError, ValueError, OverflowError):
        exact = False
    if exact:
        return pd.factorize(ai * (int(bi.max()) + 1) + bi)[0]
    return pd.factorize(pd.Series(list(zip(a.tolist(), b.tolist()))))[0]


@rule("low_diversity", "low entropy / low temperature: little in-group diversity", "low_diversity", recheck_rows=RECHECK_LONG)
def low_diversity(d: RunData):
    t = d.number("rollout.temperature", "temperature")
    ident = identical_group_frac(d)
    h = d.dense("policy/entropy")
    if t is None and ident is None and (h is None or len(h[1]) < 3):
        return NotJudged("low_diversity", "neither the sampling temperature, the entropy nor sample texts are "
                         "available")
    ev = []
    if h is not None and len(h[1]) >= 3:
        h0, hm = stats.first_level(h[1]), float(np.median(h[1]))
        if h0 < ENTROPY_NEAR_ZERO and hm < ENTROPY_NEAR_ZERO:
            ev.append(evidence("policy/entropy", hm, ENTROPY_NEAR_ZERO, "first level and median over the run",
                               f"entropy {fmt(h0)} nats at the first steps and {fmt(hm)} over the run: the policy "
                               "is nearly deterministic from the start, so a group's responses agree"))
    if t is not None and t[1] < LOW_TEMPERATURE:
        ev.append(evidence(f"config:{t[0]}", t[1], LOW_TEMPERATURE, "config",
                           f"sampling temperature {t[1]:g} < {LOW_TEMPERATURE}: a group's responses come out alike"))
    if ident is not None and ident[0] > IDENTICAL_GROUPS:
        ev.append(evidence("samples", ident[0], IDENTICAL_GROUPS, f"over {ident[1]} groups of the last steps",
                           f"{fmt(100 * ident[0])}% of groups answered with one identical text"))
    if not ev:
        return []
    for name in ("groups/zero_std_frac", "policy/entropy")[:2 - any(e.metric == "policy/entropy" for e in ev)]:
        x = d.dense(name)
        if x is not None and len(x[1]):
            ev.append(evidence(name, float(np.median(x[1])), None, "median", f"{name} median {fmt(float(np.median(x[1])))}"))
    rng = (int(d.steps[0]), int(d.steps[-1])) if d.n else None
    return [finding("low_diversity", "warning", "Little in-group diversity (low temperature or entropy)", rng, ev,
                    (C.TEMPERATURE, C.DIVERSITY, C.EXPLORATION), metrics=("groups/zero_std_frac", "policy/entropy"))]
