"""The trackio and MLflow store readers (collectors/readers/stores/) on stores that trackio and MLflow write
themselves in a subprocess (tests/fixtures/tracker_stores.py: the calls transformers' TrackioCallback and
MLflowCallback make for TRL's GRPOTrainer logs). Values are worked from the step s: reward 0.1*s, kl 0.001*s
(NaN at step 3 of run-a), completions/mean_length 100+s; run-a has 6 steps and an eval row at step 6, run-b 3."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import math
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from fixtures.tracker_stores import CONFIG, stores_copy
from helpers.paths import REPO

from collectors.meta import RunError
from collectors.sources import detect_source, launches_of, open_run, open_runs

BIN = Path(sys.executable).parent


@pytest.fixture(scope="module")
def stores(tmp_path_factory) -> dict[str, Path]:
    # the dev extra installs them (a missing one fails, never skips); looked up here, imported in the
    # fixture's own process
    missing = [m for m in ("trackio", "mlflow", "sqlalchemy", "alembic") if importlib.util.find_spec(m) is None]
    assert not missing, f"{', '.join(missing)} not installed: pip install -e '.[dev]'"
    return stores_copy(tmp_path_factory.mktemp("stores"))


def _by_name(runs):
    return {r.name: r for r in runs}


def _check_trl_run(run, steps: int, kl_nan: bool) -> None:
    m = run.metrics
    assert m["step"].tolist() == list(range(1, steps + 1))
    assert m["reward/mean"].tolist() == pytest.approx([0.1 * s for s in range(1, steps + 1)])
    assert m["completions/len_mean"].tolist() == [100.0 + s for s in range(1, steps + 1)]
    assert m["completions/truncated_frac"].tolist() == [0.05] * steps
    assert m["groups/zero_std_frac"].tolist() == [0.25] * steps
    assert m["optim/lr"].tolist() == [1e-6] * steps
    kl = m["policy/kl_ref"].tolist()
    assert math.isnan(kl[2]) == kl_nan
    assert kl[1] == pytest.approx(0.002)
    assert run.nan_at.get("policy/kl_ref", set()) == ({3} if kl_nan else set())
    assert not {"global_step", "train/global_step", "step_1"} & set(m.columns)


def test_trackio_folder_runs_are_launches_with_trl_columns_and_config(stores):
    folder = stores["trackio"]
    assert detect_source(folder) == "trackio"
    db = folder / "grpo-demo.db"
    assert detect_source(db) == "trackio"
    launches = launches_of(folder)
    assert len(launches) == 2 and all(t.startswith(f"{db}#") for t in launches)
    assert launches_of(db) == launches
    runs = _by_name(open_runs(folder))
    assert set(runs) == {"run-a", "run-b"}
    a, b = runs["run-a"], runs["run-b"]
    _check_trl_run(a, 6, kl_nan=True)
    _check_trl_run(b, 3, kl_nan=False)
    # the eval row at step 6 (`eval/reward` under TrackioCallback's rewrite_logs) lands on the same step
    assert a.metrics["eval/reward_mean"].tolist()[-1] == 0.5
    assert b.metrics.get("eval/reward_mean") is None
    # the trainer's keys trackio keeps under `train/`: unmapped ones stay as they are
    assert a.metrics["train/num_tokens"].tolist() == [1000.0 * s for s in range(1, 7)]
    assert a.meta.source == "trackio" and a.meta.info["trackio_project"] == "grpo-demo"
    assert {k: a.meta.config[k] for k in CONFIG} == CONFIG  # trackio's own _Username/_Created are not config
    assert not any(k.startswith("_") for k in a.meta.config)
    assert a.problems == [] and b.problems == []
    one = open_run(launches[1])
    assert one.name == "run-b" and len(one.metrics) == 3


@pytest.mark.parametrize("kind", ["mlflow.db", "mlruns"])
def test_mlflow_stores_runs_are_launches_with_params_as_config(stores, kind):
    target = stores[kind]
    assert detect_source(target) == "mlflow"
    launches = launches_of(target)
    assert len(launches) == 2  # the deleted run is left out
    runs = _by_name(open_runs(target))
    assert set(runs) == {"run-a", "run-b"}
    a, b = runs["run-a"], runs["run-b"]
    _check_trl_run(a, 6, kl_nan=True)
    _check_trl_run(b, 3, kl_nan=False)
    assert a.metrics["eval/reward_mean"].tolist()[-1] == 0.5  # MLflowCallback logs eval_reward as it is
    # MLflowCallback replaced the parentheses of this key by `_`; no map knows it, so it stays as logged
    assert a.metrics["rewards/accuracy_reward_strict_/mean"].tolist()[0] == pytest.approx(0.1)
    assert a.meta.status == "finished" and a.meta.info["mlflow_experiment"] == "grpo"
    # params are text in MLflow: read back as the values TRL passed, the list kept as its text
    expected = {**CONFIG, "report_to": "['trackio', 'mlflow']"}
    assert {k: a.meta.config[k] for k in CONFIG} == expected
    assert a.meta.start_time is not None and a.meta.end_time >= a.meta.start_time
    assert a.problems == []


def test_mlruns_experiment_and_run_folders_open_alone(stores):
    runs = launches_of(stores["mlruns"])
    run_dir = Path(runs[0])
    assert launches_of(run_dir.parent) == runs  # the experiment folder holds both runs
    assert detect_source(run_dir) == "mlflow" and launches_of(run_dir) == []
    assert open_run(run_dir).name == "run-a"


def test_folder_holding_mlflow_db_lists_its_runs_and_the_store_opens_read_only(stores, tmp_path):
    folder = tmp_path / "project"
    folder.mkdir()
    shutil.copy(stores["mlflow.db"], folder / "mlflow.db")
    before = hashlib.sha256((folder / "mlflow.db").read_bytes()).hexdigest()
    assert detect_source(folder) == "mlflow"
    runs = open_runs(folder)
    assert sorted(len(r.metrics) for r in runs) == [3, 6]
    for r in runs:
        r.refresh()
    assert hashlib.sha256((folder / "mlflow.db").read_bytes()).hexdigest() == before
    assert sorted(p.name for p in folder.iterdir()) == ["mlflow.db"]  # no journal, no -wal/-shm left


def test_a_live_trackio_run_is_read_while_a_writer_holds_the_database(stores, tmp_path):
    db = tmp_path / "grpo-demo.db"
    shutil.copy(stores["trackio"] / "grpo-demo.db", db)
    run = open_run(launches_of(db)[1])  # run-b, 3 steps
    writer = sqlite3.connect(db)
    writer.execute("BEGIN IMMEDIATE")  # a writer mid-transaction (trackio's bulk_log) holds the write lock
    # trackio's next row of run-b, as its bulk_log writes it: the row of step 3 again with the step moved on
    writer.execute("INSERT INTO metrics (timestamp, run_id, run_name, step, metrics) SELECT timestamp, run_id, "
                   "run_name, step + 1, replace(metrics, '\"train/global_step\":3', '\"train/global_step\":4') "
                   "FROM metrics WHERE run_name = 'run-b' AND step = 2")
    assert run.refresh() == 0  # the uncommitted row is not seen, and the reader does not wait on the lock
    writer.commit()
    assert run.refresh() == 1
    assert run.metrics["step"].tolist() == [1, 2, 3, 4]
    writer.close()


def test_damaged_and_foreign_databases_are_one_line_errors_naming_the_file(stores, tmp_path):
    damaged = tmp_path / "grpo-demo.db"
    data = bytearray((stores["trackio"] / "grpo-demo.db").read_bytes())
    data[100:8192] = b"\xff" * (8192 - 100)  # the header kept, the schema page overwritten
    damaged.write_bytes(bytes(data))
    assert detect_source(damaged) == "trackio"
    with pytest.raises(RunError) as e:
        open_runs(damaged)
    assert str(damaged) in str(e.value) and "\n" not in str(e.value) and "damaged" in str(e.value)

    not_sqlite = tmp_path / "mlflow.db"
    not_sqlite.write_bytes(b"this is no database at all" * 100)
    assert detect_source(not_sqlite) == "mlflow"
    with pytest.raises(RunError, match=r"mlflow\.db: not an SQLite database") as e:
        open_runs(not_sqlite)
    assert "\n" not in str(e.value)

    foreign = tmp_path / "cache.db"
    with sqlite3.connect(foreign) as c:
        c.execute("CREATE TABLE items (id INTEGER, body TEXT)")
    assert detect_source(foreign) is None
    for source, what in (("trackio", "not a trackio project"), ("mlflow", "not an MLflow tracking database")):
        with pytest.raises(RunError) as e:
            open_runs(foreign, source)
        assert str(e.value).startswith(f"{foreign}: an SQLite database, but {what} (no ")


def test_no_run_of_that_id(stores):
    db = stores["trackio"] / "grpo-demo.db"
    with pytest.raises(RunError, match="no run 'nope' in this trackio project"):
        open_run(f"{db}#nope")
    with pytest.raises(RunError, match="no run 'nope' in this MLflow database"):
        open_run(f"{stores['mlflow.db']}#nope")


def test_the_readers_import_neither_tracker():
    code = ("import sys; import collectors.readers.stores.trackio, collectors.readers.stores.mlflow_store; "
            "print(sorted(m for m in ('trackio', 'mlflow', 'sqlalchemy', 'torch', 'streamlit') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.strip() == "[]"


def test_grpo_diagnose_console_script_on_each_store(stores, tmp_path):
    exe = BIN / "grpo-diagnose"
    assert exe.is_file(), f"{exe} is not installed: make test installs it (pip install -e .)"
    targets = [str(stores[k]) for k in ("trackio", "mlflow.db", "mlruns")]
    out = subprocess.run([str(exe), *targets, "--format", "json"], cwd=tmp_path, capture_output=True,
                         text=True, timeout=300, check=False)
    assert out.returncode == 3, out.stderr  # all read; run-b's 3 steps are too few to judge (exit status 3)
    report = json.loads(out.stdout)
    for target in targets:  # each store's two runs, as launches of their own
        runs = {k: v for k, v in report.items() if k.startswith(target)}
        assert sorted(r["steps"] for r in runs.values()) == [3, 6], target
        six = next(r for r in runs.values() if r["steps"] == 6)
        # the NaN kl of step 3 is the one critical finding: the reader kept it apart from a missing value
        assert [(f["rule_id"], f["step_range"]) for f in six["findings"] if f["severity"] == "critical"] == \
            [("non_finite", [3, 3])]


def test_an_mlruns_line_still_being_written_is_read_when_it_is_whole(stores, tmp_path):
    """MLflow appends `timestamp value step\\n` to metrics/<key>: a refresh that meets half a line leaves it for
    the next one (the bytes here are MLflow's own, cut in the middle of the last line and then completed)."""
    source = next(Path(t) for t in launches_of(stores["mlruns"]) if open_run(t).name == "run-a")
    run_dir = tmp_path / source.name
    shutil.copytree(source, run_dir)
    reward = run_dir / "metrics" / "reward"
    whole = reward.read_bytes()
    last = whole.rstrip(b"\n").rfind(b"\n") + 1  # where step 6's line starts
    reward.write_bytes(whole[: last + 8])  # its timestamp only half written
    run = open_run(run_dir)
    assert run.metrics["step"].tolist() == [1, 2, 3, 4, 5, 6]  # step 6 from the other keys' files
    assert math.isnan(run.metrics["reward/mean"].iloc[-1]) and 6 not in run.nan_at.get("reward/mean", set())
    reward.write_bytes(whole)
    run.refresh()
    assert run.metrics["reward/mean"].tolist() == pytest.approx([0.1 * s for s in range(1, 7)])
    assert run.metrics["completions/len_mean"].tolist() == [101.0, 102.0, 103.0, 104.0, 105.0, 106.0]


@pytest.mark.parametrize("store", ["mlflow.db", "trackio"])
def test_a_store_at_a_root_hides_no_run_folder_beside_it(stores, tmp_path, store):
    # a user who ran MLflow (or trackio) in the folder that also holds run folders: the store is listed, and so
    # is every run below it (the store's reader claims only the sub-folders it reads: mlruns/ and mlartifacts/)
    from collectors.discovery import discover_runs

    root = tmp_path / "root"
    root.mkdir()
    if store == "mlflow.db":
        shutil.copy(stores["mlflow.db"], root / "mlflow.db")
        shutil.copytree(stores["mlruns"], root / "mlruns")
    else:
        shutil.copytree(stores["trackio"], root, dirs_exist_ok=True)
    shutil.copytree(REPO / "sample_runs" / "healthy", root / "exp" / "healthy")
    lines = discover_runs(root)
    assert "exp/healthy" in {i.path.relative_to(root).as_posix() for i in lines}, [str(i.path) for i in lines]
    stores_lines = [i for i in lines if i.source == store.split(".")[0]]
    # mlflow: 2 runs in mlflow.db and 2 in mlruns/; trackio: the project's 2 runs
    assert len(stores_lines) == (4 if store == "mlflow.db" else 2), [(str(i.path), i.source) for i in lines]
