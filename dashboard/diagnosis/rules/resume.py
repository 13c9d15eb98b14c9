"""A resume that is not seamless (THUDM/slime#1695: resuming from a checkpoint gave a very high rollout log-prob
gap and a very low pass rate for a few steps). A resume shows in the log as a seam: a gap in the logged steps, or
a file the reader joined as the same run resumed or restarted (collectors' Run.resumed_at: the steps where each
joined part takes over). Across a seamless resume the engine gap and the
reward go on as before; a jump at the seam says the resumed state is not the saved one (the optimizer and
scheduler state, the engine's weights)."""

from __future__ import annotations

import numpy as np

from dashboard.diagnosis import checks as C
from dashboard.diagnosis import facts, stats
from dashboard.diagnosis.build import evidence, finding, fmt
from dashboard.diagnosis.context import RunData
from dashboard.diagnosis.registry import rule
from dashboard.diagnosis.rules.engine_gap import GAP_GROWTH, JUMPING

# A gap in the steps: the next logged step is more than RESUME_GAP logging strides (the median step difference)
# on. A log every step that skips two steps has lost rows; one irregular interval (a last partial log) is not 3.
RESUME_GAP = 3
# The points each side of the seam: the thread's jump lasts "a few steps"; at least MIN_SIDE each side to judge.
RESUME_WINDOW, MIN_SIDE = 5, 3
# A reward shift at the seam counts when it is RESUME_NOISE times the reward's step-to-step noise (stats.noise):
# the medians of 5 points each side of any point of a steady run differ by about 1.25 x sqrt(2 / 5) = 0.8 noise,
# so 4 is five of those; and when it matters, a fifth of the reward's spread between responses (learning.py's
# FALL_BAND for a fall over a whole run).
RESUME_NOISE, RESUME_BAND = 4.0, 0.2


def seams(d: RunData) -> list[tuple[int, str]]:
    """[(first step after the seam, what the seam is)] in step order: gaps in the logged steps (RESUME_GAP) and
    files a reader joined as the run resumed or restarted."""
    out: dict[int, str] = {}
    steps = d.steps
    if len(steps) > 2 * MIN_SIDE:
        diff = np.diff(steps)
        stride = float(np.median(diff))
        for i in np.flatnonzero(diff > RESUME_GAP * stride):
            out[int(steps[i + 1])] = (f"logged steps jump from {int(steps[i])} to {int(steps[i + 1])} (a logging "
                                      f"stride is {fmt(stride)}): rows are missing, as after a relaunch")
    for at in getattr(d.run, "resumed_at", None) or ():  # collectors' Run.resumed_at: parts the reader joined
        out.setdefault(int(at), f"the reader joined a resumed or restarted launch at step {at}")
    return sorted(out.items())


def _sides(steps: np.ndarray, x: np.ndarray, at: int) -> tuple[np.ndarray, np.ndarray] | None:
    """(up to RESUME_WINDOW points before step `at`, up to RESUME_WINDOW from it on); None under MIN_SIDE a side."""
    i = int(np.searchsorted(steps, at))
    before, after = x[max(0, i - RESUME_WINDOW):i], x[i:i + RESUME_WINDOW]
    return (before, after) if min(len(before), len(after)) >= MIN_SIDE else None


def gap_jump_at(d: RunData, at: int) -> list:
    """[evidence] when a per-token engine gap (engine_gap.JUMPING) is within its bound before the seam and beyond
    it, GAP_GROWTH times higher, after."""
    for name, what, zero, bound in JUMPING:
        x = d.dense(name)
        got = None if x is None else _sides(x[0], np.abs(x[1] - zero), at)
        if got is None:
            continue
        b, a = float(np.median(got[0])), float(np.median(got[1]))
        if b <= bound < a and a >= GAP_GROWTH * b:
            return [evidence(name, a, bound, f"median of {len(got[1])} logged points from step {at}",
                             f"{what} is {fmt(b)} before the seam and {fmt(a)} after it (> {bound:g}, "
                             f"{fmt(a / b) + ' times' if b > 0 else 'from 0'}): the engine samples from other "
                             "weights than the trainer's right after the resume")]
    return []


def reward_jump_at(d: RunData, at: int) -> list:
    """[evidence] when the reward's level shifts at the seam by RESUME_NOISE times its noise and RESUME_BAND of
    its spread between responses."""
    r = d.dense(facts.REWARD)
    got = None if r is None else _sides(r[0], r[1], at)
    if got is None:
        return []
    noise, (scale, how) = stats.noise(r[1]), facts.reward_scale(d)
    b, a = float(np.median(got[0])), float(np.median(got[1]))
    shift = a - b
    if not (np.isfinite(noise) and abs(shift) >= RESUME_NOISE * noise and abs(shift) >= RESUME_BAND * scale):
        return []
    return [evidence(facts.REWARD, a, b, f"median of {len(got[1])} logged points from step {at}",
                     f"reward {fmt(b)} before the seam, {fmt(a)} after it: a shift of {fmt(shift)}, "
                     f"{fmt(abs(shift) / noise) if noise > 0 else 'many'} times its step-to-step noise and "
                     f"{fmt(abs(shift) / scale)} of its spread {fmt(scale)} ({how})")]


@rule("resume_jump", "a resume that is not seamless")
def resume_jump(d: RunData):
    out = []
    for at, what in seams(d):
        ev = gap_jump_at(d, at) + reward_jump_at(d, at)
        if not ev:
            continue
        seam = evidence("step", float(at), None, "first step after the seam", what)
        i = min(int(np.searchsorted(d.steps, at)) + RESUME_WINDOW - 1, len(d.steps) - 1)
        out.append(finding("resume_jump", "warning", f"The run jumps at its resume (step {at}): the resume is not "
                           "seamless", (at, int(d.steps[i])), [seam, *ev], (C.RESUME_STATE, C.WEIGHT_SYNC),
                           metrics=tuple(e.metric for e in ev)))
    return out[:1]
