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
            "first_step_ratio", "reference_mismatch", "non_finite")


# A live guard (guard/watch.py) judges a rule whose symptom builds over hundreds of steps (a reward that does not
# move, a length that drifts, eval against reward, the samples' diversity, the configuration) again only once the
# rows logged since it last did are a tenth of the rows it judged then: ten more rows hardly move a trend fitted on
# 300, and judging it at every check would be most of the check's cost. Early in a run (under 100 rows) that is
# every check, as for the other rules; on the guard's bounded view (at most ~480 rows) at most every 48 rows.
# The one-shot diagnosis ignores this.
RECHECK_LONG = 10  # recheck_rows = 10: again after len(view) / 10 new rows
# ... and never before 30 new rows: under 300 rows a tenth is a check or two, and the symptoms these rules report
# need more than that to change (their detectors want sustained stretches of 20+ points). Judged every check early
# on, they were half of what a short run's guard cost; two judgements 30 rows apart also hold long enough to count
# (guard/watch.py, hold_steps).
RECHECK_MIN_ROWS = 30


@dataclass(frozen=True)
class Rule:
    rule_id: str
    symptom: str  # the notes' words, shown with every finding
    fn: Callable[..., list[Finding] | NotJudged]
    symptom_id: str | None = None  # one of SYMPTOMS; None for a configuration audit that is no symptom
    recheck_rows: int = 0  # a live guard judges it again after max(len(view) / recheck_rows, RECHECK_MIN_ROWS) new
    # rows (0: every check)


RULES: dict[str, Rule] = {}


def rule(rule_id: str, symptom: str, symptom_id: str | None = None, recheck_rows: int = 0):
    """Register `fn` as rule `rule_id`. Ids are shared with sample_runs/manifest.json (docs/TEAM-CONTRACT.md);
    `symptom_id` is the labels' vocabulary word the rule reports (None: not a symptom, e.g. a config audit);
    `recheck_rows`: see RECHECK_LONG."""
    if symptom_id is not None and symptom_id not in SYMPTOMS:
        raise ValueError(f"diagnosis rule {rule_id!r}: {symptom_id!r} is not in the symptom vocabulary")

    def wrap(fn):
        if rule_id in RULES:
            raise ValueError(f"diagnosis rule {rule_id!r} registered twice")
        RULES[rule_id] = Rule(rule_id, symptom, fn, symptom_id, int(recheck_rows))
        return fn

    return wrap


def symptom_of(rule_id: str) -> str | None:
    """The labels' symptom id a rule reports (e.g. "length_drift" -> "length_effect"); None for a rule that
    reports no symptom (configuration audit) or an id no rule has. The rules are registered by then: importing
    this module runs the package's __init__, which imports the engine and with it every rule module."""
    r = RULES.get(rule_id)
    return None if r is None else r.symptom_id
