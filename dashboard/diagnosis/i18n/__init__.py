"""The diagnosis in the user's language: English (the rules' own words) or Chinese (the notes' original).

The rules and checks write English; a catalog per other language (zh.py) gives the same texts keyed by
stable ids, and `localise(diagnosis, lang)` returns the diagnosis with every user-facing text of a finding
(title, symptom, checks), the configuration questions and the labels around them in that language. Ids,
numbers and evidence values stay as they are, so JSON output compares across languages.
Pure Python; no streamlit.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from functools import cache
from types import ModuleType
from typing import Any

from dashboard.diagnosis.i18n import en, zh

LANGS = ("en", "zh")
DEFAULT_LANG = "en"
CATALOGS: dict[str, ModuleType] = {"zh": zh}  # English is the source; every other language has a catalog here
# our own first (grpo-dash --lang sets it for the app), then gettext's order: the first one set decides
LOCALE_VARS = ("GRPOSCOPE_LANG", "LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG")


def parse_lang(value: str | None) -> str | None:
    """"zh", "zh_CN.UTF-8", "zh-Hans", "ZH" -> "zh"; "en_US" -> "en"; anything else (C, fr_FR, "") -> None."""
    m = re.match(r"\s*([A-Za-z]{2})(?:$|[_.@:\-])", value or "")
    lang = m.group(1).lower() if m else None
    return lang if lang in LANGS else None


def default_lang(environ: Mapping[str, str] | None = None) -> str:
    """The language of GRPOSCOPE_LANG or the locale (LANGUAGE, LC_ALL, LC_MESSAGES, LANG), English when it is
    none of ours."""
    environ = os.environ if environ is None else environ
    for var in LOCALE_VARS:
        value = environ.get(var, "")
        if value:
            return parse_lang(value.split(":")[0]) or DEFAULT_LANG
    return DEFAULT_LANG


def _catalog(lang: str) -> ModuleType | None:
    if lang not in LANGS:
        raise ValueError(f"language {lang!r}: known languages are {', '.join(LANGS)}")
    return CATALOGS.get(lang)


def chart_text(key: str, english: str, lang: str) -> str:
    """A chart's title or series name by its id ("panel.reward", "series.reward/mean"); English as written
    in dashboard/charts.py."""
    cat = _catalog(lang)
    return cat.CHARTS.get(key, english) if cat else english


@cache
def _evidence_patterns(lang: str) -> tuple[tuple[re.Pattern, str], ...]:
    return tuple((re.compile(p), t) for p, t in _catalog(lang).EVIDENCE)


def evidence_text(english: str, lang: str) -> str:
    """An evidence line in `lang`, by the catalog's patterns (its numbers and metric names carried over);
    English when no pattern matches (has_evidence tells the tests)."""
    if _catalog(lang) is None:
        return english
    return _by_pattern(english, _evidence_patterns(lang), lang) or english


def has_evidence(english: str, lang: str) -> bool:
    return _catalog(lang) is None or any(p.fullmatch(english) for p, _ in _evidence_patterns(lang))


@cache
def _reason_text_patterns(lang: str) -> tuple[tuple[re.Pattern, str], ...]:
    return tuple((re.compile(p), t) for p, t in _catalog(lang).NOT_JUDGED)


def reason_text(english: str, lang: str) -> str:
    """Why a rule could not judge a run (NotJudged.reason), in `lang` by the catalog's patterns; English when
    none matches."""
    if _catalog(lang) is None:
        return english
    return _by_pattern(english, _reason_text_patterns(lang), lang) or english


def has_reason_text(english: str, lang: str) -> bool:
    return _catalog(lang) is None or any(p.fullmatch(english) for p, _ in _reason_text_patterns(lang))


@cache
def _note_patterns(lang: str) -> tuple[tuple[re.Pattern, str], ...]:
    return tuple((re.compile(p, re.DOTALL), t) for p, t in getattr(_catalog(lang), "NOTES", ()))


def note_text(english: str, lang: str) -> str:
    """What a reader skipped, repaired or assumed (a Problem as "file: message", or a run's note), in `lang` by
    the catalog's patterns (files, keys and numbers carried over); English when none matches (has_note_text)."""
    if _catalog(lang) is None:
        return english
    return _by_pattern(english, _note_patterns(lang), lang) or english


def has_note_text(english: str, lang: str) -> bool:
    return _catalog(lang) is None or any(p.fullmatch(english) for p, _ in _note_patterns(lang))


@cache
def _path_patterns(lang: str) -> tuple[tuple[re.Pattern, str], ...]:
    return tuple((re.compile(p, re.DOTALL), t) for p, t in getattr(_catalog(lang), "PATHS", ()))


def path_text(english: str, lang: str) -> str:
    """Why a run key was refused or an entry of a root was not read (dashboard.paths, collectors.discovery),
    in `lang` by the catalog's patterns (keys and paths carried over); English when none matches."""
    if _catalog(lang) is None:
        return english
    return _by_pattern(english, _path_patterns(lang), lang) or english


def span(step_range: tuple[int, int] | None, lang: str) -> str:
    """A finding's step range as words: "steps 3-9", "step 10" for one step, "whole run" for none."""
    if step_range is None:
        return label("whole_run", lang)
    a, b = step_range
    return label("step_one", lang, a=a) if a == b else label("steps_range", lang, a=a, b=b)


def has_label(key: str) -> bool:
    return key in en.LABELS


def hint(source: str, what: str, english: str, lang: str) -> str:
    """A reader's hint for how a user of `source` gets `what` (samples, config, live) into a run
    (collectors.sources.missing_hint), in `lang` where the catalog has it."""
    cat = _catalog(lang)
    return cat.HINTS.get((source, what), english) if cat else english


def label(key: str, lang: str, /, **values: Any) -> str:
    """A label around the findings ("check first", "steps 3-9"), filled with `values`."""
    cat = _catalog(lang)
    text = (cat.LABELS if cat else en.LABELS).get(key) or en.LABELS[key]
    return text.format(**values) if values else text


@cache
def _title_patterns(lang: str, rule_id: str) -> tuple[tuple[re.Pattern, str], ...]:
    return tuple((re.compile(p), t) for p, t in _catalog(lang).TITLES.get(rule_id, ()))


@cache
def _reason_patterns(lang: str) -> tuple[tuple[re.Pattern, str], ...]:
    return tuple((re.compile(p), t) for p, t in _catalog(lang).VERDICT_REASONS)


def _by_pattern(english: str, patterns: tuple[tuple[re.Pattern, str], ...], lang: str) -> str | None:
    """The template of the first pattern that matches all of `english`, its groups filled in (a group's text
    through the catalog's WORDS; a group whose name starts with `how` through the same patterns); None when none
    matches."""
    words = _catalog(lang).WORDS
    for pattern, template in patterns:
        m = pattern.fullmatch(english)
        if m:
            values = {k: words.get(v, v or "") for k, v in m.groupdict().items()}
            for k, v in m.groupdict().items():  # a clause the English inserted, itself translated
                if k.startswith("how") and v:
                    values[k] = _by_pattern(v, patterns, lang) or words.get(v, v)
            return template.format(**values)
    return None


def title(rule_id: str, english: str, lang: str) -> str:
    """A finding's title; one the catalog has no pattern for falls back to the rule's translated symptom."""
    if _catalog(lang) is None:
        return english
    return _by_pattern(english, _title_patterns(lang, rule_id), lang) or symptom(rule_id, english, lang)


def has_title(rule_id: str, english: str, lang: str) -> bool:
    """Whether the catalog translates this exact title (not by falling back to the symptom)."""
    return _catalog(lang) is None or any(p.fullmatch(english) for p, _ in _title_patterns(lang, rule_id))


def symptom(rule_id: str, english: str, lang: str) -> str:
    cat = _catalog(lang)
    return english if cat is None else cat.SYMPTOMS.get(rule_id, english)


def check(c: Any, lang: str) -> Any:
    """A Check with its `what` and `how` in `lang`; id and link unchanged."""
    cat = _catalog(lang)
    if cat is None or c.id not in cat.CHECKS:
        return c
    what, how = cat.CHECKS[c.id]
    return replace(c, what=what, how=how)


@dataclass(frozen=True)
class LocalVerdict:
    """A verdict.Verdict in another language: the same kind, label and reason translated."""

    kind: str
    reason: str
    label: str
    sep: str = ": "

    @property
    def text(self) -> str:
        return f"{self.label}{self.sep}{self.reason}"


def verdict_reason(reason: str, lang: str, findings: tuple | list = ()) -> str:
    """A verdict's reason: a finding's title (translated as that finding's), or one of the catalog's patterns;
    English when neither (has_verdict_reason tells the tests)."""
    if _catalog(lang) is None:
        return reason
    f = next((f for f in findings if f.title == reason), None)
    if f is not None:
        return title(f.rule_id, reason, lang)
    return _by_pattern(reason, _reason_patterns(lang), lang) or reason


def has_verdict_reason(reason: str, lang: str) -> bool:
    return _catalog(lang) is None or _by_pattern(reason, _reason_patterns(lang), lang) is not None


def localise_verdict(v: Any, lang: str, findings: tuple | list = ()) -> Any:
    """A verdict.Verdict in `lang`: its label, and its reason part by part (the lead, the kind's own reason,
    the consequences), joined with the catalog's words."""
    cat = _catalog(lang)
    if cat is None or v is None:
        return v
    from dashboard.diagnosis.verdict import compose  # the verdict imports nothing of this package

    core, lead = getattr(v, "core", v.reason), getattr(v, "lead", "")
    reason = compose(verdict_reason(core, lang, findings), verdict_reason(lead, lang, findings) if lead else "",
                     tuple(verdict_reason(t, lang, findings) for t in getattr(v, "after", ())),
                     label("verdict_also", lang), label("verdict_after", lang), label("list_sep", lang))
    return LocalVerdict(v.kind, reason, cat.VERDICTS.get(v.kind, v.label), label("sep", lang))


def question(number: int, english: str, lang: str) -> str:
    cat = _catalog(lang)
    return english if cat is None else cat.QUESTIONS.get(number, english)


def localise_finding(f: Any, lang: str) -> Any:
    if _catalog(lang) is None:
        return f
    return replace(f, title=title(f.rule_id, f.title, lang), symptom=symptom(f.rule_id, f.symptom, lang),
                   checks=tuple(check(c, lang) for c in f.checks))


def to_dict_finding(f: Any, lang: str) -> dict[str, Any]:
    """One finding's JSON in `lang` (rule_id and check ids as they are), e.g. for a --watch event."""
    return localise_finding(f, lang).to_dict()


def localise_answer(a: Any, lang: str) -> Any:
    from dashboard.diagnosis.rules.config_questions import UNKNOWN
    from dashboard.diagnosis.rules.config_questions.questions import LOG_KEY

    if _catalog(lang) is None:
        return a
    keys = tuple(label("log_key", lang, name=k[len(LOG_KEY):]) if k.startswith(LOG_KEY) else k for k in a.keys)
    return replace(a, question=question(a.number, a.question, lang), keys=keys,
                   answer=label("unknown", lang) if a.answer == UNKNOWN else answer_text(a.answer, lang))


@cache
def _answer_patterns(lang: str) -> tuple[tuple[re.Pattern, str], ...]:
    return tuple((re.compile(p), t) for p, t in _catalog(lang).ANSWERS)


def answer_text(english: str, lang: str) -> str:
    """An answer to a configuration question in `lang`, by the catalog's patterns (config keys and values
    carried over), clause by clause ("; ") when the whole has none; English where none matches."""
    if _catalog(lang) is None:
        return english
    whole = _by_pattern(english, _answer_patterns(lang), lang)
    if whole is not None:
        return whole
    parts = english.split("; ")  # an answer of several clauses: each by the patterns
    return label("list_sep", lang).join(_by_pattern(p, _answer_patterns(lang), lang) or p for p in parts)


def localise(diagnosis: Any, lang: str) -> Any:
    """The Diagnosis with its findings and configuration answers in `lang` (a new object; English: the same)."""
    if _catalog(lang) is None:
        return diagnosis
    extra = {"verdict": localise_verdict(diagnosis.verdict, lang, diagnosis.findings)} if hasattr(
        diagnosis, "verdict") else {}
    return replace(diagnosis, findings=[localise_finding(f, lang) for f in diagnosis.findings],
                   config_answers=[localise_answer(a, lang) for a in diagnosis.config_answers], **extra)


def to_dict(diagnosis: Any, lang: str) -> dict[str, Any]:
    """The JSON of a diagnosis in `lang`: stable ids (rule_id, check id, question number) beside the texts."""
    out = localise(diagnosis, lang).to_dict()
    for entry, a in zip(out.get("config", []), diagnosis.config_answers):
        entry.setdefault("number", a.number)
    out["lang"] = lang
    return out
