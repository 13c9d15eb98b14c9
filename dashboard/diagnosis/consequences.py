"""Root cause first: a critical finding that begins after the run exploded (KL / clip fraction explode, NaN/inf)
is a consequence of the explosion, and is shown as a warning that says so. So is one that begins before it with
fewer than MIN_CONSECUTIVE logged steps before the onset: a run that explodes at its second step has one step
of its own, and a level seen on one step is no evidence (series.MIN_CONSECUTIVE).

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
# A finding another one explains, by mechanism: groups whose responses come out alike score alike, so their
# zero-variance groups are low_diversity's consequence, when that finding shows the responses are made alike (a
# sampling temperature from the config, or groups of one identical text in the samples). An entropy near 0 alone
# does not say it: an SFT'd policy on a sparse reward ties its groups by failing them all.
EXPLAINED_BY = {"zero_variance_groups": ("low_diversity", ("config:", "samples"))}


def _after(start: int, onset: int, steps: np.ndarray | None) -> bool:
    """Does a finding starting at `start` rest on the steps from the onset on? steps: (T,) logged steps."""
    if start > onset:
        return True
    return steps is not None and int(np.sum((steps >= start) & (steps < onset))) < MIN_CONSECUTIVE


def demote_consequences(findings: list[Finding], steps: np.ndarray | None = None) -> list[Finding]:
    """findings -> the same findings, where a critical one (not a root) resting on the steps after the earliest
    critical root's first step is a warning with one more line of evidence. steps: (T,) the run's logged steps
    (None: only a finding that starts after the onset is a consequence)."""
    onsets = [f.step_range[0] for f in findings if f.rule_id in ROOTS and f.severity == "critical" and f.step_range]
    if not onsets:
        return findings
    onset = min(onsets)
    out = []
    for f in findings:
        if f.severity == "critical" and f.rule_id not in ROOTS and f.step_range and _after(f.step_range[0], onset, steps):
            note = evidence("step", float(onset), None, "first step of the explosion",
                            f"begins after the run exploded at step {onset}: a consequence; check the explosion first"
                            if f.step_range[0] > onset else
                            f"only {int(np.sum((steps >= f.step_range[0]) & (steps < onset)))} logged step(s) before "
                            f"the run exploded at step {onset}: mostly a consequence; check the explosion first")
            f = replace(f, severity="warning", evidence=(*f.evidence, note))
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
