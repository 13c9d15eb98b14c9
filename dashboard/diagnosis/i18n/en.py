"""The English labels around a finding (the CLI's and the page's own words). The findings' texts themselves
are English at the source: the rules and checks write them, so English needs no catalog of them."""

from __future__ import annotations

LABELS: dict[str, str] = {
    "critical": "critical",
    "warning": "warning",
    "info": "info",
    "symptom": "symptom",
    "evidence": "evidence",
    "check_first": "check first",
    "example": "example",
    "examples_heading": "**Examples from the samples** (model output, shown as plain text)",
    "steps_range": "steps {a}-{b}",
    "whole_run": "whole run",
    "run_head": "{steps} steps (last {last}); {critical} critical, {warning} warning, {info} info",
    "no_findings": "no findings: no rule fired on this run",
    "config_heading": "configuration (notes, section 6):",
    "could_not_judge": "could not judge:",
    "could_not_judge_n": "{n} rule(s) could not judge this run",
    "sep": ": ",  # between a label and its text
    "note": "note",
    "unknown": "unknown",
    "diagnosis": "Diagnosis",
    "language": "Language",
    "open_page": "open {page}",
    "no_findings_page": "No findings: no rule fired on this run.",
    "verdict_page": "Verdict",
    "check_first_page": "Check first",
    "evidence_page": "Evidence",
    "five_questions": "The five questions",
    "question": "question",
    "answer": "answer",
    "config_keys": "from config keys",
    "alert_new": "grposcope {sev} at step {step}: {title} ({rule})",
    "alert_checks": "{head}; check first: {checks}",
    "alert_cleared": "grposcope cleared at step {step}: {title} ({rule}) no longer holds",
    "list_sep": "; ",
    "rule": "rule",
    "reason": "reason",
    "new_finding": "new finding",
    "at_step": "at step {step}",
}
