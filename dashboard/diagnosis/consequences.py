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
