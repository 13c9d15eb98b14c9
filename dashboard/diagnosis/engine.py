"""diagnose(run): run every registered rule on a run and collect findings, most severe first.

A rule that raises is reported as "could not judge" with the error, so one broken rule (or one odd run)
never takes the diagnosis, the CLI or the dashboard down with it.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from dashboard.diagnosis.confidence import assess
from dashboard.diagnosis.consequences import demote_consequences, demote_explained
from dashboard.diagnosis.context import RunData
from dashboard.diagnosis.findings import Finding, NotJudged, sort_findings
from dashboard.diagnosis.registry import RULES

# importing anything of the rules package registers every rule
from dashboard.diagnosis.rules.config_questions import Answer, answer_questions
from dashboard.diagnosis.verdict import Verdict, verdict


@dataclass
class Diagnosis:
    findings: list[Finding]
    not_judged: list[NotJudged]
    config_answers: list[Answer] = field(default_factory=list)
    steps: int = 0  # logged steps the rules saw
    last_step: int | None = None
    # the one line shown before the findings
    verdict: Verdict = field(default_factory=lambda: Verdict("cant_judge", "not diagnosed"))

    def counts(self) -> dict[str, int]:
        out = {"critical": 0, "warning": 0, "info": 0}
        for f in self.findings:
            out[f.severity] += 1
        return out

    def to_dict(self) -> dict[str, Any]:
        v = {"kind": self.verdict.kind, "label": self.verdict.label, "reason": self.verdict.reason,
             "text": self.verdict.text}
        return _json_safe({"verdict": v, "steps": self.steps, "last_step": self.last_step, "counts": self.counts(),
                           "findings": [f.to_dict() for f in self.findings],
                           "not_judged": [{"rule_id": n.rule_id, "reason": n.reason} for n in self.not_judged],
                           "config": [{"question": a.question, "answer": a.answer, "keys": list(a.keys)}
                                      for a in self.config_answers]})


def _json_safe(x: Any) -> Any:
    """NaN/inf become null so the JSON is standard; tuples become lists."""
    if isinstance(x, float):
        return x if math.isfinite(x) else None
    if isinstance(x, dict):
        return {str(k): _json_safe(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_json_safe(v) for v in x]
    if hasattr(x, "item"):  # numpy scalars
        return _json_safe(x.item())
    return x


def judge(d: RunData, rules: Iterable[str] | None = None) -> dict[str, list[Finding] | NotJudged]:
    """Each registered rule (or those in `rules`) on `d` -> its raw output, by rule id. A rule that raises
    gives NotJudged with the error."""
    wanted = None if rules is None else set(rules)
    out: dict[str, list[Finding] | NotJudged] = {}
    for rule_id, r in RULES.items():
        if wanted is not None and rule_id not in wanted:
            continue
        try:
            out[rule_id] = r.fn(d)
        except Exception as e:  # noqa: BLE001 - a rule bug must not hide the other rules' findings
            out[rule_id] = NotJudged(rule_id, f"the rule failed on this run: {type(e).__name__}: {e}")
    return out


def collect(outputs: Iterable[list[Finding] | NotJudged], steps: Any = None) -> tuple[list[Finding], list[NotJudged]]:
    """Rules' outputs -> (findings, consequences of an explosion demoted and most severe first; not judged).
    steps: (T,) the run's logged steps (consequences.demote_consequences)."""
    findings: list[Finding] = []
    not_judged: list[NotJudged] = []
    for out in outputs:
        if isinstance(out, NotJudged):
            not_judged.append(out)
        else:
            findings.extend(out)
    findings = demote_explained(demote_consequences(findings, steps))
    return sort_findings([assess(f, steps) for f in findings]), not_judged


def diagnose(run: Any, rules: list[str] | None = None) -> Diagnosis:
    """Run the rules (all registered ones, or the ids in `rules`) on `run`.

    run: anything with `.metrics` (DataFrame with `step`), `.meta.config`, `.samples()`; see context.RunData.
    """
    d = RunData(run)
    findings, not_judged = collect(judge(d, rules).values(), d.steps)
    try:
        answers = answer_questions(d.config, d.source, d.metrics) if d.config else []
    except Exception:  # noqa: BLE001 - an odd config value must not stop the diagnosis
        answers = []
    return Diagnosis(findings, not_judged, answers, d.n, int(d.steps[-1]) if d.n else None, verdict(d, findings))
