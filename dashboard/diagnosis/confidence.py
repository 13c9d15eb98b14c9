"""How sure a finding is, from what it rests on: a label the user reads beside its onset step.

- config: the configuration says it (a key's value): high.
- estimate: a quantity the run does not log, worked out from others (tied groups from p^G + (1 - p)^G): medium.
- few_steps: fewer than MIN_CONSECUTIVE logged steps inside its step range: low (a level seen on a step or two
  is no evidence; series.MIN_CONSECUTIVE, the same bar consequences.py uses).
- short_run: a run of fewer than MIN_TREND_STEPS logged steps: medium (a trend or a level over so few points
  cannot be told from noise or from a run that has not started; facts.MIN_TREND_STEPS).
- steps: otherwise high, resting on the logged steps it counts.
Pure: no pandas, no streamlit.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from dashboard.diagnosis.facts import MIN_TREND_STEPS
from dashboard.diagnosis.findings import Finding
from dashboard.diagnosis.series import MIN_CONSECUTIVE

ESTIMATED = ("p^G",)  # evidence statistics that name an estimate, not a count


def assess(f: Finding, steps: np.ndarray | None) -> Finding:
    """`f` with its confidence, basis and basis_n set. steps: (T,) the run's logged steps."""
    if all(e.metric.startswith("config:") for e in f.evidence):
        return replace(f, confidence="high", basis="config", basis_n=0)
    if any(e.statistic.startswith(ESTIMATED) for e in f.evidence):
        return replace(f, confidence="medium", basis="estimate", basis_n=0)
    total = 0 if steps is None else len(steps)
    inside = total if f.step_range is None or steps is None else \
        int(np.sum((steps >= f.step_range[0]) & (steps <= f.step_range[1])))
    if inside < MIN_CONSECUTIVE:
        return replace(f, confidence="low", basis="few_steps", basis_n=inside)
    if total < MIN_TREND_STEPS:
        return replace(f, confidence="medium", basis="short_run", basis_n=total)
    return replace(f, confidence="high", basis="steps", basis_n=inside)
