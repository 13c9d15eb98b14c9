"""Findings as plain text for a terminal: what `grpo-diagnose` prints and what `--watch` prints as findings
arrive. Below both CLIs (cli.py, guard/watch_cli.py), so neither imports the other for it."""

from __future__ import annotations

from typing import Any

from dashboard.diagnosis import i18n
from dashboard.diagnosis.findings import Finding
from dashboard.diagnosis.i18n import label

MARK = {"critical": "[CRITICAL]", "warning": "[WARNING]", "info": "[info]"}


def format_finding(f: Finding, lang: str = "en") -> str:
    """A finding as text; `f` already in `lang` (i18n.localise_finding), the labels around it and its evidence lines
    (English in the finding, as the JSON keeps them) put in here."""
    span = i18n.span(f.step_range, lang)
    mark = MARK[f.severity] if lang == "en" else f"[{label(f.severity, lang)}]"
    sep = label("sep", lang)
    lines = [f"{mark} {f.title}  ({f.rule_id}, {span})", f"    {label('symptom', lang)}{sep}{f.symptom}"]
    if sure := confidence_text(f, lang):
        lines.append(f"    {sure}")
    lines += [f"    {label('evidence', lang)}{sep}{i18n.evidence_text(e.text, lang)}" for e in f.evidence]
    lines.append(f"    {label('check_first', lang)}{sep.rstrip()}")
    lines += [f"      {i}. {c.what}{sep}{c.how}" for i, c in enumerate(f.checks, start=1)]
    for ex in f.examples[:3]:
        text = ", ".join(f"{k}={example_value(k, v, lang)!r}" for k, v in ex.items())
        lines.append(f"    {label('example', lang)}{sep}{text}")
    return "\n".join(lines)


def confidence_text(f: Finding, lang: str = "en") -> str:
    """"began at step 280; how sure: high (rests on 80 logged steps)" in `lang`; "" when not assessed."""
    if not f.confidence:
        return ""
    sure = f"{label('how_sure', lang)}{label('sep', lang)}{label('conf_' + f.confidence, lang)}"
    sure += label("in_parens", lang, v=label("basis_" + f.basis, lang, n=f.basis_n)) if f.basis else ""
    return f"{label('onset', lang, s=f.onset)}{label('list_sep', lang)}{sure}" if f.onset is not None else sure


def reader_notes(run: Any) -> list[str]:
    """What the reader skipped, repaired or assumed (restarts, launches split, steps assumed, not measured), in
    English: the problems (file: message) and the run's notes."""
    return [str(p) for p in getattr(run, "problems", [])] + list(getattr(getattr(run, "meta", None), "notes", []))


def example_value(key: str, value: Any, lang: str) -> Any:
    """An example's field as shown: the rule's own `why` in `lang`; model output and data as they are."""
    return i18n.evidence_text(value, lang) if key == "why" and isinstance(value, str) else value
