"""Root cause first: a critical finding that begins after the run exploded (KL / clip fraction explode, NaN/inf)
is a consequence of the explosion, and is shown as a warning that says so.

After an explosion the policy degenerates: entropy falls to 0, every group scores alike, the reward stops
moving. Those are true, but the check to make first is the explosion's (LR, epochs, precision, staleness).
"""

from __future__ import annotations

from dataclasses import replace

from dashboard.diagnosis.build import evidence
from dashboard.diagnosis.findings import Finding

ROOTS = ("kl_clip_explode", "non_finite")


def demote_consequences(findings: list[Finding]) -> list[Finding]:
    """findings -> the same findings, where a critical one (not a root) starting after the earliest critical
    root's first step is a warning with one more line of evidence."""
    onsets = [f.step_range[0] for f in findings if f.rule_id in ROOTS and f.severity == "critical" and f.step_range]
    if not onsets:
        return findings
    onset = min(onsets)
    out = []
    for f in findings:
        if f.severity == "critical" and f.rule_id not in ROOTS and f.step_range and f.step_range[0] > onset:
            note = evidence("step", float(onset), None, "first step of the explosion",
                            f"begins after the run exploded at step {onset}: a consequence; check the explosion first")
            f = replace(f, severity="warning", evidence=(*f.evidence, note))
        out.append(f)
    return out
