"""The dashboard's language switch (streamlit AppTest): ?lang=zh renders the diagnosis in Chinese, the choice
is kept in the URL across pages, and English stays the default."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from helpers.dash_fixtures import make_root
from helpers.paths import REPO
from streamlit.testing.v1 import AppTest

from dashboard import data
from dashboard.diagnosis import i18n
from dashboard.diagnosis.i18n import zh
from dashboard.paths import ROOTS_ENV

APP = str(REPO / "dashboard" / "app.py")
TIMEOUT = 60
CJK = re.compile(r"[\u4e00-\u9fff]")


@pytest.fixture(scope="module")
def root(tmp_path_factory) -> Path:
    return make_root(tmp_path_factory.mktemp("i18n_dash") / "root")


@pytest.fixture(autouse=True)
def env(root, monkeypatch):
    monkeypatch.setenv(ROOTS_ENV, str(root))
    for var in i18n.LOCALE_VARS:
        monkeypatch.delenv(var, raising=False)
    data.clear_caches()
    yield
    data.clear_caches()


def open_page(page: str, **params) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    for k, v in params.items():
        at.query_params[k] = v
    at.switch_page(f"views/{page}.py")
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    return at


def url_lang(at: AppTest) -> str | None:
    v = at.query_params.get("lang")
    return v[0] if isinstance(v, list) else v


def page_text(at: AppTest) -> str:
    return "\n".join(str(e.value) for kind in ("markdown", "caption", "title", "error", "success", "info",
                                               "warning") for e in getattr(at, kind))


def test_diagnosis_page_in_chinese_from_the_url():
    at = open_page("diagnosis", run="root/broken_verifier", lang="zh")
    text = page_text(at)
    assert at.title[0].value == "诊断"
    assert "**优先检查**" in text and "证据：" in text
    assert "整个训练的 reward 恒为 0" in text  # the rule's title, with its number
    assert zh.CHECKS["verifier"][1] in text  # a check's "how", as the catalog writes it
    assert re.search(r"\*\*结论：(不学习|不稳定|健康|还无法判断)\*\*：", text), text[:300]
    assert "Check first" not in text and "symptom:" not in text
    assert at.radio(key="grposcope_lang_switch").value == "zh"
    assert url_lang(at) == "zh"


def test_english_by_default_and_the_switch_turns_chinese():
    at = open_page("diagnosis", run="root/broken_verifier")
    text = page_text(at)
    assert at.title[0].value == "Diagnosis" and "**Check first**" in text
    assert not CJK.search(text)
    assert url_lang(at) is None  # no choice made: the URL stays as it was
    at.radio(key="grposcope_lang_switch").set_value("zh").run()
    assert not at.exception
    assert at.title[0].value == "诊断" and "**优先检查**" in page_text(at)
    assert url_lang(at) == "zh"


def test_the_choice_follows_to_other_pages_and_back_to_english():
    at = open_page("diagnosis", run="root/broken_verifier", lang="zh")
    at.switch_page("views/config.py").run()
    assert not at.exception
    assert url_lang(at) == "zh"
    assert at.subheader[1].value == "五个问题（笔记第 6 节）"
    questions = " ".join(str(v) for df in at.table for v in df.value.get("问题", []))
    assert zh.QUESTIONS[1] in questions
    at.radio(key="grposcope_lang_switch").set_value("en").run()
    assert url_lang(at) == "en"
    at.switch_page("views/diagnosis.py").run()
    assert at.title[0].value == "Diagnosis" and url_lang(at) == "en"


def test_grpo_dash_lang_sets_the_default(monkeypatch):
    import dashboard.cli as dash_cli

    assert (dash_cli.LANGS, dash_cli.LANG_ENV) == (i18n.LANGS, i18n.LOCALE_VARS[0])
    env = dash_cli.environment(dash_cli.parse_args(["--lang", "zh"]))
    assert env["GRPOSCOPE_LANG"] == "zh"
    monkeypatch.setenv("GRPOSCOPE_LANG", "zh")  # what grpo-dash --lang zh hands the app
    at = open_page("diagnosis", run="root/broken_verifier")
    assert at.title[0].value == "诊断" and url_lang(at) is None  # a default, not a choice: the URL stays


def test_runs_table_in_chinese_has_no_none_cell_and_translated_placeholders():
    """An empty error cell is empty (the grid drew a null as the word "None" on a Chinese page), and the pickers'
    placeholder is Chinese (Streamlit's own was "Choose options")."""
    at = open_page("runs", lang="zh")
    table = at.dataframe[0].value
    assert table["error"].map(lambda v: isinstance(v, str)).all(), table["error"].tolist()
    assert "" in set(table["error"]) and "None" not in set(table["error"])  # healthy and broken_verifier: no error
    assert [m.placeholder for m in at.multiselect] == ["请选择"] * len(at.multiselect) and len(at.multiselect) == 3
