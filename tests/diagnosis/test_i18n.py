"""Every user-facing text of a finding in English and Chinese: the catalog against the registry and the
rules' source, the lookup, and grpo-diagnose --lang on real runs."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest
from helpers.paths import REPO
from helpers.source_texts import DIAGNOSIS, calls_named, rule_sources, scopes, texts

from collectors import open_run
from collectors.meta import RunError
from dashboard.diagnosis import RULES, Check, diagnose, i18n
from dashboard.diagnosis.findings import check_id
from dashboard.diagnosis.i18n import en, zh
from dashboard.diagnosis.rules.config_questions import QUESTIONS, UNKNOWN, answer_questions

SAMPLE_RUNS = REPO / "sample_runs"
TRL_CORPUS = REPO / "tests" / "fixtures" / "trl_corpus"
SHARED = REPO.parent / "shared"
REAL_RUNS = SHARED / "fixtures" / "real-runs"
CJK = re.compile(r"[\u4e00-\u9fff]")


def titles_in_source() -> list[tuple[str, str, str]]:
    """(file, rule id, title) for every `finding(rule_id, severity, title, ...)` call in the rules' source."""
    out = []
    for path, fn, assigned in scopes(rule_sources()):
        for call in calls_named(fn, "finding"):
            if not call.args or not isinstance(call.args[0], ast.Constant):
                continue
            title = call.args[2] if len(call.args) > 2 else next(
                (k.value for k in call.keywords if k.arg == "title"), None)
            for text in texts(title, assigned) if title is not None else []:
                out.append((path.name, call.args[0].value, text))
    return out


def checks_in_source() -> dict[str, str]:
    """check id -> what, for every `Check("what", ...)` written in the diagnosis package."""
    out = {}
    for path in rule_sources():
        for call in calls_named(ast.parse(path.read_text()), "Check"):
            if call.args and isinstance(call.args[0], ast.Constant):
                ident = next((k.value.value for k in call.keywords if k.arg == "id"), None)
                out[ident or check_id(call.args[0].value)] = call.args[0].value
    return out


def test_every_registered_rule_has_both_languages():
    missing = [r for r, rule in RULES.items() if not rule.symptom or not CJK.search(zh.SYMPTOMS.get(r, ""))]
    untitled = [r for r in RULES if not zh.TITLES.get(r)]
    assert not missing, f"rules without a Chinese symptom in dashboard/diagnosis/i18n/zh.py: {missing}"
    assert not untitled, f"rules without a Chinese title pattern in dashboard/diagnosis/i18n/zh.py: {untitled}"
    assert not set(zh.SYMPTOMS) - set(RULES), "zh.SYMPTOMS names rules that no longer exist"


def test_every_title_in_the_rules_source_is_translated():
    found = titles_in_source()
    assert len({r for _, r, _ in found}) >= 10  # the scan does see the rules
    bad = [(f, r, t) for f, r, t in found if not i18n.has_title(r, t, "zh")]
    assert not bad, f"titles without a Chinese pattern in zh.TITLES (file, rule, title): {bad}"


def test_every_check_has_both_languages():
    checks = checks_in_source()
    assert "verifier" in checks and "old_log_prob_precision" in checks
    bad = {k: w for k, w in checks.items() if k not in zh.CHECKS or not all(CJK.search(x) or x.isascii()
                                                                              for x in zh.CHECKS[k])}
    assert not bad, f"checks without Chinese (id: what) in zh.CHECKS: {bad}"
    for what_zh, how_zh in zh.CHECKS.values():
        assert what_zh and CJK.search(how_zh), (what_zh, how_zh)
    assert not set(zh.CHECKS) - set(checks), "zh.CHECKS holds checks no rule writes any more"


LABEL_KINDS = ("healthy", "not_learning", "unstable", "cant_judge")


def verdict_reasons_in_source() -> list[str]:
    """Every reason a `Verdict(kind, reason)` in verdict.py can give, except a finding's title (f.title)."""
    out = []
    for _, fn, assigned in scopes([DIAGNOSIS / "verdict.py"]):
        out += [s for call in calls_named(fn, "Verdict") if isinstance(call.func, ast.Name) and len(call.args) == 2
                for s in texts(call.args[1], assigned)]
        # _kind returns (kind, reason, finding): the reason is the tuple's second item when the first is a kind
        for ret in (n for n in ast.walk(fn) if isinstance(n, ast.Return) and isinstance(n.value, ast.Tuple)):
            kind = ret.value.elts[0]
            if isinstance(kind, ast.Constant) and kind.value in LABEL_KINDS and len(ret.value.elts) == 3:
                out += texts(ret.value.elts[1], assigned)
    return out


def test_the_verdict_in_both_languages():
    from dashboard.diagnosis import verdict

    assert set(zh.VERDICTS) == set(verdict.LABELS)
    reasons = verdict_reasons_in_source()
    assert len(reasons) >= 4  # the scan does see them
    assert not [r for r in reasons if not i18n.has_verdict_reason(r, "zh")], reasons
    v = i18n.localise_verdict(verdict.Verdict("healthy", "the reward rises: reward 0.28 at steps 5-24 -> 0.43 at "
                                              "steps 180-199 (trimmed window means; Mann-Kendall p = 4e-27); 2 "
                                              "warning(s) to read"), "zh")
    assert v.text == ("健康：reward 在上升：reward 从第 5-24 步的 0.28 到第 180-199 步的 0.43（各为窗口的截尾均值；"
                      "Mann-Kendall p = 4e-27）；另有 2 条警告值得一读")
    assert v.kind == "healthy"


def test_questions_and_labels_in_both_languages():
    assert sorted(zh.QUESTIONS) == list(range(1, len(QUESTIONS) + 1))
    assert set(zh.LABELS) == set(en.LABELS)
    notes = SHARED / "seed" / "grpo-notes.zh.txt"
    if notes.exists():  # the five questions are the notes' own words
        text = notes.read_text()
        for q in zh.QUESTIONS.values():
            assert q in text, q


@pytest.mark.parametrize("value, lang", [("zh", "zh"), ("zh_CN.UTF-8", "zh"), ("zh-Hans", "zh"), ("ZH_tw", "zh"),
                                         ("en_US.UTF-8", "en"), ("C", None), ("C.UTF-8", None), ("fr_FR", None),
                                         ("", None), (None, None), ("zhx", None)])
def test_parse_lang(value, lang):
    assert i18n.parse_lang(value) == lang


def test_default_lang_from_the_locale():
    assert i18n.default_lang({}) == "en"
    assert i18n.default_lang({"LANG": "zh_CN.UTF-8"}) == "zh"
    assert i18n.default_lang({"LANG": "zh_CN.UTF-8", "LC_ALL": "C.UTF-8"}) == "en"  # LC_ALL overrides LANG
    assert i18n.default_lang({"LANG": "en_US.UTF-8", "LANGUAGE": "zh_CN:en"}) == "zh"
    assert i18n.default_lang({"LANG": "de_DE.UTF-8"}) == "en"
    assert i18n.default_lang({"LANG": "en_US.UTF-8", "GRPOSCOPE_LANG": "zh"}) == "zh"  # ours comes first


def test_titles_carry_their_numbers_and_words():
    assert i18n.title("reward_flat", "Reward does not move (stays near 0.492)", "zh") == "reward 不动（停在 0.492 附近）"
    assert i18n.title("zero_variance_groups", "Zero-variance groups dominate (mostly all-pass)", "zh") == \
        "全组同分的 group 占多数（多为全对）"
    assert i18n.title("non_finite", "NaN/inf in 3 metric(s) from step 41", "zh") == "3 个指标出现 NaN/inf（从第 41 步起）"
    assert i18n.title("reward_flat", "x", "en") == "x"
    # a title the catalog does not know yet: the rule's Chinese symptom, never English on a Chinese page
    assert i18n.title("reward_flat", "Reward is stuck somewhere new", "zh") == zh.SYMPTOMS["reward_flat"]
    with pytest.raises(ValueError, match="known languages are en, zh"):
        i18n.title("reward_flat", "x", "fr")


def test_check_keeps_its_id_and_link():
    c = Check("the verifier", "read responses with reward 0", None)
    assert c.id == "verifier" and Check("the old log-prob precision", "").id == "old_log_prob_precision"
    z = i18n.check(c, "zh")
    assert (z.id, z.link, z.what) == ("verifier", None, "verifier") and z.how.startswith("读 reward 为 0 的回答")
    assert i18n.check(c, "en") is c


def test_config_questions_in_chinese():
    answers = answer_questions({"algo.adv_mode": "group"}, "grpo_core")
    local = [i18n.localise_answer(a, "zh") for a in answers]
    assert [a.question for a in local] == [zh.QUESTIONS[n] for n in range(1, 6)]
    assert [a.number for a in local] == [1, 2, 3, 4, 5]
    unknown = [a for a in answers if a.answer == UNKNOWN]
    assert unknown and all(a.answer == "未知" for a in local if a.number in {u.number for u in unknown})


def diagnosed_runs() -> list[Path]:
    runs = sorted(p for p in SAMPLE_RUNS.iterdir() if (p / "run.json").exists())
    runs += sorted(p for p in TRL_CORPUS.glob("*") if p.is_dir())  # real GRPOTrainer runs made on CPU
    if REAL_RUNS.is_dir():
        runs += sorted(p for p in REAL_RUNS.iterdir() if p.is_dir())
    return runs


def diagnosis_of(path: Path):
    """The diagnosis of a run; None only for a real run the readers cannot open yet (a RunError, the readers' and
    the accuracy test's business). Our own runs must open, and no diagnosis may raise."""
    try:
        run = open_run(str(path))
    except RunError:
        if path.is_relative_to(REAL_RUNS):
            return None
        raise
    return diagnose(run)


def test_every_finding_on_sample_and_real_runs_reads_in_chinese():
    """The rules as they fire, not only as written: every title matched, every check translated, ids kept."""
    seen = 0
    for path in diagnosed_runs():
        d = diagnosis_of(path)
        if d is None:
            continue
        z = i18n.localise(d, "zh")
        assert i18n.localise(d, "en") is d
        assert z.verdict.kind == d.verdict.kind and CJK.search(z.verdict.text), (path.name, z.verdict.text)
        for f, g in zip(d.findings, z.findings, strict=True):
            seen += 1
            assert i18n.has_title(f.rule_id, f.title, "zh"), (path.name, f.rule_id, f.title)
            assert (g.rule_id, g.severity, g.step_range, g.evidence) == (f.rule_id, f.severity, f.step_range,
                                                                        f.evidence)
            assert CJK.search(g.title) and CJK.search(g.symptom), (path.name, g.title, g.symptom)
            assert [c.id for c in g.checks] == [c.id for c in f.checks]
            assert [c.link for c in g.checks] == [c.link for c in f.checks]
            assert all(CJK.search(c.how) for c in g.checks), (path.name, f.rule_id, [c.how for c in g.checks])
    assert seen >= 50


def grpo_diagnose(monkeypatch, capsys, *args: str, env: dict | None = None) -> tuple[int, str, str]:
    """grpo-diagnose in this process under a locale of `env` alone: (exit status, stdout, stderr)."""
    from dashboard.diagnosis.cli import main

    for var in i18n.LOCALE_VARS:
        monkeypatch.delenv(var, raising=False)
    for k, v in (env or {}).items():
        monkeypatch.setenv(k, v)
    try:
        code = main(list(args))
    except SystemExit as e:  # argparse: --version, a bad choice
        code = e.code
    out = capsys.readouterr()
    return code, out.out, out.err


def test_cli_lang_text_json_and_locale_default(monkeypatch, capsys):
    run = str(SAMPLE_RUNS / "small_group")
    code, out_zh, err = grpo_diagnose(monkeypatch, capsys, run, "--lang", "zh")
    assert code == 0, err
    assert "group 太小（G = 2）" in out_zh and "优先检查：" in out_zh and "[警告]" in out_zh
    assert out_zh.splitlines()[1].startswith("结论：")
    assert "1. advantage 是按 prompt group、整个 batch，还是不除标准差？" in out_zh
    out_en = grpo_diagnose(monkeypatch, capsys, run)[1]  # no locale at all: English
    assert "Group too small (G = 2)" in out_en and "check first:" in out_en
    assert not CJK.search(out_en.split("configuration (notes")[0])
    assert grpo_diagnose(monkeypatch, capsys, run, env={"LANG": "zh_CN.UTF-8"})[1] == out_zh
    assert grpo_diagnose(monkeypatch, capsys, run, "--lang", "en", env={"LANG": "zh_CN.UTF-8"})[1] == out_en

    js = json.loads(grpo_diagnose(monkeypatch, capsys, run, "--lang", "zh", "--format", "json")[1])[run]
    je = json.loads(grpo_diagnose(monkeypatch, capsys, run, "--format", "json")[1])[run]
    assert (js["lang"], je["lang"]) == ("zh", "en")
    assert [f["rule_id"] for f in js["findings"]] == [f["rule_id"] for f in je["findings"]]
    assert [[c["id"] for c in f["checks"]] for f in js["findings"]] == \
        [[c["id"] for c in f["checks"]] for f in je["findings"]]
    small = next(f for f in js["findings"] if f["rule_id"] == "small_group")
    assert small["title"] == "group 太小（G = 2）" and small["checks"][0]["id"] == "group_size"
    assert (js["config"][0]["number"], js["config"][0]["question"]) == (1, zh.QUESTIONS[1])


def test_cli_version_and_bad_lang(monkeypatch, capsys):
    code, out, _ = grpo_diagnose(monkeypatch, capsys, "--version")
    assert code == 0 and re.fullmatch(r"grpo-diagnose \d+\.\d+\.\d+\S*\n", out), out
    code, _, err = grpo_diagnose(monkeypatch, capsys, str(SAMPLE_RUNS / "healthy"), "--lang", "fr")
    assert code == 2 and "invalid choice: 'fr'" in err


def test_alert_line_and_console_sink_in_chinese():
    from dashboard.diagnosis.guard.guard import console_sink
    from dashboard.diagnosis.guard.watch import Update, alert_line

    f = next(f for f in diagnose(open_run(str(SAMPLE_RUNS / "small_group"))).findings if f.rule_id == "small_group")
    assert alert_line(f, 40) == ("grposcope WARNING at step 40: Group too small (G = 2) (small_group); check first: "
                                 "the group size; the reward scale")
    assert alert_line(f, 40, lang="zh") == ("grposcope 警告，第 40 步：group 太小（G = 2）（small_group）；优先检查："
                                            "group 大小；reward scale")
    assert alert_line(f, 41, "cleared", lang="zh") == "grposcope 第 41 步：group 太小（G = 2）（small_group）已不再成立"
    lines: list[str] = []
    console_sink(lines.append, lang="zh")(Update(step=40, new=[f]))
    assert lines == [alert_line(f, 40, lang="zh")]


def test_trl_callback_logs_findings_in_the_chosen_language(tmp_path, monkeypatch):
    import logging

    from dashboard.diagnosis.guard import trl  # transformers: the trl extra (dev installs it)
    from dashboard.diagnosis.guard.watch import Update, alert_line

    for var in i18n.LOCALE_VARS:
        monkeypatch.delenv(var, raising=False)
    assert trl.GrpoScopeGuardCallback(tmp_path / "a").guard.lang == "en"
    monkeypatch.setenv("LANG", "zh_CN.UTF-8")
    assert trl.GrpoScopeGuardCallback(tmp_path / "b").guard.lang == "zh"
    cb = trl.GrpoScopeGuardCallback(tmp_path / "c", lang="zh")
    with pytest.raises(ValueError, match="known languages are en, zh"):
        trl.GrpoScopeGuardCallback(tmp_path / "d", lang="fr")

    f = next(f for f in diagnose(open_run(str(SAMPLE_RUNS / "small_group"))).findings if f.rule_id == "small_group")
    records: list[logging.LogRecord] = []
    handler = logging.Handler()
    handler.emit = records.append
    log = logging.getLogger("transformers.grposcope")
    log.addHandler(handler)
    try:
        cb.guard._logger_sink(Update(step=40, new=[f]))
    finally:
        log.removeHandler(handler)
    assert [r.getMessage() for r in records] == [alert_line(f, 40, lang="zh")]
    assert "group 太小（G = 2）" in records[0].getMessage()
