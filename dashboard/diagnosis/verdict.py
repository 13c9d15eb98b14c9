"""The one-line verdict shown before the findings: healthy / not learning / unstable / can't judge yet, with why.

Pure: findings plus a few facts of the run in, a `Verdict` out. Which verdict a finding supports is data (the
tables below), not a branch per rule. "Can't judge" is never "no findings": a run with no rows, or too few
points for the trend tests, says so and why.

The line names the most severe finding first: when the finding the verdict rests on is less severe than another
(a reward-test warning beside a critical length runaway), that one leads and the verdict's own reason follows;
after them come the findings the first one explains (consequences.py marks them), so the chain reads in order.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
from scipy.stats import trim_mean as stats_trim_mean

from dashboard.diagnosis import facts
from dashboard.diagnosis.build import fmt, steps_text
from dashboard.diagnosis.context import RunData
from dashboard.diagnosis.findings import SEVERITY_ORDER, Finding
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
    core: str  # why this kind: a finding's title, or the reward's test
    lead: str = ""  # the title of a finding more severe than the one `core` rests on, named first
    after: tuple[str, ...] = ()  # titles of the findings that are the first-named finding's consequences

    @property
    def label(self) -> str:
        return LABELS[self.kind]

    @property
    def reason(self) -> str:
        return compose(self.core, self.lead, self.after)

    @property
    def text(self) -> str:
        return f"{self.label}: {self.reason}"


def compose(core: str, lead: str, after: tuple[str, ...], also: str = "; ", consequence: str = "; then, as a "
            "consequence: {v}", list_sep: str = "; ") -> str:
    """The reason's sentence from its parts: the lead, the core, the consequences (joiners given in the reader's
    language by i18n)."""
    text = f"{lead}{also}{core}" if lead else core
    return text + consequence.format(v=list_sep.join(after)) if after else text


# the share cut from each end of a window before its mean: robust to a few odd steps like a median, yet it moves
# with a reward that takes few values (a median of scores in steps of 1/8 sticks to one of them)
LEVEL_TRIM = 0.2


def level(x: np.ndarray) -> float:
    """The level of a window of finite points (N,): its mean without the lowest and highest LEVEL_TRIM."""
    return float(stats_trim_mean(x, LEVEL_TRIM)) if len(x) else float("nan")


def _first(findings: list[Finding], rule_ids: tuple[str, ...], severities: tuple[str, ...]) -> Finding | None:
    return next((f for f in findings if f.rule_id in rule_ids and f.severity in severities), None)


# A young run whose reward test finds no trend cannot yet be told from one that has not started: while it is still
# training and has fewer logged reward points than this (5 times the trend tests' minimum, facts.MIN_TREND_STEPS), a
# "no trend" whose 95% interval still holds a rise that would count as learning (facts.RISE_BAND of the reward's
# spread) is "too early to tell". The demo run, healthy by design, was "not learning" at step 20 and "does not move"
# at step 50 (issue 39). A finished run has all the steps it will have: its verdict stays on the reward test.
EARLY_POINTS = 5 * facts.MIN_TREND_STEPS


def too_early(d: RunData) -> tuple[int, float, float] | None:
    """(logged reward points, low and high end of the change's 95% interval) when the run is still training and
    too young to say its reward does not move; else None."""
    if getattr(getattr(d.run, "meta", None), "status", None) != "running":
        return None
    r, t = d.dense(facts.REWARD), facts.reward_trend(d)
    if r is None or t is None or len(r[1]) >= EARLY_POINTS:
        return None
    lo, hi = t.change_bounds
    return (len(r[1]), lo, hi) if hi >= facts.RISE_BAND * facts.reward_scale(d)[0] else None


def verdict(d: RunData, findings: list[Finding]) -> Verdict:
    """findings: sorted, most severe first (engine.diagnose). The kind and its reason (_kind), led by a more
    severe finding where there is one and followed by the named finding's consequences."""
    kind, core, basis = _kind(d, findings)
    shown = [f for f in findings if f.severity in ("critical", "warning")]
    worst = shown[0] if shown else None
    lead = None
    if worst is not None and worst is not basis and (
            worst.severity == "critical" if basis is None else SEVERITY_ORDER[worst.severity] <
            SEVERITY_ORDER[basis.severity]):
        lead = worst
    first = lead or basis
    after = tuple(dict.fromkeys(f.title for f in shown if first is not None and f is not basis
                                and f is not first and is_consequence(f, first.rule_id)))
    return Verdict(kind, core, lead.title if lead else "", after)


def is_consequence(f: Finding, root: str) -> bool:
    """Whether consequences.py demoted `f` as a consequence of a finding of rule `root` (the evidence line it
    adds names that rule)."""
    return any(e.statistic == f"first step of {root}" or e.metric == f"finding:{root}" for e in f.evidence)


def _kind(d: RunData, findings: list[Finding]) -> tuple[Kind, str, Finding | None]:
    """(kind, its reason, the finding it rests on or None)."""
    if d.n == 0:
        return "cant_judge", "the run has no metric rows yet", None
    if (f := _first(findings, UNSTABLE, ("critical",))) is not None:
        return "unstable", f.title, f
    if (f := _first(findings, NOT_LEARNING, ("critical",))) is not None:
        return "not_learning", f.title, f
    # Their rules need a trend test's worth of reward points: such a warning never rests on too few.
    flat = _first(findings, NOT_LEARNING_AT_WARNING, ("warning",))
    early = too_early(d) if flat is not None and flat.rule_id == "reward_flat" else None
    if flat is not None and early is None:
        return "not_learning", flat.title, flat
    if (f := _first(findings, WHY_NOT_LEARNING, ("critical",))) is not None and not facts.improving(d):
        return "not_learning", f.title, f
    if early is not None:
        n, lo, hi = early
        return "cant_judge", (f"{n} logged steps with a reward show no trend, but their change ({fmt(lo)} .. "
                              f"{fmt(hi)}, 95% interval) still holds a rise that would count as learning: too early "
                              "to tell whether it moves"), None
    # Almost every group tied over most of the run is never a healthy run, whatever the reward does: a rise then
    # rests on the few groups left, and nothing known says the tied ones are solved (the rule says so when it is).
    if (f := _first(findings, NEVER_HEALTHY, ("critical",))) is not None:
        return "not_learning", ("almost every group tied over most of the run; the reward rises on the few "
                                "updates with a signal"), f
    # A mismatch before the first update needs no trend: it is there at step 1, however short the run
    if (f := _first(findings, ("first_step_ratio",), ("warning",))) is not None:
        return "unstable", f.title, f
    r = d.dense(facts.REWARD)
    points = 0 if r is None else len(r[1])
    if r is None:
        return "cant_judge", f"no reward is logged ({d.n} logged steps): whether it learns is unknown", None
    if points < facts.MIN_TREND_STEPS:
        return "cant_judge", (f"only {points} logged step(s) with a reward; the trend tests need "
                              f"{facts.MIN_TREND_STEPS}"), None
    if (f := _first(findings, UNSTABLE, ("warning",))) is not None:
        return "unstable", f.title, f
    how = reward_move(d)
    warn = sum(f.severity == "warning" for f in findings)
    tail = f"; {warn} warning(s) to read" if warn else ""
    if facts.improving(d):
        return "healthy", f"the reward rises: {how}{tail}", None
    return "healthy", f"no finding says otherwise: {how}{tail}", None


def reward_move(d: RunData) -> str:
    """Where the reward went, as the levels of its first window after the warm-up and its last, each with its
    steps: "reward 0.317 at steps 5-47 -> 0.713 at steps 391-434 (trimmed window means; Mann-Kendall p = 3e-15)".

    Levels, not the trend's change: a Theil-Sen change of a reward in steps of 1/G is often exactly 0 while the
    reward rose 0.28 -> 0.43, and so is a median's move (a batch of 8 scores in steps of 1/8: 0.42 -> 0.56 has the
    median 0.5 at both ends). The steps say what the numbers are: a reward that starts at 0.004 and climbs fast
    has a first window well above its first step, which "over steps 0-434" hid."""
    t = facts.reward_trend(d)
    if t is None:
        return "no trend test"
    steps, r = d.dense(facts.REWARD)
    ok = np.isfinite(r)
    steps, x = steps[ok], r[ok]
    w = window_for(len(x))
    a, b = slice(WARMUP_STEPS, WARMUP_STEPS + w), slice(len(x) - w, len(x))
    return (f"reward {fmt(level(x[a]))} at {steps_text(steps[a][0], steps[a][-1])} -> {fmt(level(x[b]))} at {steps_text(steps[b][0], steps[b][-1])} "
            f"(trimmed window means; Mann-Kendall p = {t.p:.2g})")

