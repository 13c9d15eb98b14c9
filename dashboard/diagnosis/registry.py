"""The rule registry: each rule is a function `RunData -> list[Finding] | NotJudged`, registered by id.

The engine runs every registered rule; adding a rule is adding a function in a rules_* module, never a
branch in the engine.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from dashboard.diagnosis.findings import Finding, NotJudged


@dataclass(frozen=True)
class Rule:
    rule_id: str
    symptom: str  # the notes' words
    fn: Callable[..., list[Finding] | NotJudged]


RULES: dict[str, Rule] = {}


def rule(rule_id: str, symptom: str):
    """Register `fn` as rule `rule_id`. Ids are shared with sample_runs/manifest.json (docs/TEAM-CONTRACT.md)."""

    def wrap(fn):
        if rule_id in RULES:
            raise ValueError(f"diagnosis rule {rule_id!r} registered twice")
        RULES[rule_id] = Rule(rule_id, symptom, fn)
        return fn

    return wrap
