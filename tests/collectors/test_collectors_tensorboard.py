"""TensorBoard reader on event files written by torch's real SummaryWriter."""

from __future__ import annotations

import math

import pytest
from torch.utils.tensorboard import SummaryWriter

from collectors.readers.tensorboard.logdir import TensorBoardRun
from collectors.sources import open_run


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


def test_restart_into_the_same_folder_is_named(tmp_path):
    import time

    _write(tmp_path, 10).close()  # steps 0-9
    # event file names start with the creation second (events.out.tfevents.<seconds>...): the restart's file must
    # be born in a later second to sort after, so wait for the clock to pass the first file's second
    (first_file,) = tmp_path.glob("events.out.tfevents.*")
    born, deadline = int(first_file.name.split(".")[3]), time.monotonic() + 60
    while int(time.time()) <= born and time.monotonic() < deadline:
        time.sleep(0.05)
    w = SummaryWriter(log_dir=str(tmp_path))
    for s in range(5, 8):  # restarted from a checkpoint at step 5, with a changed reward
        w.add_scalar("train/reward", 9.0, s)
    w.close()
    run = open_run(tmp_path)
    m = run.metrics.set_index("step")
    assert len(m) == 10 and m.loc[6, "reward/mean"] == 9.0 and m.loc[9, "reward/mean"] == pytest.approx(0.9)
    assert m.loc[6, "policy/kl_ref"] == pytest.approx(0.06)  # tags the restart did not log again stay
    (first, second) = sorted(p.name for p in tmp_path.glob("events.out.tfevents.*"))
    assert [str(p) for p in run.problems] == [
        (f"{second}: starts at step 5, within {first} (up to step 9): a restarted run; for steps in both, this "
        "later file's values win")]


def test_logged_nan_is_told_from_a_tag_not_logged(tmp_path):
    """TRL over TensorBoard with num_iterations > 1: the reward only on generation steps, the loss on all."""
    from dashboard.diagnosis import diagnose

    w = SummaryWriter(log_dir=str(tmp_path / "tb"))
    for s in range(30):
        if s % 2 == 0:
            w.add_scalar("train/reward", 0.5, s)
        w.add_scalar("train/loss", math.nan if s == 21 else 0.1, s)
    w.close()
    run = open_run(tmp_path / "tb")
    assert run.nan_known and run.nan_at == {"loss/total": {21}}
    f = next(f for f in diagnose(run).findings if f.rule_id == "non_finite")
    assert f.step_range == (21, 21)  # found although step 21 logged no reward


def test_import_keeps_a_logged_nan_and_a_gap_apart(tmp_path):
    from collectors import load_run
    from collectors.cli import main as import_main

    w = SummaryWriter(log_dir=str(tmp_path / "tb"))
    for s in range(6):
        w.add_scalar("train/loss", math.nan if s == 3 else 0.1, s)
        if s != 4:
            w.add_scalar("train/reward", 0.5, s)
    w.close()
    assert import_main([str(tmp_path / "tb"), "--to", str(tmp_path / "ours")]) == 0
    ours = load_run(tmp_path / "ours")
    assert ours.nan_at == {"loss/total": {3}}  # the reward gap at step 4 stays a null
    assert math.isnan(ours.metrics["reward/mean"].iloc[4])
