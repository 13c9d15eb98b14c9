"""The rule registry: each rule is a function `RunData -> list[Finding] | NotJudged`, registered by id.

The engine runs every registered rule; adding a rule is adding a function in a module of `rules/`, never a
branch in the engine. Each rule also names the symptom it reports in the labels' vocabulary (the table in
`../shared/fixtures/real-runs/README.md`), so an accuracy harness scores findings by symptom through
`symptom_of(rule_id)` instead of keeping its own copy of the mapping.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from dashboard.diagnosis.findings import Finding, NotJudged

# The labels' symptom vocabulary (real-runs README, "Symptom vocabulary"): the notes' words as ids.
SYMPTOMS = ("reward_flat", "reward_up_eval_down", "kl_clip_explode", "entropy_collapse", "no_learning",
            "zero_variance", "small_group", "sparse_binary", "length_effect", "truncation", "low_diversity",
            "first_step_ratio", "reference_mismatch")


@dataclass(frozen=True)
class Rule:
    rule_id: str
    symptom: str  # the notes' words, shown with every finding
    fn: Callable[..., list[Finding] | NotJudged]
    symptom_id: str | None = None  # one of SYMPTOMS; None for a configuration audit that is no symptom


RULES: dict[str, Rule] = {}


def rule(rule_id: str, symptom: str, symptom_id: str | None = None):
    """Register `fn` as rule `rule_id`. Ids are shared with sample_runs/manifest.json (docs/TEAM-CONTRACT.md);
    `symptom_id` is the labels' vocabulary word the rule reports (None: not a symptom, e.g. a config audit)."""
    if symptom_id is not None and symptom_id not in SYMPTOMS:
        raise ValueError(f"diagnosis rule {rule_id!r}: {symptom_id!r} is not in the symptom vocabulary")

    def wrap(fn):
        if rule_id in RULES:
            raise ValueError(f"diagnosis rule {rule_id!r} registered twice")
        RULES[rule_id] = Rule(rule_id, symptom, fn, symptom_id)
        return fn

    return wrap


def symptom_of(rule_id: str) -> str | None:
    """The labels' symptom id a rule reports (e.g. "length_drift" -> "length_effect"); None for a rule that
    reports no symptom (configuration audit) or an id no rule has. Imports every rule module first."""
    import dashboard.diagnosis.engine  # noqa: F401 - registers the rules

    r = RULES.get(rule_id)
    return None if r is None else r.symptom_id
