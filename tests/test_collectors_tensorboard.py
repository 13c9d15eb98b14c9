"""TensorBoard reader on event files written by torch's real SummaryWriter."""

from __future__ import annotations

import math

import pytest

from collectors.sources import open_run
from collectors.tensorboard import TensorBoardRun

SummaryWriter = pytest.importorskip("torch.utils.tensorboard").SummaryWriter


def _write(folder, steps, start=0):
    w = SummaryWriter(log_dir=str(folder))
    for s in range(start, start + steps):
        w.add_scalar("train/reward", 0.1 * s, s)
        w.add_scalar("train/kl", 0.01 * s, s)
        w.add_scalar("train/my_custom_thing", 7.0, s)
        if s % 5 == 0:
            w.add_scalar("eval/reward", 0.5, s)
    w.flush()
    return w


def test_maps_trl_keys_keeps_extras_and_every_point(tmp_path):
    # 12,000 points per tag: more than EventAccumulator's default 10,000 keeps
    w = _write(tmp_path, 12_000)
    w.close()
    run = open_run(tmp_path)
    assert isinstance(run, TensorBoardRun)
    m = run.metrics
    assert len(m) == 12_000
    assert m["reward/mean"].iloc[10] == pytest.approx(1.0)
    assert m["policy/kl_ref"].iloc[100] == pytest.approx(1.0)
    assert m["train/my_custom_thing"].iloc[0] == 7.0
    assert m["eval/reward_mean"].iloc[5] == 0.5 and math.isnan(m["eval/reward_mean"].iloc[4])
    assert "wall_time" in m and run.problems == []


def test_refresh_reads_only_new_events(tmp_path):
    w = _write(tmp_path, 10)
    run = open_run(tmp_path)
    assert run.last_step == 9
    for s in range(10, 15):
        w.add_scalar("train/reward", 0.1 * s, s)
    w.flush()
    assert run.refresh() == 5
    assert run.last_step == 14 and len(run.metrics) == 15
    assert run.refresh() == 0
    w.close()


def test_empty_and_corrupt_files_are_problems(tmp_path):
    w = _write(tmp_path, 20)
    w.close()
    (f,) = list(tmp_path.glob("events.out.tfevents.*"))
    data = bytearray(f.read_bytes())
    data[len(data) // 2] ^= 0xFF  # flip a byte in the middle: a CRC mismatch
    f.write_bytes(bytes(data))
    (tmp_path / "events.out.tfevents.0.empty").write_bytes(b"")
    run = TensorBoardRun(tmp_path)
    assert 0 < len(run.metrics) < 20
    messages = [str(p) for p in run.problems]
    assert any(f.name in m and "CRC" in m for m in messages), messages
    assert any("empty event file" in m for m in messages)


def test_empty_folder_is_a_problem_not_a_crash(tmp_path):
    run = TensorBoardRun(tmp_path)
    assert len(run.metrics) == 0 and "no TensorBoard event files" in str(run.problems[0])
