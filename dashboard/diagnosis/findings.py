"""The diagnosis vocabulary: what a rule returns and what the app and the CLI show.

Pure data; no pandas, no streamlit. Every rule in this package returns either a list of `Finding`
or a `NotJudged` saying why it could not look (a metric the source does not log, too few steps).
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

Severity = Literal["info", "warning", "critical"]
SEVERITY_ORDER: dict[str, int] = {"critical": 0, "warning": 1, "info": 2}


@dataclass(frozen=True)
class Link:
    """Where the dashboard should take the user to check something.

    page: one of "checklist", "samples", "config", "diagnosis".
    params: page-specific query parameters, e.g. {"metric": "policy/clipfrac"} for a chart, or
        {"filter": "all_fail", "step": 120} for the sample browser, or {"key": "algo.kl_mode"} for config.
    """

    page: str
    params: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Check:
    """One thing to check first, in the order of the notes' table (section 7)."""

    what: str  # e.g. "the verifier"
    how: str  # e.g. "open the samples with reward 0 and read a few answers"
    link: Link | None = None
    id: str = ""  # stable key of the translations (dashboard/diagnosis/i18n); default: `what` as a slug

    def __post_init__(self) -> None:
        if not self.id:
            object.__setattr__(self, "id", check_id(self.what))


def check_id(what: str) -> str:
    """"the old log-prob precision" -> "old_log_prob_precision": lower snake case, leading article dropped."""
    words = re.sub(r"[^a-z0-9]+", " ", what.lower()).split()
    if words and words[0] in ("the", "a", "an", "that"):
        words = words[1:]
    return "_".join(words)


@dataclass(frozen=True)
class Evidence:
    """A metric value (or trend) that made a rule fire, against what it was compared with."""

    metric: str  # canonical column, e.g. "groups/zero_std_frac"
    value: float  # the observed statistic (window median, slope, max, ...)
    threshold: float | None  # what it was compared against (None for a trend without a bound)
    statistic: str  # how `value` was computed, e.g. "median over steps 40-80"
    text: str  # one readable line: "zero-variance groups 0.92 > 0.6 for 40 steps"


@dataclass(frozen=True)
class Finding:
    rule_id: str  # stable id, e.g. "reward_flat", "first_step_ratio"
    severity: Severity
    title: str  # short headline shown in lists
    symptom: str  # the symptom in the notes' words, e.g. "reward does not move"
    step_range: tuple[int, int] | None  # first and last step where it holds (inclusive)
    evidence: tuple[Evidence, ...]
    checks: tuple[Check, ...]  # ordered: check the first one first
    metrics: tuple[str, ...] = ()  # charts this finding concerns (to shade step_range on)
    examples: tuple[dict[str, Any], ...] = ()  # sample rows cited as evidence (plain dicts)
    confidence: str = ""  # "high" / "medium" / "low": how sure the finding is (confidence.py); "" not assessed
    basis: str = ""  # why: "steps" (logged steps it rests on), "few_steps", "short_run", "estimate", "config"
    basis_n: int = 0  # the count the basis names (logged steps)

    @property
    def onset(self) -> int | None:
        """The step where the finding began (the first of its step range); None for the whole run or the config."""
        return self.step_range[0] if self.step_range else None

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "onset": self.onset}


@dataclass(frozen=True)
class NotJudged:
    rule_id: str
    reason: str  # e.g. "policy/entropy is not logged by this run"


def sort_findings(findings: list[Finding]) -> list[Finding]:
    """Most severe first; within a severity, the earliest step range first."""
    return sorted(
        findings,
        key=lambda f: (SEVERITY_ORDER[f.severity], f.step_range[0] if f.step_range else -1, f.rule_id),
    )
