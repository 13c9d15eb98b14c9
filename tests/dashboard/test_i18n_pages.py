"""The dashboard's own texts in Chinese: every label of the pages, the charts' titles and series, the evidence
lines, the "could not judge" reasons, the answers to the configuration questions and the readers' hints. The
catalog against the source (like test_i18n's titles) and against what the rules say on our own runs."""

from __future__ import annotations

import ast
import re
from collections import Counter
from pathlib import Path

import pytest
from helpers.paths import REPO
from helpers.source_texts import calls_named, rule_sources, scopes, texts
from helpers.zh_words import english_left

from collectors import open_run
from collectors.sources import SOURCES, _load_readers
from dashboard import charts, text
from dashboard.diagnosis import consequences, diagnose, i18n
from dashboard.diagnosis.i18n import en, zh

CJK = re.compile(r"[\u4e00-\u9fff]")
NUMBER = re.compile(r"(?<![\w.-])-?\d+(?:\.\d+)?(?:e[-+]?\d+)?%?")


def calls_in_source(func: str, arg: int) -> list[tuple[str, str]]:
    """(file, text) for every `func(...)` call's argument `arg` in the diagnosis package: each text an f-string can
    give, its placeholders as "1" (helpers.source_texts.texts)."""
    return [(path.name, s) for path, fn, assigned in scopes(rule_sources()) for call in calls_named(fn, func)
            if len(call.args) > arg for s in texts(call.args[arg], assigned)]


def test_every_evidence_line_in_the_rules_source_is_translated():
    found = calls_in_source("evidence", 4)
    assert len(found) >= 40  # the scan does see the rules
    bad = [(f, t) for f, t in found if not i18n.has_evidence(t, "zh")]
    assert not bad, f"evidence lines without a Chinese pattern in zh.EVIDENCE (file, text): {bad}"


def test_a_consequence_note_of_every_root_reads_in_chinese():
    """consequences._note builds its line from ROOT_WORDS (the source scan sees only "begins after 1 at step 1"):
    each root's two lines, after and shortly before the onset, in Chinese with the step and count carried."""
    for root in (*consequences.ROOTS, *consequences.ROOT_WORDS):
        for before in (None, 2):
            english = consequences._note(root, 12, before).text
            z = i18n.evidence_text(english, "zh")
            assert "第 12 步" in z and (before is None or "只记录了 2 步" in z), (english, z)
            assert not english_left(z, set()), (english, z)
    z = i18n.evidence_text(consequences._note("zero_variance_groups", 12, None).text, "zh")
    assert z == "在第 12 步 group 全组同分之后才出现：是它的后果；先查全组同分的 group"


def test_every_not_judged_reason_in_the_source_is_translated():
    found = [(f, t) for f, t in calls_in_source("NotJudged", 1) if not t.startswith("1: ")]  # the guard's own
    assert len(found) >= 15
    bad = [(f, t) for f, t in found if not i18n.has_reason_text(t, "zh")]
    assert not bad, f"reasons without a Chinese pattern in zh.NOT_JUDGED (file, text): {bad}"


def answers_in_source() -> list[tuple[str, str]]:
    """(file, text) for every answer text the configuration questions' readers can give (what a reader function
    returns, a dict's values, the parts it joins), its placeholders as "1"."""
    out = set()
    readers = sorted((REPO / "dashboard" / "diagnosis" / "rules" / "config_questions").glob("*.py"))
    for path, fn, assigned in scopes(readers):
        for n in ast.walk(fn):
            if isinstance(n, ast.Return) and n.value is not None:
                out |= {(path.name, s) for s in texts(n.value, assigned)}
            elif isinstance(n, ast.Dict):
                out |= {(path.name, s) for v in n.values for s in texts(v, assigned)}
            elif isinstance(n, ast.Call) and getattr(n.func, "attr", None) == "join":
                out |= {(path.name, s) for a in n.args if isinstance(a, (ast.List, ast.Tuple))
                        for e in a.elts for s in texts(e, assigned)}
    return sorted(out)


def test_every_configuration_answer_in_the_source_reads_in_chinese():
    """The rarer answers too (OpenRLHF's and verl's, a threshold, an unknown number of steps): in Chinese, English
    left only in config keys and values and the notes' own terms."""
    found = answers_in_source()
    assert len(found) >= 50  # the scan does see the readers
    bad = {(f, t): left for f, t in found if (left := english_left(i18n.answer_text(t, "zh"), set()))}
    assert not bad, "\n".join(f"{f}: {t!r} -> {i18n.answer_text(t, 'zh')!r}: {w}" for (f, t), w in bad.items())


def our_runs() -> list[Path]:
    return sorted(p for p in (REPO / "sample_runs").iterdir() if (p / "run.json").exists()) + sorted(
        p for p in (REPO / "tests" / "fixtures" / "trl_corpus").glob("*") if p.is_dir())


@pytest.fixture(scope="module")
def diagnoses():
    return [diagnose(open_run(str(p))) for p in our_runs()]


def test_what_the_rules_say_on_our_runs_reads_in_chinese(diagnoses):
    """Each evidence line, reason and answer the rules give on the sample runs and the TRL corpus: in Chinese,
    with the English's numbers carried over."""
    lines = 0
    for d in diagnoses:
        for f in d.findings:
            for e in f.evidence:
                z = i18n.evidence_text(e.text, "zh")
                lines += 1
                assert CJK.search(z) or re.fullmatch(r"[\w./\[\]-]+ = .+", e.text), e.text
                assert not Counter(NUMBER.findall(e.text)) - Counter(NUMBER.findall(z)), (e.text, z)  # all carried
        for n in d.not_judged:
            assert CJK.search(i18n.reason_text(n.reason, "zh")), n.reason
        for a in d.config_answers:
            z = i18n.localise_answer(a, "zh").answer
            assert CJK.search(z) or re.fullmatch(r"[\w.]+ [\w.]+", a.answer), a.answer
    assert lines >= 100


def test_every_label_chart_text_and_hint_in_both_languages():
    assert set(zh.LABELS) == set(en.LABELS)
    english_only = {"sep", "list_sep", "health_join", "col_reward", "col_advantage", "sum_group", "sum_reward_std"}  # notes terms
    untranslated = [k for k, v in zh.LABELS.items() if v == en.LABELS[k] and CJK.search(v) is None
                    and k not in english_only and re.search(r"[A-Za-z]{3}", v)]
    assert not untranslated, untranslated
    ids = {f"panel.{p.key}" for p in charts.CHECKLIST} | {f"short.{p.key}" for p in charts.CHECKLIST} | {
        f"series.{s.column}" for p in charts.CHECKLIST for s in p.series}
    assert ids <= set(zh.CHARTS), ids - set(zh.CHARTS)
    _load_readers()
    hints = {(name, what) for name, src in SOURCES.items() for what in src.hints}
    assert hints <= set(zh.HINTS), hints - set(zh.HINTS)
    assert all(CJK.search(h) for h in zh.HINTS.values())


def test_how_long_ago_and_guard_lines_in_chinese():
    assert text.ago(100.0, now=112.0, lang="zh") == "12 秒前" and text.ago(None, lang="zh") == "从未"
    assert text.ago(0.0, now=3 * 3600, lang="zh") == "3.0 小时前"
    line = text.guard_event_line({"event": "stop", "step": 10, "title": "t", "rule_id": "r"}, "zh")
    assert line.startswith("🛑 第 10 步：停止了训练：")
