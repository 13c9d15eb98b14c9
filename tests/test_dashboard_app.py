"""Headless tests of every dashboard page (streamlit.testing.v1.AppTest) on small real runs.

AppTest runs the app in this process, so GRPOSCOPE_ROOTS is set with monkeypatch; st.cache_data and
st.cache_resource are shared between AppTest instances, so they are cleared around every test.
"""

from __future__ import annotations

from pathlib import Path

import pytest

# pytest puts this folder on sys.path (tests/ is not a package), so the fixture module imports directly.
from dash_fixtures import RUN_NAMES, UNSAFE_TEXT, make_root
from streamlit.testing.v1 import AppTest

from dashboard import data
from dashboard.paths import ROOTS_ENV
from dashboard.text import escape_md

APP = str(Path(__file__).resolve().parents[1] / "dashboard" / "app.py")
TIMEOUT = 60  # first script run imports plotly and pandas; generous so a slow CI box does not flake


@pytest.fixture(scope="module")
def root(tmp_path_factory) -> Path:
    return make_root(tmp_path_factory.mktemp("dash") / "root")


@pytest.fixture(autouse=True)
def env(root, monkeypatch):
    monkeypatch.setenv(ROOTS_ENV, str(root))
    data.clear_caches()
    yield
    data.clear_caches()


def open_page(page: str | None, runs: list[str] = (), **params) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    if runs:
        at.query_params["run"] = list(runs)
    for k, v in params.items():
        at.query_params[k] = v
    if page is not None:
        at.switch_page(f"views/{page}.py")
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    return at


def texts(at: AppTest) -> str:
    """Everything the page shows as text: markdown, captions, code, text, alerts, titles, metrics."""
    parts = []
    for kind in ("markdown", "caption", "code", "text", "error", "warning", "info", "success", "title",
                 "subheader", "header"):
        parts += [str(e.value) for e in getattr(at, kind)]
    parts += [f"{m.label} {m.value}" for m in at.metric]
    parts += [str(b.value) for b in at.selectbox]
    return "\n".join(parts)


def markdown_texts(at: AppTest) -> str:
    return "\n".join(str(e.value) for kind in ("markdown", "caption", "title", "subheader", "header")
                     for e in getattr(at, kind))


def test_runs_page_lists_every_run():
    at = open_page(None)
    assert at.title[0].value == "Runs"
    table = at.dataframe[0].value
    assert sorted(table["name"]) == sorted(RUN_NAMES)
    status = dict(zip(table["name"], table["status"]))
    assert status == {"healthy": "finished", "broken_verifier": "finished", "crashed": "failed"}
    health = dict(zip(table["name"], table["health"]))
    assert health["healthy"] == "✅ ok"
    assert "critical" in health["broken_verifier"]
    assert set(table["key"]) == {f"root/{n}" for n in RUN_NAMES}


def test_runs_page_name_filter():
    at = open_page(None)
    at.text_input[0].input("broken").run()
    assert not at.exception
    assert list(at.dataframe[0].value["name"]) == ["broken_verifier"]


@pytest.mark.parametrize("page", ["checklist", "diagnosis", "samples", "config", "live"])
@pytest.mark.parametrize("run", RUN_NAMES)
def test_single_run_pages_render(page, run):
    at = open_page(page, [f"root/{run}"])
    shown = texts(at)
    assert run in shown  # the header or the picker names the run
    if page == "checklist":
        assert at.get("plotly_chart"), "checklist draws its charts"


def test_diagnosis_page_shows_findings_of_broken_verifier():
    at = open_page("diagnosis", ["root/broken_verifier"])
    shown = markdown_texts(at)  # the Markdown source: titles are escaped, so they render literally
    assert "### 🔴 " + escape_md("Reward is constant (0) over the whole run") in shown
    assert escape_md("Zero-variance groups dominate (mostly all-fail)") in shown
    # most severe first: the warning comes after every critical finding
    heads = [m.value for m in at.markdown if m.value.startswith("### ")]
    assert heads and heads[-1].startswith("### 🟠") and all(h.startswith("### 🔴") for h in heads[:-1])


def test_diagnosis_page_healthy_run_says_no_findings():
    at = open_page("diagnosis", ["root/healthy"])
    assert any("No findings" in s.value for s in at.success)


def test_diagnosis_page_without_engine_says_so(monkeypatch):
    import dashboard.diagnosis as engine

    monkeypatch.delattr(engine, "diagnose")
    at = open_page("diagnosis", ["root/broken_verifier"])
    assert any("not available" in w.value for w in at.warning)


def test_samples_page_shows_completions_as_plain_text():
    at = open_page("samples", ["root/broken_verifier"])
    codes = [c.value for c in at.code]
    assert any(UNSAFE_TEXT in c for c in codes), codes[:3]
    assert UNSAFE_TEXT.split()[0] not in markdown_texts(at)
    assert "example.com" not in markdown_texts(at)
    # every response of the step: 2 groups of 4, all with reward 0
    assert sum(1 for t in at.text if "reward 0 " in t.value) == 8


def test_samples_page_run_without_samples():
    at = open_page("samples", ["root/crashed"])
    assert any("no samples" in i.value for i in at.info)


def test_config_page_answers_questions():
    at = open_page("config", ["root/healthy"])
    questions, flat = at.dataframe[0].value, at.dataframe[1].value
    assert len(questions) == 5
    assert dict(zip(flat["key"], flat["value"]))["algo.kl_coef"] == "0.04"


def test_crashed_run_shows_its_error():
    at = open_page("checklist", ["root/crashed"])
    assert any("CUDA out of memory" in c.value for c in at.code)


def test_compare_page_two_runs():
    at = open_page("compare", ["root/healthy", "root/broken_verifier"])
    assert at.get("plotly_chart")
    assert any("identical" in i.value for i in at.info)  # same CONFIG in both


def test_compare_page_asks_for_two():
    at = open_page("compare", ["root/healthy"])
    assert any("at least 2" in i.value for i in at.info)


@pytest.mark.parametrize("bad", ["../x", "root/../../etc", "/etc/passwd", "elsewhere/run"])
@pytest.mark.parametrize("page", [None, "checklist", "samples"])
def test_run_outside_roots_is_refused(bad, page, tmp_path):
    at = open_page(page, [bad])
    errors = " ".join(e.value for e in at.error)
    assert "refused" in errors and bad in errors
    assert "passwd" not in "".join(c.value for c in at.code)
