"""Faults survived: the trainer killed at random moments, a reader racing the writer's compaction, a full
disk, a run deleted or replaced under the dashboard, special files under a root."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from helpers.paths import REPO

from collectors import RunError, RunWriter, load_run
from collectors.meta import STALE_AFTER_S
from collectors.store.load import native_info

KILLS_PER_SEED, SEEDS = 7, (11, 12, 13)


def _spawn(code: str, *args: str, **kw) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=str(REPO), OMP_NUM_THREADS="1")
    return subprocess.Popen([sys.executable, "-c", textwrap.dedent(code), *args], env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, **kw)


# -- grpo-train killed with SIGKILL at random moments -------------------------------------------------------
@pytest.mark.timeout(900)
def test_trainer_killed_at_random_moments_leaves_loadable_contiguous_runs(tmp_path):
    script = REPO / "tests" / "helpers" / "faults" / "kill_trainer.py"
    env = dict(os.environ, PYTHONPATH=str(REPO), OMP_NUM_THREADS="1")
    proc = subprocess.run([sys.executable, str(script), str(tmp_path), str(KILLS_PER_SEED), *map(str, SEEDS)],
                          env=env, capture_output=True, text=True, timeout=800, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    rounds = [json.loads(line) for line in proc.stdout.splitlines()]
    assert len(rounds) == KILLS_PER_SEED * len(SEEDS) >= 20 and all(r["killed"] for r in rounds)
    for seed in SEEDS:
        folder = tmp_path / f"seed-{seed}"
        run = load_run(folder)
        steps = run.metrics["step"].tolist()
        seen = max(r["seen"] for r in rounds if r["seed"] == seed)
        assert steps == list(range(len(steps))), f"seed {seed}: steps not contiguous"
        assert len(steps) >= seen, f"seed {seed}: a reader saw {seen} steps before a kill, {len(steps)} after"
        assert run.problems == [], run.problems
        samples = run.samples()
        assert set(samples["step"]) <= set(steps)
        # SIGKILL leaves no chance to record a status: `running`, shown stale once the heartbeat is old
        assert run.meta.status == "running"
        assert run.meta.effective_status(now=time.time() + STALE_AFTER_S + 1) == "stale"
        assert native_info(folder, stale_after_s=0.0).status == "stale"
        assert not list(folder.glob("*/.*.tmp")) or run.problems == []  # leftovers are invisible to readers


# -- a fresh reader racing the writer's compaction ----------------------------------------------------------
COMPACTING_WRITER = """
import sys
from collectors import RunWriter
from collectors.store import writer
writer.MERGE_FANOUT = 2  # a merge after nearly every flush: the race window, as often as possible
with RunWriter(sys.argv[1], flush_every=1) as w:
    for step in range(int(sys.argv[2])):
        w.log_step(step, {"reward/mean": float(step)})
        w.log_samples([dict(step=step, group=0, sample=0, reward=1.0)])
        if step == 5:
            print("ready", flush=True)
"""


@pytest.mark.timeout(300)
def test_fresh_readers_during_compaction_never_see_a_gap_or_fewer_steps(tmp_path):
    folder = tmp_path / "r"
    proc = _spawn(COMPACTING_WRITER, str(folder), "300")
    assert proc.stdout.readline().strip() == "ready", proc.stderr.read()
    best, polls = 0, 0
    while proc.poll() is None or polls < 3:
        run = load_run(folder)
        steps = run.metrics["step"].tolist()
        assert steps == list(range(len(steps))), f"poll {polls}: a gap"
        assert len(steps) >= best, f"poll {polls}: {len(steps)} steps after {best}"
        samples = run.samples()
        assert sorted(samples["step"]) == list(range(len(samples))), f"poll {polls}: a gap in the samples"
        best, polls = len(steps), polls + 1
    assert proc.returncode == 0, proc.stderr.read()
    assert len(load_run(folder).metrics) == 300


# -- a full disk ---------------------------------------------------------------------------------------------
FILLING_WRITER = """
import errno, os, sys
from collectors import RunError, RunWriter
from collectors.store import atomic
if sys.argv[2] == "inject":  # no tmpfs to fill: the 7th Parquet write meets ENOSPC, as write(2) would report it
    real, calls = atomic.pq.write_table, [0]
    def full(*a, **k):
        calls[0] += 1
        if calls[0] > 6:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real(*a, **k)
    atomic.pq.write_table = full
try:
    with RunWriter(sys.argv[1], flush_every=10_000, flush_interval_s=0.05) as w:
        for step in range(1_000_000):
            w.log_step(step, {"reward/mean": float(step)})
            w.log_samples([dict(step=step, group=0, sample=0, reward=1.0, completion=os.urandom(3000).hex())])
            if step % 5 == 4:
                w.flush()
                print("flushed", step, flush=True)
except RunError as e:
    print(f"error: {e}", file=sys.stderr)
    sys.exit(1)
"""


@pytest.fixture
def small_disk(tmp_path):
    """A 1 MiB tmpfs where mounting is allowed (root), else None."""
    mnt = tmp_path / "disk"
    mnt.mkdir()
    if os.geteuid() != 0 or subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(mnt)],
                                           capture_output=True, check=False).returncode != 0:
        yield None
        return
    try:
        yield mnt
    finally:
        subprocess.run(["umount", str(mnt)], check=False)


@pytest.mark.parametrize("how", ["tmpfs", "inject"])
def test_a_full_disk_gives_one_line_keeps_earlier_parts_and_marks_the_run(tmp_path, small_disk, how):
    if how == "tmpfs" and small_disk is None:
        pytest.skip("cannot mount a tmpfs here (not root); the injected ENOSPC case runs instead")
    folder = (small_disk if how == "tmpfs" else tmp_path) / "run"
    proc = _spawn(FILLING_WRITER, str(folder), how)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 1, err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    assert "No space left on device" in err and str(folder) in err
    flushed = [int(line.split()[1]) for line in out.splitlines()]
    assert flushed, "nothing was flushed before the disk filled"
    run = load_run(folder)
    steps = run.metrics["step"].tolist()
    assert steps == list(range(len(steps))) and len(steps) >= flushed[-1] + 1
    assert run.problems == []
    assert run.meta.status == "failed" and "No space left on device" in run.meta.error


# -- a run deleted or replaced under a reader and under the dashboard ------------------------------------------
def _write(folder: Path, steps: int, name: str) -> None:
    with RunWriter(folder, name=name, handle_signals=False) as w:
        for i in range(steps):
            w.log_step(i, {"reward/mean": float(i)})
        w.log_samples([{"step": steps - 1, "group": 0, "sample": 0, "reward": 1.0, "completion": name}])


def test_a_run_replaced_in_its_folder_is_read_again_not_mixed(tmp_path):
    import shutil

    folder = tmp_path / "r"
    _write(folder, 40, "first")
    run = load_run(folder)
    assert len(run.metrics) == 40
    shutil.rmtree(folder)
    run.refresh()  # deleted: what was read stays, nothing raises
    assert len(run.metrics) == 40
    _write(folder, 5, "second")
    run.refresh()
    assert run.metrics["step"].tolist() == list(range(5)) and run.meta.name == "second"
    assert run.samples()["completion"].tolist() == ["second"]
    assert any("another run" in p.message for p in run.problems)


def test_the_dashboard_shows_a_message_when_the_run_on_screen_is_deleted_or_replaced(tmp_path, monkeypatch):
    import shutil

    from streamlit.testing.v1 import AppTest

    from dashboard import data
    from dashboard.paths import ROOTS_ENV

    root = tmp_path / "root"
    _write(root / "a", 30, "a")
    _write(root / "b", 30, "b")
    monkeypatch.setenv(ROOTS_ENV, str(root))
    for page in ("live", "checklist", "samples", "diagnosis", "config"):
        data.clear_caches()
        at = AppTest.from_file(str(REPO / "dashboard" / "app.py"), default_timeout=60)
        at.query_params["run"] = ["root/a"]
        at.switch_page(f"views/{page}.py")
        at.run()
        assert not at.exception, (page, [e.message for e in at.exception])
        shutil.rmtree(root / "a")
        at.run()
        assert not at.exception, (page, [e.message for e in at.exception])
        assert any("not found" in e.value for e in at.error), (page, [e.value for e in at.error])
        other = AppTest.from_file(str(REPO / "dashboard" / "app.py"), default_timeout=60)
        other.query_params["run"] = ["root/b"]  # the other run of the root, in another tab, is unaffected
        other.switch_page(f"views/{page}.py")
        other.run()
        assert not other.exception and not other.error, (page, [e.value for e in other.error])
        assert any("root/b" in c.value and "last step 29" in c.value for c in other.caption), page
        _write(root / "a", 5, "a again")
        at.run()
        assert not at.exception and not at.error, (page, [e.value for e in at.error])
        shutil.rmtree(root / "a")
        _write(root / "a", 30, "a")
    data.clear_caches()


# -- special files under a root --------------------------------------------------------------------------------
@pytest.mark.timeout(120)
def test_special_files_under_a_root_are_skipped_with_a_note_never_waited_on(tmp_path):
    import socket

    from collectors import open_run
    from collectors.discovery import discover_runs

    root = tmp_path / "root"
    _write(root / "real", 3, "real")
    os.mkfifo(root / "x.log")  # a reader that opened it would wait for a writer forever
    os.mkfifo(root / "metrics.jsonl")
    (root / "verl").mkdir()
    os.mkfifo(root / "verl" / "main_ppo.log")
    (root / "wandb_run").mkdir()
    os.mkfifo(root / "wandb_run" / "run-abc.wandb")
    try:  # /dev/null's numbers: reading it would end at once, but a tape or a terminal would not
        os.mknod(root / "dev.log", stat.S_IFCHR | 0o600, os.makedev(1, 3))
        device = True
    except PermissionError:  # creating a device node needs CAP_MKNOD
        device = False
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(str(root / "agent.log"))
        found = {Path(r.path).name: r for r in discover_runs(root)}
    assert found["real"].error is None and found["real"].source == "grpo_core"
    assert "a named pipe, not a regular file: skipped" in found["x.log"].error
    assert "a named pipe" in found["metrics.jsonl"].error and "a socket" in found["agent.log"].error
    assert not device or found["dev.log"].error == "a device, not a regular file: skipped"
    for name in ("x.log", "metrics.jsonl", *(["dev.log"] if device else [])):
        with pytest.raises(RunError):
            open_run(root / name)
    if os.geteuid() != 0:  # root reads any folder; for anyone else an unreadable one is passed over
        (root / "locked").mkdir(mode=0)
        assert "real" in {Path(r.path).name for r in discover_runs(root)}


def test_a_stray_rollout_dump_does_not_turn_a_root_into_one_verl_run(tmp_path):
    from collectors.discovery import discover_runs

    root = tmp_path / "root"
    for name in ("a", "b"):
        _write(root / name, 3, name)
    (root / "data").mkdir()
    (root / "data" / "0.jsonl").write_text('{"input": "q", "output": "a", "score": 1.0, "step": 0}\n')
    names = sorted(Path(r.path).name for r in discover_runs(root))
    assert "a" in names and "b" in names and "root" not in names
