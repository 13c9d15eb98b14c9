"""Small constructors so rules read as their logic, not as dataclass plumbing."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from dashboard.diagnosis.findings import Check, Evidence, Finding, Severity
from dashboard.diagnosis.registry import RULES


def fmt(v: float) -> str:
    return f"{v:.3g}" if abs(v) >= 1e-3 or v == 0 else f"{v:.2e}"


def evidence(metric: str, value: float, threshold: float | None, statistic: str, text: str) -> Evidence:
    return Evidence(metric, float(value), None if threshold is None else float(threshold), statistic, text)


def finding(rule_id: str, severity: Severity, title: str, step_range: tuple[int, int] | None,
            evidence: Sequence[Evidence], checks: Sequence[Check], metrics: Sequence[str] = (),
            examples: Sequence[dict[str, Any]] = ()) -> Finding:
    return Finding(rule_id=rule_id, severity=severity, title=title, symptom=RULES[rule_id].symptom,
                   step_range=step_range, evidence=tuple(evidence), checks=tuple(checks),
                   metrics=tuple(metrics) or tuple(dict.fromkeys(e.metric for e in evidence)),
                   examples=tuple(examples))
