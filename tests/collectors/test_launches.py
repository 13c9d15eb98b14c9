"""Folders holding several launches: one run per launch, everywhere (open_run/open_runs, discovery, the
dashboard's keys, grpo-import), on event files written by torch's real SummaryWriter and wandb's offline mode."""

from __future__ import annotations

import math
import subprocess
import sys

import pytest
from helpers.paths import REPO

from collectors import RunError, discover_runs, open_run
from collectors.readers.launches import FileStart, group_launches
from collectors.sources import launches_of, open_runs


def test_grouping_splits_at_a_step_reset_and_joins_a_resume():
    starts = [FileStart("f0", "h.1", 1, 100), FileStart("f1", "h.2", 51, 150), FileStart("f2", "h.3", 1, 80),
              FileStart("f3", "h.3", 81, 200), FileStart("f4", "h.4", None)]
    launches, notes = group_launches(starts)
    assert [x.files for x in launches] == [["f0", "f1"], ["f2", "f3"]]
    assert [(x.first_step, x.last_step) for x in launches] == [(1, 150), (1, 200)]
    by_file = dict(notes)
    assert by_file["f1"].startswith("starts at step 51, within f0 (up to step 100): a restarted run")
    assert by_file["f3"].startswith("continues f2 (up to step 80) from step 81")
    assert "holds no logged step" in by_file["f4"] and set(by_file) == {"f1", "f3", "f4"}
    assert [x.resumed_at for x in launches] == [[51], [81]]  # where each joined file takes over


def _launch(folder, steps, kl_gap=None, reward=0.1, extra=None):
    """One launch as transformers' TensorBoardCallback writes it: a SummaryWriter per process, train/ tags."""
    from torch.utils.tensorboard import SummaryWriter

    w = SummaryWriter(log_dir=str(folder))
    for s in steps:
        w.add_scalar("train/reward", reward * s, s)
        if s != kl_gap:
            w.add_scalar("train/kl", 0.01 * s, s)
        if extra:
            w.add_scalar(extra, 1.0, s)
    w.close()


@pytest.fixture
def sweep(tmp_path):
    logdir = tmp_path / "logs"
    _launch(logdir, range(1, 21))  # A: steps 1-20
    _launch(logdir, range(15, 31), reward=0.2)  # A resumed from a checkpoint at 14
    _launch(logdir, range(1, 11), kl_gap=5, reward=0.5, extra="train/only_b")  # B: starts over
    return logdir


def _by_counter(names):
    """Event file names in creation order: the writer's counter, the name's last field, as a number."""
    return sorted(names, key=lambda n: int(n.rsplit(".", 1)[1]))


def test_a_sweep_folder_opens_as_one_run_per_launch(sweep):
    files = _by_counter(p.name for p in sweep.iterdir())
    with pytest.raises(RunError, match=r"holds 2 separate runs"):
        open_run(sweep)
    a, b = open_runs(sweep)
    assert a.name == f"logs#{files[0][len('events.out.tfevents.'):]}" and b.name.startswith("logs#")
    assert list(a.metrics["step"]) == list(range(1, 31)) and list(b.metrics["step"]) == list(range(1, 11))
    ma, mb = a.metrics.set_index("step"), b.metrics.set_index("step")
    assert ma.loc[16, "reward/mean"] == pytest.approx(3.2) and ma.loc[10, "reward/mean"] == pytest.approx(1.0)
    # B's own gap stays a gap: nothing of A (which logged kl at step 5) fills it
    assert math.isnan(mb.loc[5, "policy/kl_ref"]) and mb.loc[6, "policy/kl_ref"] == pytest.approx(0.06)
    assert "train/only_b" not in a.metrics and mb["train/only_b"].notna().all()
    assert any("a restarted run" in p.message for p in a.problems) and b.problems == []
    assert a.resumed_at == [15] and b.resumed_at == []  # A's second file takes over at its first step, 15
    assert "one of 2 separate launches" in b.meta.notes[0]
    # a launch named on its own opens that launch; an unknown one says which there are
    assert len(open_run(f"{sweep}#{b.meta.info['launch']}").metrics) == 10
    with pytest.raises(RunError, match="no launch 'nope' here; launches: "):
        open_run(f"{sweep}#nope")


def test_writers_past_the_ninth_of_a_process_keep_their_creation_order(sweep):
    # torch numbers a process's writers .1, .2, ... in its event file names; a long-lived process (a sweep in one
    # notebook) reaches .9, .10, .11, which a string order reads as .10, .11, .9: A's resume, then B, then A
    names = _by_counter(p.name for p in sweep.iterdir())
    for counter, name in zip((9, 10, 11), names):
        (sweep / name).rename(sweep / f"{name.rsplit('.', 1)[0]}.{counter}")
    a, b = open_runs(sweep)
    assert list(a.metrics["step"]) == list(range(1, 31)) and list(b.metrics["step"]) == list(range(1, 11))
    assert a.name.endswith(".9")


def test_discovery_dashboard_keys_and_import_see_each_launch(sweep, tmp_path):
    from collectors.cli import main as import_main
    from dashboard import paths

    found = discover_runs(tmp_path)
    assert sorted(str(r.path) for r in found) == sorted(launches_of(sweep)) and len(found) == 2
    assert {r.last_step for r in found} == {30, 10}
    roots = paths.make_roots([tmp_path])
    for info in found:
        key = paths.run_key(roots, info.path)
        assert "#" in key and paths.resolve_run(roots, key) == info.path.resolve()
    assert import_main([str(sweep), "--to", str(tmp_path / "whole")]) == 2
    second = launches_of(sweep)[1]
    assert import_main([second, "--to", str(tmp_path / "b")]) == 0
    assert list(open_run(tmp_path / "b").metrics["step"]) == list(range(1, 11))


def test_a_new_launch_during_a_live_view_stays_out_of_the_open_one(tmp_path):
    logdir = tmp_path / "logs"
    _launch(logdir, range(1, 6))
    run = open_run(logdir)
    assert run.name == "logs" and run.last_step == 5
    _launch(logdir, range(1, 4), reward=9.0)  # someone starts the next launch into the same folder
    assert run.refresh() == 0 and run.metrics["reward/mean"].max() == pytest.approx(0.5)
    assert len(open_runs(logdir)) == 2


WANDB_TWO_RUNS = """
import wandb
for name, reward in (("first", 0.1), ("second", 0.7)):
    run = wandb.init(project="p", name=name, dir=DIR)
    for s in range(5):
        wandb.log({"train/reward": reward, "train/global_step": s + 1})
    run.finish()
"""


def test_a_wandb_folder_of_run_folders_opens_one_run_per_folder(tmp_path):
    env = {"WANDB_MODE": "offline", "WANDB_SILENT": "true", "HOME": str(tmp_path), "PATH": "/usr/bin:/bin"}
    proc = subprocess.run([sys.executable, "-c", f"DIR = {str(tmp_path)!r}\n" + WANDB_TWO_RUNS], env=env,
                          capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    folder = tmp_path / "wandb"
    with pytest.raises(RunError, match="holds 2 separate runs"):
        open_run(folder)
    runs = sorted(open_runs(folder), key=lambda r: r.name)  # folders named by start second, then a random id
    assert [r.name for r in runs] == ["first", "second"]
    assert [r.metrics["reward/mean"].tolist() for r in runs] == [[0.1] * 5, [0.7] * 5]
    found = discover_runs(tmp_path)
    assert sorted(r.path.parent for r in found) == [folder, folder] and {r.name for r in found} == {"first", "second"}


def test_dashboard_lists_each_launch_and_opens_one_by_its_key(sweep, tmp_path, monkeypatch):

    from streamlit.testing.v1 import AppTest

    from dashboard import data
    from dashboard.paths import ROOTS_ENV

    monkeypatch.setenv(ROOTS_ENV, str(tmp_path))
    data.clear_caches()
    app = str(REPO / "dashboard" / "app.py")
    try:
        at = AppTest.from_file(app, default_timeout=60)
        at.run()
        assert not at.exception, [e.message for e in at.exception]
        table = at.dataframe[0].value
        keys = sorted(table["key"])
        assert len(keys) == 2 and all(k.startswith(f"{tmp_path.name}/logs#") for k in keys)
        assert sorted(table["last_step"]) == [10, 30]
        at = AppTest.from_file(app, default_timeout=60)
        at.query_params["run"] = [keys[1]]
        at.switch_page("views/checklist.py")
        at.run()
        assert not at.exception, [e.message for e in at.exception]
        assert not at.error, [e.value for e in at.error]
    finally:
        data.clear_caches()
