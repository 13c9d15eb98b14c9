"""Root cause first: a critical finding that begins after the run exploded (KL / clip fraction explode, NaN/inf;
an explosion lowered to a warning only because the config is missing counts, CAPPED_ROOT) is a consequence of the
explosion, and is shown as a warning that says so. So is one that begins before it with fewer than
MIN_CONSECUTIVE logged steps before the onset: a run that explodes at its second step has one step of its own,
and a level seen on one step is no evidence (series.MIN_CONSECUTIVE).

After an explosion the policy degenerates: entropy falls to 0, every group scores alike, the reward stops
moving. Those are true, but the check to make first is the explosion's (LR, epochs, precision, staleness).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from dashboard.diagnosis.build import evidence
from dashboard.diagnosis.findings import Finding
from dashboard.diagnosis.series import MIN_CONSECUTIVE

ROOTS = ("kl_clip_explode", "non_finite")
# The value of a root's "config:kl" evidence line when that line lowered a critical explosion to a warning because
# the config does not say whether a KL term holds the policy, nor its temperature (a metrics export without its
# config): for all the log says it is an explosion, and what follows is its consequence, so such a root explains as
# a critical one does (kl.py sets it). A run known to have no KL term travels; its KL explains nothing.
CAPPED_ROOT = 1.0
# A collapse is a root of what it makes, and of nothing else: a policy whose entropy fell to 0 answers each prompt
# one way, so its groups tie and its reward stops moving from then on. A level of low entropy from the start is no
# collapse and explains nothing (EXPLAINED_BY below says why).
PARTIAL_ROOTS = {"entropy_collapse": ("zero_variance_groups", "reward_flat"),
                 # tied groups have advantage 0 and give no gradient (the notes' section 3): a reward that does not
                 # move while they dominate is what they make, and the check is theirs (difficulty, verifier)
                 "zero_variance_groups": ("reward_flat",)}
# What a consequence's evidence line calls its root: (what happened at step {s}, what to check first).
ROOT_WORDS = {"entropy_collapse": ("the entropy collapsed", "the collapse"),
              "zero_variance_groups": ("the groups tied", "the tied groups")}
# A finding another one explains, by mechanism: groups whose responses come out alike score alike, so their
# zero-variance groups are low_diversity's consequence, when that finding shows the responses are made alike (a
# sampling temperature from the config, or groups of one identical text in the samples). An entropy near 0 alone
# does not say it: an SFT'd policy on a sparse reward ties its groups by failing them all.
EXPLAINED_BY = {"zero_variance_groups": ("low_diversity", ("config:", "samples"))}


def _is_root(f: Finding) -> bool:
    """Critical, or an explosion its config lowered to a warning (CAPPED_ROOT)."""
    return f.severity == "critical" or (f.rule_id in ROOTS and any(
        e.metric == "config:kl" and e.value == CAPPED_ROOT for e in f.evidence))


def _after(start: int, onset: int, steps: np.ndarray | None) -> bool:
    """Does a finding starting at `start` rest on the steps from the onset on? steps: (T,) logged steps."""
    if start > onset:
        return True
    return steps is not None and int(np.sum((steps >= start) & (steps < onset))) < MIN_CONSECUTIVE


def _onset(f: Finding, roots: dict[str, int]) -> tuple[str, int] | None:
    """(root, first step) of the earliest critical root that can explain `f`; None when none can."""
    if f.rule_id in ROOTS:
        return None
    able = [(step, r) for r, step in roots.items()
            if r != f.rule_id and (r in ROOTS or f.rule_id in PARTIAL_ROOTS.get(r, ()))]
    return (min(able)[1], min(able)[0]) if able else None


def _note(root: str, onset: int, before: int | None):
    """The evidence line a consequence of `root` (which began at step `onset`) carries; `before`: its own logged
    steps before the onset when it began earlier, None when it began after."""
    if root in ROOT_WORDS:  # a collapse, tied groups
        what, check = ROOT_WORDS[root]
        text = (f"begins after {what} at step {onset}: a consequence; check {check} first"
                if before is None else f"only {before} logged step(s) before {what} at step {onset}: "
                f"mostly a consequence; check {check} first")
    else:
        text = (f"begins after the run exploded at step {onset}: a consequence; check the explosion first"
                if before is None else f"only {before} logged step(s) before the run exploded at step {onset}: "
                "mostly a consequence; check the explosion first")
    return evidence("step", float(onset), None, f"first step of {root}", text)


def demote_consequences(findings: list[Finding], steps: np.ndarray | None = None) -> list[Finding]:
    """findings -> the same findings, where a critical one resting on the steps after the earliest critical root
    that can explain it (an explosion explains anything, a collapse what it makes) is a warning with one more line
    of evidence. steps: (T,) the run's logged steps (None: only a finding that starts after the onset is a
    consequence)."""
    roots: dict[str, int] = {}
    for f in findings:
        if (f.rule_id in ROOTS or f.rule_id in PARTIAL_ROOTS) and _is_root(f) and f.step_range:
            roots[f.rule_id] = min(roots.get(f.rule_id, f.step_range[0]), f.step_range[0])
    if not roots:
        return findings
    out = []
    for f in findings:
        hit = _onset(f, roots) if f.severity == "critical" and f.step_range else None
        if hit is not None and _after(f.step_range[0], hit[1], steps):
            before = None if f.step_range[0] > hit[1] else int(np.sum((steps >= f.step_range[0]) & (steps < hit[1])))
            f = replace(f, severity="warning", evidence=(*f.evidence, _note(hit[0], hit[1], before)))
        out.append(f)
    return out


def demote_explained(findings: list[Finding]) -> list[Finding]:
    """findings -> the same findings, where a critical one that a warning-or-worse finding of its EXPLAINED_BY
    rule explains (with evidence of one of the named kinds) is a warning with one more line of evidence naming
    that rule."""
    shown = {f.rule_id: f for f in findings if f.severity in ("warning", "critical")}
    out = []
    for f in findings:
        cause, kinds = EXPLAINED_BY.get(f.rule_id, (None, ()))
        why = shown.get(cause)
        if f.severity == "critical" and why is not None and any(e.metric.startswith(kinds) for e in why.evidence):
            note = evidence(f"finding:{cause}", float("nan"), None, "the finding that explains it",
                            f"the groups' responses come out alike ({cause}): a consequence; check the sampling "
                            "diversity first")
            f = replace(f, severity="warning", evidence=(*f.evidence, note))
        out.append(f)
    return out
