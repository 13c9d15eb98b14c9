"""Length rules: completions cut at the length cap (a level, even when it never changed), and length drifting.

Notes, section 5 (the length effect) and section 8 (response length on the checklist). A completion that never
ends is scored on cut-off text: a large share of them is a finding from the first step on.
"""

from __future__ import annotations

import numpy as np

from dashboard.diagnosis import checks as C
from dashboard.diagnosis import facts, stats
from dashboard.diagnosis.build import evidence, finding, fmt, steps_text
from dashboard.diagnosis.context import RunData
from dashboard.diagnosis.findings import NotJudged
from dashboard.diagnosis.registry import RECHECK_LONG, rule
from dashboard.diagnosis.rules.reward import sustained_len
from dashboard.diagnosis.series import centred_median, early_level, late_level, window_for

LEN_GROWTH = 1.5  # completion length 1.5x its early level...
LEN_MIN_TOKENS = 2.0  # ...and at least this many tokens longer (tiny models answer in 2-3 tokens)
TRUNC_HIGH, TRUNC_RISE = 0.2, 0.1  # length_drift: truncated fraction above 0.2 and 0.1 above its early level
# truncation is a level, judged on the run's rolling median over a fifth of the run (a noisy share that crosses
# the bar on 74% of the steps yet never 60 steps in a row is still a level). A double-digit share of the
# completions cut is a warning: those rewards score cut-off text, and a verifier may never see the answer. The
# healthy runs of our corpora cut none; the real runs that cut 1 in 16 (a group of 16, one long answer) stay under.
# Nine in ten (or a mean length within 10% of the cap) means completions are pinned: nothing the reward sees ended.
TRUNC_SHARE, TRUNC_PINNED, CAP_NEAR = 0.1, 0.9, 0.9
PINNED_RUN_SHARE = 0.5  # critical needs the pinning on half the logged steps or more
# TRL logs 0 here when no completion of the step ended (readers map completions/mean_terminated_length)
TERMINATED = ("completions/terminated_len_mean",)
CAP_KEYS = ("rollout.max_new_tokens", "max_completion_length", "rollout.response_length", "response_length",
            "generate_max_len", "max_new_tokens")
MIN_POINTS = 5
# A step's mean length equal to the run's longest mean means every completion of the step had that length: three
# such steps are a cap, whatever share of the run they are (a natural ending never lines up G answers exactly).
# A cap is a whole number of tokens, so such a mean is one: a toy task's mean of 2.75 tokens, reached three times
# by chance in a small batch, is no cap.
MEAN_AT_CAP_STEPS = 3


def length_cap(d: RunData) -> tuple[float, str] | None:
    """(cap in tokens, where it comes from): the config, else a ceiling the lengths hit exactly and repeatedly
    (TRL's max completion length, or the mean length itself when every completion was cut)."""
    hit = d.number(*CAP_KEYS)
    if hit is not None and hit[1] > 0:
        return hit[1], f"config {hit[0]}"
    for name, need in (("completions/len_max", lambda n: max(3, 0.1 * n)), ("completions/len_mean",
                                                                            lambda n: MEAN_AT_CAP_STEPS)):
        x = d.dense(name)
        if x is None or len(x[1]) < MIN_POINTS:
            continue
        top = float(np.max(x[1]))
        if top > 0 and top == round(top) and np.sum(x[1] == top) >= need(len(x[1])) \
                and not _none_cut(d, x[0][x[1] == top]):
            return top, f"{name} reaches exactly {fmt(top)} on {int(np.sum(x[1] == top))} logged steps"
    return None


def _none_cut(d: RunData, at: np.ndarray) -> bool:
    """True when the run logs its truncated share at the steps `at` (K,) and it is 0 on every one: lengths that
    reach a ceiling there met no cap (a toy task's answers are 3 tokens long at most, its cap is 8)."""
    tr = d.dense("completions/truncated_frac")
    if tr is None:
        return False
    cut = tr[1][np.isin(tr[0], at)]
    return len(cut) > 0 and bool(np.all(cut == 0))


def level(x: np.ndarray, n: int) -> np.ndarray:
    """The centred rolling median of `x` over a fifth of the run (an odd window, at least 5 points; the whole
    series when shorter): the level a share or a length holds, a single step's noise aside. (T,) -> (T,)"""
    w = sustained_len(n) | 1
    return centred_median(np.asarray(x, dtype=np.float64), min(w, max(1, len(x)) | 1))


def _pinned_mask(d: RunData) -> tuple[np.ndarray, np.ndarray, list] | None:
    """(steps, mask of steps whose completions are cut at or sit at the cap, evidence) from the truncated share,
    a terminated length of 0, or the mean length near the cap; None when none of these is logged."""
    ev, masks, steps = [], [], d.steps
    tr = d.col("completions/truncated_frac")
    if tr is not None and np.isfinite(tr).any():
        held = level(tr, d.n) >= TRUNC_SHARE
        masks.append(held)
        v = float(np.nanmedian(tr[held])) if held.any() else float(np.nanmedian(tr))
        where = "median over those steps" if held.any() and not held.all() else "median over the run"
        ev.append(evidence("completions/truncated_frac", v, TRUNC_SHARE, where,
                           f"{fmt(100 * v)}% of completions cut at the length cap ({where})"))
    for name in TERMINATED:
        x = d.col(name)
        if x is not None and (x == 0).any():
            masks.append(level((x == 0).astype(np.float64), d.n) >= 0.5)
            ev.append(evidence(name, float((x == 0).sum()), None, "logged steps with value 0",
                               f"no completion ended on {int((x == 0).sum())} logged steps ({name} = 0)"))
            break
    ln, cap = d.col("completions/len_mean"), length_cap(d)
    if ln is not None and cap is not None and np.isfinite(ln).any():
        near = level(ln, d.n) >= CAP_NEAR * cap[0]
        masks.append(near)
        if near.any():
            v = float(np.nanmedian(ln[near]))
            ev.append(evidence("completions/len_mean", v, CAP_NEAR * cap[0], f"cap {fmt(cap[0])} ({cap[1]})",
                               f"mean completion length {fmt(v)} tokens on {int(near.sum())} logged steps, within "
                               f"10% of the cap {fmt(cap[0])} ({cap[1]})"))
    if not masks:
        return None
    return steps, np.logical_or.reduce(masks), ev


@rule("truncation", "a large share of completions cut at the length cap", "truncation", recheck_rows=RECHECK_LONG)
def truncation(d: RunData):
    got = _pinned_mask(d)
    if got is None:
        return NotJudged("truncation", "neither the truncated share, the terminated length nor a length cap is known")
    steps, held, ev = got
    if not held.any():
        return []
    share = float(held.mean())
    tr = d.col("completions/truncated_frac")
    pinned_share = float(np.nanmedian(tr[held])) if tr is not None and np.isfinite(tr[held]).any() else None
    # a terminated length of 0 says every completion of the step was cut, whatever the share column rounds to
    term = next((x for n in TERMINATED if (x := d.col(n)) is not None), None)
    none_ended = term is not None and float(np.mean(term[held] == 0)) >= 0.5
    pinned = pinned_share is None or pinned_share >= TRUNC_PINNED or none_ended
    i0, i1 = int(np.argmax(held)), len(held) - 1 - int(np.argmax(held[::-1]))
    # Pinned completions are a level, and runs whose reward climbs show the same level (a short answer scored
    # before the cap is reached); the cut is what stops the run only when the reward is also flat beyond doubt.
    stuck = facts.reward_stuck(d) and not facts.improving(d)
    severity = "critical" if pinned and share >= PINNED_RUN_SHARE and stuck else "warning"
    if severity == "critical":
        t = facts.reward_trend(d)
        ev.append(evidence("reward/mean", t.change, None, "Theil-Sen change over the run, bounds of both fits",
                           f"and the reward does not move (change {fmt(t.change)}, 95% bounds {fmt(t.change_bounds[0])} .. "
                           f"{fmt(t.change_bounds[1])}): nothing the run does gets past the cap"))
    title = ("Completions are pinned at the length cap" if pinned else "Many completions are cut at the length cap")
    ev.insert(0, evidence("completions", share, None, "share of logged steps", f"on {int(held.sum())} of {d.n} "
                          f"logged steps ({steps_text(steps[i0], steps[i1])}) completions sit at or are cut by the cap"))
    return [finding("truncation", severity, title, (int(steps[i0]), int(steps[i1])), ev,
                    (C.STOP_TOKEN, C.MAX_TOKENS, C.LENGTH_FORMAT) if none_ended else
                    (C.MAX_TOKENS, C.LENGTH_FORMAT, C.LENGTH_AGG),
                    metrics=("completions/truncated_frac", "completions/len_mean"))]


@rule("length_drift", "length effects: truncation rising, length drifting", "length_effect", recheck_rows=RECHECK_LONG)
def length_drift(d: RunData):
    have = [m for m in ("completions/len_mean", "completions/truncated_frac") if d.dense(m) is not None]
    if not have:
        return NotJudged("length_drift", "completions/len_mean and completions/truncated_frac are not logged")
    ev = []
    ln = d.dense("completions/len_mean")
    if ln is not None and len(ln[1]) >= facts.MIN_TREND_STEPS:
        w = window_for(len(ln[1]))
        l0, l1 = early_level(ln[1], w), late_level(ln[1], w)
        # a growth, not a wander: the late level well above the early one and a significant upward trend (tested in
        # that order: the trend, pairs of every two points, is the costly part, and most runs fail the levels)
        grew = l1 > LEN_GROWTH * l0 and l1 - l0 > LEN_MIN_TOKENS
        if grew and (t := stats.trend(*ln)) is not None and t.direction() == "up":
            ev.append(evidence("completions/len_mean", l1, LEN_GROWTH * l0, f"last {w} steps vs early level",
                               f"mean completion length grew from {fmt(l0)} to {fmt(l1)} tokens (Mann-Kendall "
                               f"tau {t.tau:.2f}, p = {t.p:.2g})"))
    tr = d.dense("completions/truncated_frac")
    if tr is not None and len(tr[1]) >= facts.MIN_TREND_STEPS:
        w = window_for(len(tr[1]))
        t0, t1 = early_level(tr[1], w), late_level(tr[1], w)
        if t1 > TRUNC_HIGH and t1 - t0 > TRUNC_RISE:
            ev.append(evidence("completions/truncated_frac", t1, TRUNC_HIGH, f"last {w} steps vs early {fmt(t0)}",
                               f"truncated responses rose from {fmt(t0)} to {fmt(t1)}"))
    if not ev:
        return []
    agg = d.setting("algo.loss_agg", "loss_type", "loss_agg_mode")
    checks = (C.LENGTH_AGG, C.MAX_TOKENS, C.LENGTH_FORMAT)
    if agg is not None:
        ev.append(evidence(f"config:{agg[0]}", float("nan"), None, "config", f"loss aggregation {agg[0]} = {agg[1]}"))
    steps = d.steps
    return [finding("length_drift", "warning", "Completion length drifts", (int(steps[0]), int(steps[-1])), ev,
                    checks, metrics=tuple(have))]


