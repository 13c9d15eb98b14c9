"""The one-line verdict shown before the findings: healthy / not learning / unstable / can't judge yet, with why.

Pure: findings plus a few facts of the run in, a `Verdict` out. Which verdict a finding supports is data (the
tables below), not a branch per rule. "Can't judge" is never "no findings": a run with no rows, or too few
points for the trend tests, says so and why.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
from scipy.stats import trim_mean as stats_trim_mean

from dashboard.diagnosis import facts
from dashboard.diagnosis.build import fmt
from dashboard.diagnosis.context import RunData
from dashboard.diagnosis.findings import Finding
from dashboard.diagnosis.series import WARMUP_STEPS, window_for

Kind = Literal["healthy", "not_learning", "unstable", "cant_judge"]
LABELS: dict[str, str] = {"healthy": "healthy", "not_learning": "not learning", "unstable": "unstable",
                          "cant_judge": "can't judge yet"}
# rule id -> the verdict its finding (critical, or warning for these) supports
UNSTABLE = ("non_finite", "kl_clip_explode", "first_step_ratio")
# Findings that measure learning itself: the reward (or eval) does not move, falls, or is scored wrongly.
NOT_LEARNING = ("reward_constant", "reward_flat", "no_learning", "verifier_suspect", "eval_diverges")
# a warning of these says "not learning" on its own: they are the statement itself, only less sure
NOT_LEARNING_AT_WARNING = ("reward_flat", "no_learning", "reward_constant")
# Levels that explain why a run would not learn (no signal in the groups, a reward almost never earned,
# completions cut at the cap) but do not measure learning: the same level is seen in runs whose reward climbs.
# They name a "not learning" verdict only when no finding above measures it and the reward does not rise.
WHY_NOT_LEARNING = ("zero_variance_groups", "sparse_reward", "truncation")
# ...of which these, critical, say the run is not healthy even while its reward climbs
NEVER_HEALTHY = ("zero_variance_groups",)


@dataclass(frozen=True)
class Verdict:
    kind: Kind
    reason: str

    @property
    def label(self) -> str:
        return LABELS[self.kind]

    @property
    def text(self) -> str:
        return f"{self.label}: {self.reason}"


# the share cut from each end of a window before its mean: robust to a few odd steps like a median, yet it moves
# with a reward that takes few values (a median of scores in steps of 1/8 sticks to one of them)
LEVEL_TRIM = 0.2


def level(x: np.ndarray) -> float:
    """The level of a window of finite points (N,): its mean without the lowest and highest LEVEL_TRIM."""
    return float(stats_trim_mean(x, LEVEL_TRIM)) if len(x) else float("nan")


def _first(findings: list[Finding], rule_ids: tuple[str, ...], severities: tuple[str, ...]) -> Finding | None:
    return next((f for f in findings if f.rule_id in rule_ids and f.severity in severities), None)


def verdict(d: RunData, findings: list[Finding]) -> Verdict:
    """findings: sorted, most severe first (engine.diagnose)."""
    if d.n == 0:
        return Verdict("cant_judge", "the run has no metric rows yet")
    if (f := _first(findings, UNSTABLE, ("critical",))) is not None:
        return Verdict("unstable", f.title)
    if (f := _first(findings, NOT_LEARNING, ("critical",))) is not None:
        return Verdict("not_learning", f.title)
    # Their rules need a trend test's worth of reward points: such a warning never rests on too few.
    if (f := _first(findings, NOT_LEARNING_AT_WARNING, ("warning",))) is not None:
        return Verdict("not_learning", f.title)
    if (f := _first(findings, WHY_NOT_LEARNING, ("critical",))) is not None and not facts.improving(d):
        return Verdict("not_learning", f.title)
    # Almost every group tied over most of the run is never a healthy run, whatever the reward does: a rise then
    # rests on the few groups left, and nothing known says the tied ones are solved (the rule says so when it is).
    if (f := _first(findings, NEVER_HEALTHY, ("critical",))) is not None:
        return Verdict("not_learning", "almost every group tied over most of the run; the reward rises on the few "
                       "updates with a signal")
    # A mismatch before the first update needs no trend: it is there at step 1, however short the run
    if (f := _first(findings, ("first_step_ratio",), ("warning",))) is not None:
        return Verdict("unstable", f.title)
    r = d.dense(facts.REWARD)
    points = 0 if r is None else len(r[1])
    if r is None:
        return Verdict("cant_judge", f"no reward is logged ({d.n} logged steps): whether it learns is unknown")
    if points < facts.MIN_TREND_STEPS:
        return Verdict("cant_judge", f"only {points} logged step(s) with a reward; the trend tests need "
                       f"{facts.MIN_TREND_STEPS}")
    if (f := _first(findings, UNSTABLE, ("warning",))) is not None:
        return Verdict("unstable", f.title)
    t = facts.reward_trend(d)
    # where the reward went, level to level (trimmed means of its first and last windows): a Theil-Sen change of
    # a reward in steps of 1/G is often exactly 0 while the reward rose 0.28 -> 0.43, and so is a median's move
    # (a batch of 8 scores in steps of 1/8: 0.42 -> 0.56 has the median 0.5 at both ends)
    w = window_for(points)
    x = r[1][np.isfinite(r[1])]
    start, end = x[WARMUP_STEPS:WARMUP_STEPS + w], x[-w:]
    how = (f"reward {fmt(level(start))} -> {fmt(level(end))} over steps {t.first_step:.0f}-"
           f"{t.last_step:.0f} (Mann-Kendall p = {t.p:.2g})") if t is not None else "no trend test"
    warn = sum(f.severity == "warning" for f in findings)
    if facts.improving(d):
        return Verdict("healthy", f"the reward rises: {how}" + (f"; {warn} warning(s) to read" if warn else ""))
    return Verdict("healthy", f"no finding says otherwise: {how}" + (f"; {warn} warning(s) to read" if warn else ""))
