"""Headless tests of every dashboard page (streamlit.testing.v1.AppTest) on small real runs.

AppTest runs the app in this process, so GRPOSCOPE_ROOTS is set with monkeypatch; st.cache_data and
st.cache_resource are shared between AppTest instances, so they are cleared around every test.
"""

from __future__ import annotations

import base64
import json
import re
import time
from pathlib import Path
from urllib.parse import parse_qsl

import numpy as np
import pytest

# pytest puts this folder on sys.path (tests/ is not a package), so the fixture module imports directly.
from helpers.dash_fixtures import RUN_NAMES, UNSAFE_TEXT, make_root, write_healthy
from helpers.paths import REPO
from streamlit.testing.v1 import AppTest

from collectors import RunWriter
from dashboard import data, samples_view
from dashboard.paths import ROOTS_ENV
from dashboard.text import escape_md

APP = str(REPO / "dashboard" / "app.py")
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
    # the verdict: 12 steps are too few to judge (an OOM leaves the metrics clean; the status says "failed")
    assert health["crashed"] == "❔ can't judge yet"
    assert set(table["key"]) == {f"root/{n}" for n in RUN_NAMES}


def test_runs_page_name_filter():
    at = open_page(None)
    at.text_input[0].input("broken").run()
    assert not at.exception
    assert list(at.dataframe[0].value["name"]) == ["broken_verifier"]


LAST_STEP = {"healthy": 39, "broken_verifier": 39, "crashed": 11}  # dash_fixtures: 40, 40 and 12 steps from 0


def run_header(at: AppTest, key: str) -> str:
    """The page's own header of the run (its subheader and caption line), never the picker, whose value is the key
    asked for whatever the page then shows: the caption "KEY · source ... · last step N · updated ..."."""
    name = key.rsplit("/", 1)[-1]
    assert escape_md(name) in [s.value for s in at.subheader], [s.value for s in at.subheader]
    lines = [c.value for c in at.caption if c.value.startswith(escape_md(key) + " · source ")]
    assert len(lines) == 1, [c.value for c in at.caption]
    return lines[0]


@pytest.mark.parametrize("page", ["checklist", "diagnosis", "samples", "config", "live"])
@pytest.mark.parametrize("run", RUN_NAMES)
def test_single_run_pages_render(page, run):
    at = open_page(page, [f"root/{run}"])
    assert f" · last step {LAST_STEP[run]} · " in run_header(at, f"root/{run}")
    alerts = [a.value for kind in ("success", "info", "warning", "error") for a in getattr(at, kind)]
    if page == "checklist":
        assert at.get("plotly_chart"), "checklist draws its charts"
    if page == "diagnosis":  # the verdict comes first, whatever it says
        assert any(a.startswith("**Verdict: ") for a in alerts), alerts
    if page == "samples":
        captions = [c.value for c in at.caption]
        assert (f"8 response(s) in 2 group(s) at step {LAST_STEP[run]}" in captions if run != "crashed"
                else any("has no samples" in a for a in alerts)), (captions, alerts)
    if page == "config":
        assert "The five questions" in [s.value for s in at.subheader]
    if page == "live":
        assert {m.label: m.value for m in at.metric}["last step"] == str(LAST_STEP[run])


def test_diagnosis_page_shows_findings_of_broken_verifier():
    """Every reward 0, every group all-fail (helpers.dash_fixtures): the constant reward and the tied groups are
    critical; the flat reward is the tied groups' consequence (dashboard/diagnosis/consequences.py) and the
    sparse pass rate a warning, both after every critical one; the verdict comes first and names the verifier's
    finding."""
    at = open_page("diagnosis", ["root/broken_verifier"])
    assert at.error[0].value == "**Verdict: not learning**: " + escape_md("Reward is constant (0) over the whole run")
    heads = [m.value for m in at.markdown if m.value.startswith("### ")]  # titles escaped: they render literally
    assert heads == ["### 🔴 " + escape_md("Reward is constant (0) over the whole run"),
                     "### 🔴 " + escape_md("Zero-variance groups dominate (mostly all-fail)"),
                     "### 🟠 " + escape_md("Reward does not move (stays near 0)"),
                     "### 🟠 " + escape_md("Pass rate near 0: the task looks too hard, or the verifier rejects "
                                          "right answers")]
    shown = markdown_texts(at)
    assert "1. **the verifier**: " + escape_md("read responses with reward 0: ") in shown
    assert "Evidence: " + escape_md("only 1 logged step(s) before the groups tied at step 1: mostly a consequence; "
                                    "check the tied groups first") in shown
    assert [c.value.split(" · ")[:2] for c in at.caption[1:]] == [
        ["critical", escape_md("reward_constant")], ["critical", escape_md("zero_variance_groups")],
        ["warning", escape_md("reward_flat")], ["warning", escape_md("sparse_reward")]]


def test_diagnosis_page_healthy_run_says_no_findings():
    at = open_page("diagnosis", ["root/healthy"])
    assert any("No findings" in s.value for s in at.success)
    assert at.success[0].value.startswith("**Verdict: healthy**: the reward rises")  # the verdict comes first


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
    # every response of the step: 2 groups of 4, all with reward 0, one line each (short answers)
    lines = [ln for c in codes for ln in c.splitlines() if UNSAFE_TEXT in ln]
    assert len(lines) == 8 and all(re.match(r"#\d +0 ", ln) for ln in lines)


def test_samples_page_run_without_samples():
    at = open_page("samples", ["root/crashed"])
    assert any("no samples" in i.value for i in at.info)


def test_config_page_answers_questions():
    at = open_page("config", ["root/healthy"])
    questions, flat = at.table[0].value, at.dataframe[0].value
    assert len(questions) == 5  # a table that wraps its text: a data grid cut the answers mid-sentence
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
    assert "refused" in errors and escape_md(bad) in errors  # escaped: a key is shown, never rendered
    assert "passwd" not in "".join(c.value for c in at.code)


def test_diagnosis_links_open_their_page_already_filtered():
    """Every 'open ...' link of a finding names a page and its parameters; following one works."""
    at = open_page("diagnosis", ["root/broken_verifier"])
    links = {(pl.proto.page, pl.proto.query_string) for pl in at.get("page_link")}
    assert "open samples: filter zero_reward" in {pl.proto.label for pl in at.get("page_link")}
    assert links and all("run=root%2Fbroken_verifier" in q for _, q in links)
    for page, query in sorted(links):
        params = dict(parse_qsl(query))
        run = params.pop("run")
        target = open_page(page, [run], **params)
        if page == "samples" and "filter" in params:
            flt = target.selectbox[2].value  # run, step, filter
            assert flt == samples_view.filter_key(params["filter"]), (params, flt)
        if page == "checklist" and "metric" in params:
            assert any("Focused on" in m.value for m in target.markdown)


@pytest.mark.parametrize("flt", [f.key for f in samples_view.FILTERS])
def test_samples_page_every_filter(flt):
    at = open_page("samples", ["root/healthy"], filter=flt)
    assert at.selectbox[2].value == flt
    caption = next(c.value for c in at.caption if "response(s)" in c.value)
    n = int(caption.split()[0])
    assert n <= 8  # one logged step: 2 groups of 4
    if flt == "truncated":
        assert n == 2  # sample 3 of each group is truncated in the fixture


def test_samples_page_step_param_picks_nearest_step():
    at = open_page("samples", ["root/broken_verifier"], step="3")
    assert at.selectbox[1].value == 0  # logged steps are 0 and 39; 3 is nearest 0
    at = open_page("samples", ["root/broken_verifier"], step="not-a-number")
    assert at.selectbox[1].value == 39


def test_live_page_pause_and_interval(tmp_path, monkeypatch):
    monkeypatch.setenv(ROOTS_ENV, str(tmp_path))
    with RunWriter(tmp_path / "running", handle_signals=False, flush_every=1) as w:
        w.log_step(0, {"reward/mean": 0.5})
        at = open_page("live", [f"{tmp_path.name}/running"])
        assert at.metric[1].value == "0"
        at.toggle[0].set_value(True).run()
        assert not at.exception
        at.select_slider[0].set_value(10).run()
        assert not at.exception and at.metric[1].value == "0"


def test_live_page_of_a_finished_run_has_no_refresh():
    """Its end is recorded: nothing to refresh, so no pause or interval, and the page says why (issue 39)."""
    at = open_page("live", ["root/healthy"])
    assert at.metric[1].value == "39" and not at.toggle and not at.select_slider
    assert "not refreshing: this run has ended (finished)" in [c.value for c in at.caption]


def test_live_page_picks_up_new_steps_on_rerun(tmp_path, monkeypatch):
    """AppTest never fires run_every ticks; a rerun runs the same fragment body, reading only new parts."""
    monkeypatch.setenv(ROOTS_ENV, str(tmp_path))
    w = RunWriter(tmp_path / "growing", handle_signals=False, flush_every=1)
    try:
        for i in range(3):
            w.log_step(i, {"reward/mean": 0.25 * i})
        at = open_page("live", [f"{tmp_path.name}/growing"])
        assert [m.value for m in at.metric][:2] == ["🟢 running", "2"]
        for i in range(3, 6):
            w.log_step(i, {"reward/mean": 0.1})
        at.run()
        assert not at.exception
        assert at.metric[1].value == "5" and at.metric[3].value == "0.1"
        assert at.metric[1].proto.delta == "3"  # rows new since this session's last look
    finally:
        w.close()


def test_url_run_that_does_not_exist():
    at = open_page("checklist", ["root/nope"])
    assert any("not found" in e.value and "root/nope" in e.value for e in at.error)


def test_symlink_out_of_root_is_refused(root, tmp_path):
    outside = tmp_path / "outside"
    write_healthy(outside)
    link = root / "sneaky"
    link.symlink_to(outside, target_is_directory=True)
    try:
        at = open_page("config", ["root/sneaky"])
        assert any("leads outside its root" in e.value for e in at.error)
        # listed as one line saying the link was not followed, nothing of it read (docs/reliability.md)
        table = open_page(None).dataframe[0].value.set_index("name")
        assert table.loc["sneaky", "source"] == "unknown" and np.isnan(table.loc["sneaky", "last_step"])
        assert table.loc["sneaky", "error"] == "a link that leads outside the roots: not opened"
        assert table.loc["sneaky", "health"].startswith("🚫")
    finally:
        link.unlink()


def test_compare_drops_a_refused_run_and_says_so():
    at = open_page("compare", ["root/healthy", "../etc", "root/crashed"])
    assert any("refused" in e.value for e in at.error)
    assert at.get("plotly_chart")  # the two good runs are still compared


def test_url_selection_survives_page_change():
    at = open_page("config", ["root/crashed"])
    at.switch_page("views/checklist.py").run()
    assert not at.exception
    assert at.selectbox[0].value == "root/crashed"


# -- bad and odd runs: shown with a reason, never a crash ---------------------------------------


@pytest.fixture
def odd_root(tmp_path, monkeypatch) -> Path:
    root = tmp_path / "odd"
    write_healthy(root / "healthy")
    (root / "badjson").mkdir()
    (root / "badjson" / "run.json").write_text("{not json")
    w = RunWriter(root / "badpart", handle_signals=False)
    w.log_step(0, {"reward/mean": 1.0})
    w.close()
    (root / "badpart" / "metrics" / "part-00000005.parquet").write_bytes(b"not parquet")
    RunWriter(root / "empty", handle_signals=False).close()
    stale = root / "stale"
    w = RunWriter(stale, handle_signals=False)
    w.log_step(0, {"reward/mean": 1.0})
    w.flush()
    w._stop.set()  # the writer "dies": no more heartbeats, no closing status
    w._thread.join()
    meta = json.loads((stale / "run.json").read_text())
    meta["heartbeat"] = time.time() - 3600
    (stale / "run.json").write_text(json.dumps(meta))
    w._closed = True  # keep its atexit hook from marking the run finished
    monkeypatch.setenv(ROOTS_ENV, str(root))
    return root


def test_runs_page_with_bad_runs(odd_root):
    at = open_page(None)
    table = at.dataframe[0].value
    status = dict(zip(table["name"], table["status"]))
    assert status["stale"] == "stale" and status["badjson"] == "unknown" and status["empty"] == "finished"
    errors = dict(zip(table["name"], table["error"]))
    assert "run.json" in errors["badjson"] and "not valid JSON" in errors["badjson"]


@pytest.mark.parametrize("page", ["checklist", "diagnosis", "samples", "config", "live"])
@pytest.mark.parametrize("run", ["badjson", "badpart", "empty", "stale"])
def test_pages_on_bad_runs(odd_root, page, run):
    at = open_page(page, [f"odd/{run}"])
    shown = texts(at)
    infos = [i.value for i in at.info]
    if run == "badjson":
        assert "run.json: not valid JSON" in shown
    if run == "badpart":
        assert "part-00000005.parquet" in shown  # the problem names the file
    if run in ("empty", "stale"):  # the page is on that run, and says what it lacks
        header = run_header(at, f"odd/{run}")
        assert (" · last step none · " if run == "empty" else " stale · last step 0 · ") in header, header
        if page == "diagnosis":
            assert any(i.startswith("**Verdict: can't judge yet**") for i in infos), infos
        if page == "samples":
            assert any("has no samples" in i for i in infos), infos
        if page == "config":
            assert any("has no config" in i for i in infos), infos
    if run == "stale" and page == "live":
        assert any("stale, not running" in w.value for w in at.warning)
        # no end recorded: no refresh, looked at again now and then in case its writer comes back (issue 39)
        assert not at.toggle and "not refreshing: last written 60 min ago; looked at again every 30 s" in [
            c.value for c in at.caption]
    if run == "stale" and page == "checklist":
        assert at.get("plotly_chart"), "the one logged step is drawn"
    if run == "empty" and page == "checklist":
        assert any("no logged steps" in i for i in infos)
    if run == "empty" and page == "live":
        assert {m.label: m.value for m in at.metric}["last step"] == "none"


def test_empty_root(tmp_path, monkeypatch):
    monkeypatch.setenv(ROOTS_ENV, str(tmp_path / "nothing-here"))
    at = open_page(None)
    assert any("No runs found" in i.value for i in at.info)
    at = open_page("checklist")
    assert any("No runs found" in i.value for i in at.info)


# -- the bundled scenarios, once sample_runs/ exists --------------------------------------------

MANIFEST = Path(APP).parents[1] / "sample_runs" / "manifest.json"


@pytest.mark.skipif(not MANIFEST.exists(), reason="sample_runs/manifest.json not written yet")
def test_sample_runs_pages(monkeypatch):
    from collectors import open_run
    from dashboard.diagnosis import diagnose

    monkeypatch.setenv(ROOTS_ENV, str(MANIFEST.parent))
    runs = json.loads(MANIFEST.read_text())["runs"]
    table = open_page(None).dataframe[0].value
    assert {f"sample_runs/{r['path']}" for r in runs.values()} <= set(table["key"])
    for name, r in runs.items():
        key = f"sample_runs/{r['path']}"
        at = open_page("diagnosis", [key])
        titles = {f.rule_id: f.title for f in diagnose(open_run(MANIFEST.parent / r["path"])).findings}
        shown = markdown_texts(at)
        for rule in r["expected_rules"]:  # from the manifest: a rule that stops firing fails here, not skipped
            assert rule in titles, (name, rule, "expected by the manifest, not found by the diagnosis")
            assert escape_md(titles[rule]) in shown, (name, rule, titles[rule])
        if not r["expected_rules"]:  # the healthy run: no critical or warning finding on the page
            assert "### 🔴" not in shown and "### 🟠" not in shown, name
    if "broken_verifier" in runs:
        at = open_page("samples", [f"sample_runs/{runs['broken_verifier']['path']}"], filter="zero_reward")
        assert at.code and any("reward 0 " in t.value for t in at.text)


def test_samples_page_minimal_and_null_columns(tmp_path, monkeypatch):
    """Only the required sample columns, and texts / pass flags that are null: shown, not a crash."""
    monkeypatch.setenv(ROOTS_ENV, str(tmp_path))
    w = RunWriter(tmp_path / "minimal", handle_signals=False)
    w.log_step(0, {"reward/mean": 0.5})
    w.log_samples([{"step": 0, "group": 0, "sample": i, "reward": float(i)} for i in range(2)])
    w.log_step(1, {"reward/mean": 0.5})
    w.log_samples([{"step": 1, "group": 0, "sample": 0, "reward": 1.0, "passed": True, "completion": "ok"},
                   {"step": 1, "group": 0, "sample": 1, "reward": 0.0, "passed": None, "completion": None}])
    w.close()
    key = f"{tmp_path.name}/minimal"
    for step in ("0", "1"):
        at = open_page("samples", [key], step=step)
        listing = next(c.value for c in at.code if "│" in c.value)  # short answers: one line a response
        lines = listing.splitlines()[1:]
        assert len(lines) == 2 and "(no text logged)" in listing
        if step == "1":  # an unknown pass flag and advantage show as '?'
            assert re.search(r"#1 +0 +\? +\? +\? +│ \(no text logged\)", lines[1]), lines


def chart_spec(at: AppTest, i: int = 0) -> dict:
    """AppTest sees a Plotly chart only as the JSON spec sent to the browser."""
    return json.loads(at.get("plotly_chart")[i].proto.spec)


def trace_values(arr) -> list:
    """A trace's x or y: a plain list, or plotly's typed-array form {'dtype': 'f8', 'bdata': base64}."""
    if isinstance(arr, dict):
        return np.frombuffer(base64.b64decode(arr["bdata"]), dtype=np.dtype(arr["dtype"])).tolist()
    return list(arr)


def rects(spec: dict) -> list[dict]:
    return [sh for sh in spec["layout"].get("shapes", []) if sh["type"] == "rect"]


def test_checklist_smoothing_keeps_raw_series_and_findings_are_shaded():
    at = open_page("checklist", ["root/broken_verifier"])
    spec = chart_spec(at)
    names = [t.get("name") for t in spec["data"]]
    assert "reward mean" in names and not any("EMA" in str(n) for n in names)
    assert rects(spec), "findings with a step range are shaded"
    # each shaded finding is named in the legend of the chart it shades (a label on the shading overlapped the
    # next one where two ranges start together)
    named = {(t.get("legend"), t["name"].split(" · ")[-1].split(" (")[0]) for t in spec["data"]
             if " · reward_constant (" in t.get("name", "") or " · reward_flat (" in t.get("name", "")}
    assert {("legend2", "reward_constant"), ("legend2", "reward_flat")} <= named
    assert any(sh["type"] == "line" and sh["y0"] == 1 for sh in spec["layout"]["shapes"])  # ratio reference at 1
    at.slider[0].set_value(0.5).run()
    names = [t.get("name") for t in chart_spec(at)["data"]]
    assert "reward mean" in names and "reward mean (EMA 0.5)" in names
    at.toggle[0].set_value(False).run()
    assert not rects(chart_spec(at))


def test_checklist_wall_time_axis():
    at = open_page("checklist", ["root/healthy"])
    at.radio[0].set_value("wall_time").run()
    assert not at.exception
    xs = next(t["x"] for t in chart_spec(at)["data"] if t.get("name") == "reward mean")
    assert len(xs) == 40 and str(xs[0]).startswith("20")  # ISO dates, one per step


def test_runs_page_status_and_source_filters():
    at = open_page(None)
    at.multiselect[0].set_value(["failed"]).run()
    assert list(at.dataframe[0].value["name"]) == ["crashed"]
    at.multiselect[0].set_value([]).run()
    at.multiselect[1].set_value(["grpo_core"]).run()
    assert len(at.dataframe[0].value) == len(RUN_NAMES)


def test_compare_page_config_diff(tmp_path, monkeypatch):
    monkeypatch.setenv(ROOTS_ENV, str(tmp_path))
    for name, kl in (("a", 0.0), ("b", 0.04)):
        w = RunWriter(tmp_path / name, config={"algo.kl_coef": kl, "algo.group_size": 8}, handle_signals=False)
        w.log_step(0, {"reward/mean": 0.1})
        w.close()
    at = open_page("compare", [f"{tmp_path.name}/a", f"{tmp_path.name}/b"])
    diff = at.dataframe[0].value
    assert len(diff) == 1 and "algo.kl_coef" in diff.to_string()


def test_imported_tensorboard_run_on_every_page(tmp_path, monkeypatch):
    """A foreign run (TensorBoard event file with TRL tag names) opens on every page through its reader."""
    import torch.utils.tensorboard as tb
    monkeypatch.setenv(ROOTS_ENV, str(tmp_path))
    for name in ("tb_run", "tb_run2"):
        w = tb.SummaryWriter(str(tmp_path / name))
        for i in range(20):
            w.add_scalar("train/reward", 0.05 * i, i)
        w.close()
    table = open_page(None).dataframe[0].value
    row = table[table["name"] == "tb_run"].iloc[0]
    assert (row["source"], row["last_step"]) == ("tensorboard", 19)
    key = f"{tmp_path.name}/tb_run"
    for page in ("checklist", "diagnosis", "samples", "config", "live", "compare"):
        at = open_page(page, [key, key + "2"] if page == "compare" else [key])
        shown = texts(at)
        if page in ("checklist", "live"):
            spec = chart_spec(at)
            ys = next(t["y"] for t in spec["data"] if t.get("name") == "reward mean")
            assert trace_values(ys) == pytest.approx([0.05 * i for i in range(20)])
            # only the reward chart has data: the other seven are named, not drawn empty
            assert [a["text"] for a in spec["layout"]["annotations"]] == ["Raw reward: mean"]  # it logs no std and no eval
            assert escape_md("Not logged by this tensorboard run, so not drawn: zero-variance groups, pass rate, "
                             "completion length, entropy, KL to the reference, clip fraction, first-step ratio.") in shown
        if page == "compare":
            assert escape_md("None of these runs logs: zero-variance groups, pass rate") in shown
        if page == "samples":
            assert escape_md("This tensorboard run has no samples (responses): TensorBoard event files hold") in shown
            assert not at.selectbox or all(b.label != "Step" for b in at.selectbox)
        if page == "config":
            assert escape_md("This tensorboard run has no config: only runs logged by transformers' TensorBoardCallback") in shown
            assert not at.dataframe  # no table of five "unknown" answers


def test_diagnosis_of_a_run_without_samples_says_so_instead_of_linking_an_empty_page(tmp_path, monkeypatch):
    import torch.utils.tensorboard as tb
    monkeypatch.setenv(ROOTS_ENV, str(tmp_path))
    w = tb.SummaryWriter(str(tmp_path / "flat"))
    for i in range(40):
        w.add_scalar("train/reward", 0.0, i)  # a flat zero reward: the checks say "read the samples"
    w.close()
    at = open_page("diagnosis", [f"{tmp_path.name}/flat"])
    assert escape_md("reward_constant") in texts(at)
    links = [str(e.proto.label) for e in at.get("page_link")]
    assert links and not [label for label in links if label.startswith("open samples")]
    assert escape_md("This tensorboard run has no samples (responses): TensorBoard event files hold") in texts(at)


def test_a_foreign_run_is_opened_once_for_the_table_and_the_pages(tmp_path, monkeypatch):
    """A foreign run has no summary file: the runs table reads it through the run the pages keep open."""
    import torch.utils.tensorboard as tb

    from collectors.sources import SOURCES
    monkeypatch.setenv(ROOTS_ENV, str(tmp_path))
    w = tb.SummaryWriter(str(tmp_path / "tb_run"))
    for i in range(5):
        w.add_scalar("train/reward", 0.1 * i, i)
    w.close()
    src, opens = SOURCES["tensorboard"], []
    monkeypatch.setitem(SOURCES, "tensorboard", src.__class__(
        src.name, src.detect, lambda t: opens.append(t) or src.open(t), src.info, src.priority, src.hints))
    table = open_page(None).dataframe[0].value
    assert list(table["last_step"]) == [4]
    open_page("checklist", [f"{tmp_path.name}/tb_run"])
    assert opens == [str(tmp_path / "tb_run")]


def test_runs_page_mixes_our_runs_and_foreign_ones_without_a_heartbeat(tmp_path, monkeypatch):
    """A foreign run has no heartbeat: its last update is its newest file's mtime, and the table, whose time
    column then holds a mix of numbers, renders (it once raised on the NaN)."""
    import os

    import torch.utils.tensorboard as tb
    monkeypatch.setenv(ROOTS_ENV, str(tmp_path))
    write_healthy(tmp_path / "ours")
    w = tb.SummaryWriter(str(tmp_path / "tb_run"))
    w.add_scalar("train/reward", 0.5, 1)
    w.close()
    (event,) = list((tmp_path / "tb_run").iterdir())
    os.utime(event, (1_700_000_000, 1_700_000_000))
    os.utime(tmp_path / "tb_run", (1_600_000_000, 1_600_000_000))
    table = open_page(None).dataframe[0].value
    row = table[table["name"] == "tb_run"].iloc[0]
    # the same "... ago" as the run's header, then the time itself
    assert re.fullmatch(r"\d+ d ago · " + time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(1_700_000_000)),
                        row["last_update"]), row["last_update"]
    assert " ago · 20" in table[table["name"] == "healthy"].iloc[0]["last_update"]
    assert "updated never" not in texts(open_page("checklist", [f"{tmp_path.name}/tb_run"]))


def test_picking_runs_puts_them_in_the_url_and_links():
    at = open_page(None)
    picker = next(m for m in at.multiselect if m.label == "Open runs")
    picker.set_value(["root/healthy", "root/crashed"]).run()
    assert not at.exception
    assert at.query_params["run"] == ["root/healthy", "root/crashed"]
    queries = {pl.proto.page: pl.proto.query_string for pl in at.get("page_link")}
    assert set(queries) == {"checklist", "diagnosis", "samples", "config", "compare", "live"}
    assert all(q == "run=root%2Fhealthy&run=root%2Fcrashed" for q in queries.values())


def test_single_run_page_without_selection_picks_the_newest():
    """No run in the URL: a single-run page opens the first run of the table (newest update) and says which."""
    at = open_page("config")
    assert at.selectbox[0].value in {f"root/{n}" for n in RUN_NAMES}
    chosen = at.selectbox[0].value
    assert at.query_params["run"] in (chosen, [chosen])  # AppTest unwraps a one-value parameter


def test_runs_page_without_pick_invites_one():
    at = open_page(None)
    assert any(i.value == "Pick a run to open it." for i in at.info)
    assert not at.get("page_link")


@pytest.mark.parametrize("page", [None, "checklist", "diagnosis", "live"])
def test_engine_failure_is_reported_not_raised(page, monkeypatch):
    """A diagnosis that raises on a run: the page says so and still draws; the badge says 'not judged'."""
    import dashboard.diagnosis as engine

    def broken(run, rules=None):
        raise ValueError("boom in the engine")

    monkeypatch.setattr(engine, "diagnose", broken)
    at = open_page(page, ["root/healthy"])
    if page is None:
        health = dict(zip(at.dataframe[0].value["name"], at.dataframe[0].value["health"]))
        assert set(health.values()) == {"not judged"}
    else:
        said = escape_md("diagnosis failed on run healthy: ValueError: boom in the engine")
        assert any(said in e.value for e in at.error)
    if page in ("checklist", "live"):
        assert at.get("plotly_chart")


# -- a stopped run: its reason once, whole; the Live picker's label follows the run --------------

GUARD_REASON = ("stopped by the guard after step 5: critical finding zero_variance_groups: "
                "Zero-variance groups dominate (mostly all-fail)")


@pytest.fixture
def guard_root(tmp_path, monkeypatch) -> Path:
    """Two runs ended by the guard: `stopped` with its reason in run.json, `unsaid` with none recorded."""
    for name, reason in (("stopped", GUARD_REASON), ("unsaid", None)):
        w = RunWriter(tmp_path / name, name=name, handle_signals=False)
        for i in range(6):
            w.log_step(i, {"reward/mean": 0.0})
        w.close("stopped", reason)
    monkeypatch.setenv(ROOTS_ENV, str(tmp_path))
    return tmp_path


@pytest.mark.parametrize("page", ["checklist", "diagnosis", "samples", "config", "live"])
def test_stop_reason_shown_once_whole_in_the_header(guard_root, page):
    at = open_page(page, [f"{guard_root.name}/stopped"])
    blocks = [c for c in at.code if GUARD_REASON in c.value]
    assert len(blocks) == 1 and blocks[0].value == GUARD_REASON
    assert blocks[0].proto.wrap_lines  # wrapped, not cut off at the column's edge
    said = [e.value for kind in ("error", "warning", "info", "markdown", "caption") for e in getattr(at, kind)]
    assert not any("stopped by the guard" in s for s in said), said  # no second copy beside the block


def test_stopped_run_without_a_recorded_reason_says_the_guard_stopped_it(guard_root):
    at = open_page("live", [f"{guard_root.name}/unsaid"])
    assert [c.value for c in at.code if "guard" in c.value] == ["stopped by the guard"]
    assert at.metric[0].value == "🛑 stopped"


def test_live_picker_label_follows_the_run_and_keeps_the_pick(tmp_path, monkeypatch):
    """AppTest reruns the whole script (in the browser the fragment asks for that rerun): the picked run's
    label goes from running to stopped, and a run the user picked stays picked across the change."""
    monkeypatch.setenv(ROOTS_ENV, str(tmp_path))
    with RunWriter(tmp_path / "done", name="done", handle_signals=False) as done:
        done.log_step(0, {"reward/mean": 0.5})
    w = RunWriter(tmp_path / "live", name="live", handle_signals=False, flush_every=1)
    key, other = f"{tmp_path.name}/live", f"{tmp_path.name}/done"
    try:
        w.log_step(0, {"reward/mean": 0.0})
        at = open_page("live", [other])
        picker = at.selectbox[0]
        assert picker.value == other and f"🟢 live · running · {key}" in picker.options
        picker.select(key).run()  # the user picks the running run
        assert not at.exception and at.selectbox[0].value == key
        assert at.query_params["run"][0] == key
    finally:
        w.close("stopped", GUARD_REASON)
    data.clear_caches()  # the runs table is cached for 2 s
    at.run()
    assert not at.exception
    picker = at.selectbox[0]
    assert picker.value == key and at.metric[0].value == "🛑 stopped"
    assert f"🛑 live · stopped · {key}" in picker.options and f"🟢 live · running · {key}" not in picker.options
    assert picker.proto.raw_value == f"🛑 live · stopped · {key}"  # sent to the browser's box as its new text


def test_runs_page_picker_relabels_a_run_that_stopped(tmp_path, monkeypatch):
    """The multi-run picker too: after a rerun its chips carry the new status, and the user's own change wins."""
    monkeypatch.setenv(ROOTS_ENV, str(tmp_path))
    w = RunWriter(tmp_path / "live", name="live", handle_signals=False, flush_every=1)
    key = f"{tmp_path.name}/live"
    try:
        w.log_step(0, {"reward/mean": 0.0})
        at = open_page(None, [key])
        assert at.multiselect(key="pick_Open runs").value == [key]
    finally:
        w.close("stopped", GUARD_REASON)
    data.clear_caches()  # the runs table is cached for 2 s
    at.run()
    picker = at.multiselect(key="pick_Open runs")
    assert not at.exception and picker.value == [key]
    assert list(picker.proto.raw_values) == [f"🛑 live · stopped · {key}"]  # the chip's new text, sent
    picker.unselect(key).run()
    assert not at.exception and at.multiselect(key="pick_Open runs").value == []
    assert any(i.value == "Pick a run to open it." for i in at.info)
