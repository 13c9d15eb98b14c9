"""Nothing read from outside the roots, whatever the URL or the folder holds: one test per path form (`..`,
absolute, encoded, too long, a symlinked folder, a symlinked file inside a run), discovery that never follows a
link out, and text that Plotly would render as HTML.

What a root guarantees (docs/reliability.md, "What a root holds"), on the roots of tests/helpers/hostile_roots.py: a
stray log or a named pipe beside run folders never hides them; every kind of link out of a root is one line and
opens nothing (watched with inotify); the Runs table's health is the diagnosis' verdict. The same roots in a
real browser: tests/dashboard/test_roots_browser.py."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from helpers.hostile_roots import NEVER_SHOWN, STRAY_ROOTS, make_layout
from helpers.open_watch import OpenWatch, available
from helpers.paths import REPO

from collectors import RunWriter, open_run
from collectors.discovery import OUTSIDE as OUTSIDE_NOTE
from collectors.discovery import discover_runs
from dashboard import charts, data, paths, text

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
    with pytest.raises(paths.PathRefused, match="is a link that leads outside the roots"):
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
    found = {Path(r.path).name: r for r in discover_runs(tmp / "runs")}
    assert found["r1"].error is None and found["r1"].source == "grpo_core"
    # each link is a line saying it was not followed, nothing read through it
    assert {n: (r.source, r.last_step, r.error) for n, r in found.items() if n != "r1"} == {
        n: ("unknown", None, OUTSIDE_NOTE) for n in ("to_outside", "to_secret", "to_etc")}


@pytest.mark.parametrize("name", ['<a href="https://example.com">x</a>', "<b>bold</b>", "%{y} & <i>", "<img src=x>"])
def test_run_and_metric_names_reach_plotly_as_text(name):
    assert "<" not in charts.plot_text(name) and "%{" not in charts.plot_text(name)
    frame = {name: __import__("pandas").DataFrame({"step": [0, 1], "reward/mean": [0.1, 0.2]})}
    fig = charts.compare_figure(frame)
    for trace in fig.data:
        assert "<a" not in (trace.name or "") and "<b>" not in (trace.name or "")
    fig = charts.evidence_figure(frame[name].rename(columns={"reward/mean": name}), name)
    assert all("<" not in (t.name or "") for t in fig.data)


# -- what a root holds: stray files, pipes with log names, links out (tests/helpers/hostile_roots.py) --------------------
@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    return make_layout(tmp_path_factory.mktemp("hostile"))


@pytest.fixture
def dash(hostile, monkeypatch):
    """The dashboard's data layer on the hostile roots, with fresh caches."""
    monkeypatch.setenv(paths.ROOTS_ENV, os.pathsep.join(str(r) for r in hostile.roots))
    data.clear_caches()
    yield paths.make_roots(hostile.roots)
    data.clear_caches()


def _listed(hostile, roots) -> dict[str, object]:
    inside = [r.path for r in roots]
    return {paths.run_key(roots, i.path): i for r in roots for i in discover_runs(r.path, inside=inside)}


@pytest.mark.parametrize("label", STRAY_ROOTS)
def test_a_stray_log_or_pipe_beside_run_folders_never_hides_them(hostile, dash, label):
    """A folder that holds run folders is a folder of runs; a loose log beside them is one more run, a pipe
    named like a log a line saying it was skipped."""
    found = {k: i for k, i in _listed(hostile, dash).items() if k.split("/")[0] == label}
    runs = {k for k in hostile.verdicts if k.startswith(label + "/")}
    assert runs and all(found[k].source == "grpo_core" and found[k].error is None for k in runs)
    extra = set(found) - runs
    assert extra == {k for k in hostile.strays | hostile.pipes if k.split("/")[0] == label}
    for k in extra & hostile.pipes:
        assert found[k].error == "a named pipe, not a regular file: skipped"


def _openrlhf(path: Path) -> None:
    from fixtures.openrlhf_console import write_log

    write_log(path, steps=5, noise_lines=10)


LOOSE_LOGS = {  # a log of each text format, loose at a root beside run folders -> the run it makes
    "verl console": ("main_ppo.log", "".join(f"step:{i} - critic/score/mean:{0.1 * i}\n" for i in range(1, 6)), "."),
    "verl file logger": ("metrics.jsonl", "".join(json.dumps({"step": i, "data": {"critic/score/mean": 0.1 * i}})
                                                   + "\n" for i in range(1, 6)), "."),
    "key-value log": ("train.log", "".join(f"step: {i} loss: 0.2 reward: {0.1 * i} kl: 0.01\n" for i in range(5)),
                      "train.log"),
    "CSV": ("metrics.csv", "step,reward\n" + "".join(f"{i},{0.1 * i}\n" for i in range(5)), "metrics.csv"),
    "OpenRLHF console": ("train.log", _openrlhf, "train.log"),
}


@pytest.mark.parametrize("kind", sorted(LOOSE_LOGS))
def test_a_loose_log_of_any_format_is_one_more_run(tmp_path, kind):
    name, content, run = LOOSE_LOGS[kind]
    root = tmp_path / "root"
    for r in ("a", "b"):
        with RunWriter(root / r, name=r, handle_signals=False) as w:
            w.log_step(0, {"reward/mean": 0.5})
    if callable(content):
        content(root / name)
    else:
        (root / name).write_text(content)
    found = {Path(i.path).relative_to(root).as_posix(): i.source for i in discover_runs(root)}
    assert found["a"] == found["b"] == "grpo_core" and set(found) == {"a", "b", run}, found


def test_a_loose_log_does_not_hide_runs_deeper_down(tmp_path):
    root = tmp_path / "root"
    for name in ("group/a", "group/b", "c"):
        with RunWriter(root / name, name=name.replace("/", "-"), handle_signals=False) as w:
            w.log_step(0, {"reward/mean": 0.5})
    (root / "train.jsonl").write_text("".join(json.dumps({"step": i, "reward": 0.1 * i}) + "\n" for i in range(5)))
    names = sorted(Path(r.path).relative_to(root).as_posix() for r in discover_runs(root))
    assert names == ["c", "group/a", "group/b", "train.jsonl"]


def test_folders_a_reader_reads_stay_part_of_its_run(tmp_path):
    """Descending past a foreign run stops at the folders its reader reads: a TRL output folder stays one run
    (not one per checkpoint), a verl run folder keeps its rollout dumps, a wandb run folder its files/."""
    root = tmp_path / "root"
    shutil.copytree(REPO / "tests" / "fixtures" / "trl_corpus" / "healthy_g8", root / "trl_out")
    verl = root / "verl_run"
    (verl / "rollout").mkdir(parents=True)
    (verl / "main_ppo.log").write_text("".join(f"step:{i} - critic/score/mean:{0.1 * i} - actor/entropy:1.0\n"
                                              for i in range(1, 6)))
    (verl / "rollout" / "1.jsonl").write_text(json.dumps({"input": "q", "output": "a", "score": 1.0, "step": 1}) + "\n")
    found = {Path(r.path).relative_to(root).as_posix(): r.source for r in discover_runs(root)}
    assert found == {"trl_out": "trl", "verl_run": "verl"}


def test_every_link_out_of_a_root_is_one_line_and_opens_nothing(hostile, dash, tmp_path):
    if not available(tmp_path):
        pytest.skip("inotify gives no events on this filesystem")
    watch = OpenWatch(*hostile.watched())
    try:
        listed = _listed(hostile, dash)
        table = data.all_runs()
        judged = {k: data.health(k) for k in table["key"]}
        for key in hostile.verdicts:  # the runs beside the links open as usual
            open_run(paths.resolve_run(dash, key))
        refusals = []
        for key in hostile.refused:
            with pytest.raises(paths.PathRefused) as e:
                paths.resolve_run(dash, key)
            refusals.append(str(e.value))
        opened = watch.opened()
    finally:
        watch.close()
    assert opened == [], opened  # not a file of it, not even its listing
    assert set(table["key"]) == set(listed) and hostile.refused <= set(listed)
    assert all(judged[k].refused for k in hostile.refused)
    for key in hostile.refused:
        assert listed[key].last_step is None and "leads outside the roots: not opened" in listed[key].error
    said = " ".join([*refusals, *(str(v) for v in table.to_dict("list").values())])
    assert not [s for s in NEVER_SHOWN if s in said], said


def test_the_health_cell_is_the_verdict_in_both_languages(hostile, dash):
    """✅ ok only for a run judged healthy; a run the diagnosis cannot judge (2 steps) says so."""
    for key, kind in hostile.verdicts.items():
        h = data.health(key)
        assert h.verdict == kind and not h.refused, key
        en, zh = text.health_label(h), text.health_label(h, lang="zh")
        assert ("✅ ok" in en) == (kind == "healthy") and ("✅ 健康" in zh) == (kind == "healthy"), (key, en)
        if kind == "cant_judge":
            assert en.startswith("❔ can't judge yet") and zh.startswith("❔ 还无法判断")
        if kind == "not_learning":
            assert en.startswith("🔴 not learning: ") and "critical" in en and zh.startswith("🔴 不学习：")
    refused = data.health("links/passwd")
    assert text.health_label(refused).startswith("🚫") and text.health_label(refused, lang="zh").startswith("🚫")


def test_refusals_and_root_notes_read_in_chinese(hostile, dash):
    """Every refusal a URL or a root can draw, and every note discovery writes, has its Chinese text (keys,
    paths and file names carried over), so a Chinese page shows no English sentence for them."""
    from dashboard.diagnosis.i18n import path_text

    cjk = __import__("re").compile(r"[\u4e00-\u9fff]")
    said = []
    for key in [*sorted(hostile.refused), "../x", "/abs", "", "nope/x", "links/nothere", "links/" + "x" * 300]:
        with pytest.raises(paths.PathRefused) as e:
            paths.resolve_run(dash, key)
        said.append(str(e.value))
    said += [i.error for i in _listed(hostile, dash).values() if i.error]
    for english in said:
        zh = path_text(english, "zh")
        assert zh != english and cjk.search(zh) and "refused" not in zh and "outside" not in zh, english


# Sources whose `parts` is None on purpose: everything below a folder they recognise is theirs, so discovery does
# not look for other runs there. Every other reader names the sub-folders it reads (`no_parts`: none), so that a
# loose log of its format beside run folders is one more run, never the one that hides them.
READS_ALL_BELOW = {
    "grpo": "our run folder: metrics/ and samples/ are its parts, no run lies inside one",
    "wandb-online": "a wandb:// URI, never a folder",
    "mlflow": "a tracking store: its folders (mlruns/<experiment>/<run>/) hold its runs' files",
    "trackio": "a tracking store, as mlflow",
}


def test_every_reader_says_which_sub_folders_belong_to_its_run():
    from collectors.sources import SOURCES, source_names

    source_names()  # every reader registered
    undeclared = sorted(n for n, s in SOURCES.items() if s.parts is None and n not in READS_ALL_BELOW)
    assert not undeclared, f"pass parts= to register_source for {undeclared} (see collectors/sources.py Source.parts)"
