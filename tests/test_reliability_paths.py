"""Nothing read from outside the roots, whatever the URL or the folder holds: one test per path form (`..`,
absolute, encoded, too long, a symlinked folder, a symlinked file inside a run), discovery that never follows a
link out, and text that Plotly would render as HTML."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from collectors import RunWriter
from collectors.discovery import discover_runs
from dashboard import charts, paths

OUTSIDE = "outside"


@pytest.fixture
def layout(tmp_path):
    """roots runs/ and more/, a run in each, and a run outside both (`outside/secret`)."""
    for folder in ("runs/r1", "more/r2", f"{OUTSIDE}/secret"):
        with RunWriter(tmp_path / folder, name=folder.replace("/", "-")) as w:
            w.log_step(0, {"reward/mean": 0.5})
    return paths.make_roots([tmp_path / "runs", tmp_path / "more"]), tmp_path


@pytest.mark.parametrize("key, says", [
    ("runs/../outside/secret", "'..'"),
    ("runs/r1/../../outside/secret", "'..'"),
    ("/" + OUTSIDE + "/secret", "absolute"),
    ("runs/%2e%2e/outside/secret", "not found"),  # a URL decoded once is a literal name, not '..'
    ("runs/..%2foutside", "not found"),
    ("runs/\x00", "empty"),
    ("runs/" + "x" * 300, "refused: longer than a path can be"),
    ("runs/" + "/".join(["deep"] * 400), "refused: longer than a path can be"),
])
def test_each_path_form_from_a_url_is_refused_with_a_message(layout, key, says):
    roots, _ = layout
    with pytest.raises(paths.PathRefused, match=says.replace("(", r"\(")):
        paths.resolve_run(roots, key)


def test_a_symlinked_folder_inside_a_root_pointing_out_is_refused(layout):
    roots, tmp = layout
    (tmp / "runs" / "link").symlink_to(tmp / OUTSIDE / "secret")
    with pytest.raises(paths.PathRefused, match="leads outside its root"):
        paths.resolve_run(roots, "runs/link")


@pytest.mark.parametrize("inside", ["run.json", "metrics", "metrics/part-00000009.parquet"])
def test_a_run_holding_a_link_to_a_file_outside_the_roots_is_refused(layout, inside):
    roots, tmp = layout
    target = tmp / "runs" / "r1" / inside
    source = tmp / OUTSIDE / "secret" / ("metrics" if inside == "metrics" else "run.json")
    if target.is_dir():
        shutil.rmtree(target)
    target.unlink(missing_ok=True)
    target.symlink_to(source)
    with pytest.raises(paths.PathRefused, match="is a link to a file outside the roots"):
        paths.resolve_run(roots, "runs/r1")


def test_a_link_into_another_root_is_allowed(layout):
    roots, tmp = layout
    (tmp / "runs" / "r1" / "notes.txt").symlink_to(tmp / "more" / "r2" / "run.json")
    assert paths.resolve_run(roots, "runs/r1") == (tmp / "runs" / "r1").resolve()


def test_discovery_never_follows_a_link_out_of_its_root(layout):
    _, tmp = layout
    (tmp / "runs" / "to_outside").symlink_to(tmp / OUTSIDE)
    (tmp / "runs" / "to_secret").symlink_to(tmp / OUTSIDE / "secret")
    (tmp / "runs" / "to_etc").symlink_to("/etc")
    found = discover_runs(tmp / "runs")
    assert [Path(r.path).name for r in found] == ["r1"]


@pytest.mark.parametrize("name", ['<a href="https://example.com">x</a>', "<b>bold</b>", "%{y} & <i>", "<img src=x>"])
def test_run_and_metric_names_reach_plotly_as_text(name):
    assert "<" not in charts.plot_text(name) and "%{" not in charts.plot_text(name)
    frame = {name: __import__("pandas").DataFrame({"step": [0, 1], "reward/mean": [0.1, 0.2]})}
    fig = charts.compare_figure(frame)
    for trace in fig.data:
        assert "<a" not in (trace.name or "") and "<b>" not in (trace.name or "")
    fig = charts.evidence_figure(frame[name].rename(columns={"reward/mean": name}), name)
    assert all("<" not in (t.name or "") for t in fig.data)
