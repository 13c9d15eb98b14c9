"""Small constructors so rules read as their logic, not as dataclass plumbing."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from dashboard.diagnosis.findings import Check, Evidence, Finding, Severity
from dashboard.diagnosis.registry import RULES


def fmt(v: float) -> str:
    """A number as a person writes it in a sentence: 3 significant digits (0.0531, 12.4), a whole number from 1000
    up to a million ("1725 tokens", not "1.72e+03 tokens"), powers of ten only beyond (2.00e-05, 3.10e+07)."""
    if math.isfinite(v) and 1e3 <= abs(float(f"{v:.3g}")) < 1e6:
        return f"{v:.0f}"
    return f"{v:.3g}" if abs(v) >= 1e-3 or v == 0 or not math.isfinite(v) else f"{v:.2e}"


def steps_text(a: int, b: int) -> str:
    """Logged steps a..b in an evidence line: "steps 5-47", or "step 10" for one ("steps 10-10" read as a typo)."""
    return f"step {a}" if a == b else f"steps {a}-{b}"


def evidence(metric: str, value: float, threshold: float | None, statistic: str, text: str) -> Evidence:
    return Evidence(metric, float(value), None if threshold is None else float(threshold), statistic, text)


def finding(rule_id: str, severity: Severity, title: str, step_range: tuple[int, int] | None,
            evidence: Sequence[Evidence], checks: Sequence[Check], metrics: Sequence[str] = (),
            examples: Sequence[dict[str, Any]] = ()) -> Finding:
    return Finding(rule_id=rule_id, severity=severity, title=title, symptom=RULES[rule_id].symptom,
                   step_range=step_range, evidence=tuple(evidence), checks=tuple(checks),
                   metrics=tuple(metrics) or tuple(dict.fromkeys(e.metric for e in evidence)),
                   examples=tuple(examples))
