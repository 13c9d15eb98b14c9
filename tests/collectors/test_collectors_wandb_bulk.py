"""The bulk wandb history decoder (all records' items at once with numpy) gives what the per-record reader
gives, on runs written by wandb itself: plain numbers, and every kind of row it must leave to that reader."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import wandb  # noqa: F401 - the dev extra: a broken install fails here, never skips
from fixtures.wandb_offline import write_offline_run  # tests/ is on sys.path

from collectors.readers.wandb import bulk
from collectors.readers.wandb.offline import WandbOfflineRun

SCRIPT = """
import math, wandb
run = wandb.init(project="p", name="mixed", dir=DIR)
for s in range(N):
    row = {"train/reward": 0.25 * s, "train/kl": -0.0, "loss": s, "lr": 1e-6, "big": 2 ** 60 + 1,
           "train/global_step": s + 1}
    if s % 97 == 5:
        row["train/kl"] = float("nan")
    if s % 89 == 7:
        row["loss"] = float("inf") if s % 2 else float("-inf")
    if s % 83 == 3:
        row["flag"] = True                      # a bool: 1.0, as the per-record reader reads it
    if s % 79 == 11:
        row["note"] = "text"                    # a string: this row is the per-record reader's
    if s % 73 == 13:
        row["grpo"] = {"kl_coef": 0.05}         # a nested dict: a key of two parts
    if s % 71 == 17:
        row["nothing"] = None                   # a null
    if s % 67 == 19:
        row["train/global_step"] = float("nan") # a step that is no number: wandb's own step instead
    if s % 61 == 23:
        row["train/global_step"] = 2 ** 60      # beyond 2**53: kept exact by the per-record reader
    if s % 59 == 29:
        row["a_very_long_metric_name/" + "x" * 90] = s  # a key over 64 bytes (words 9-12 compared)
    if s == 31:
        row["completions"] = wandb.Table(columns=["prompt"], data=[["1+1="]])
    wandb.log(row)
run.finish()
"""


@pytest.fixture(scope="module")
def mixed_run(tmp_path_factory):
    return write_offline_run(tmp_path_factory.mktemp("wb"), SCRIPT, N=1200)


def _per_record(run_dir, monkeypatch) -> WandbOfflineRun:
    with monkeypatch.context() as m:
        m.setattr(bulk, "decode", lambda raws, orders, points: np.zeros(len(raws), dtype=bool))
        return WandbOfflineRun(run_dir)


def test_bulk_equals_the_per_record_reader(mixed_run, monkeypatch):
    taken = []
    real = bulk.decode

    def counting(raws, orders, points):
        out = real(raws, orders, points)
        taken.append((int(out.sum()), len(raws)))
        return out

    monkeypatch.setattr(bulk, "decode", counting)
    fast = WandbOfflineRun(mixed_run)
    monkeypatch.undo()
    slow = _per_record(mixed_run, monkeypatch)
    got, want = fast.metrics, slow.metrics
    pd.testing.assert_frame_equal(got[sorted(got.columns)], want[sorted(want.columns)])  # bit for bit
    assert fast.nan_at == slow.nan_at and fast.problems == slow.problems
    # rows whose step is NaN fall back to wandb's _step (s), which other rows' s + 1 also name: 1,164 steps
    assert len(got) == 1164 and fast.nan_at["policy/kl_ref"] and np.isinf(got["loss/total"]).any()
    # most rows are plain numbers and were decoded in bulk; the odd ones were left to the per-record reader
    (n_taken, n_records), = taken
    assert n_records == 1200 and 1000 < n_taken < 1200
    assert got.loc[got["step"] == 2**60, "reward/mean"].notna().all()  # an exact big step, not rounded


def test_plain_rows_keep_the_order_of_first_arrival(tmp_path):
    run_dir = write_offline_run(tmp_path, """
import wandb
run = wandb.init(project="p", dir=DIR)
for s in range(50):
    run.log({"zeta": s, "alpha": 1.5, **({"mid": 2} if s >= 10 else {})}, step=s)
run.finish()
""")
    m = WandbOfflineRun(run_dir).metrics
    assert list(m["zeta"]) == list(range(50)) and (m["alpha"] == 1.5).all()
    assert m["mid"].isna().sum() == 10 and (m["mid"].iloc[10:] == 2).all()


def test_a_key_repeated_in_one_record_is_left_to_the_per_record_reader():
    from wandb.proto import wandb_internal_pb2 as pb

    from collectors.readers.columnar import Points

    def record(*pairs):
        items = [pb.HistoryItem(key=k, value_json=v) for k, v in pairs]
        return pb.Record(num=1, history=pb.HistoryRecord(item=items, step=pb.HistoryStep(num=7))).SerializeToString()

    records = [record(("ab", "1.25"), ("cd", "2.50")), record(("ab", "1.25"), ("ab", "3"))]
    points = Points()
    taken = bulk.decode(records, np.array([0, 1]), points)
    assert taken.tolist() == [True, False]
    steps, codes, values, _ = points.arrays()
    assert steps.tolist() == [7, 7] and values.tolist() == [1.25, 2.5]
    assert [points.tags[c] for c in codes.tolist()] == ["ab", "cd"]


@pytest.mark.parametrize("text", [b"1", b"-0", b"0.5", b"1e5", b"1E-5", b"-1.25e+10", b"0e0", b"1e-05",
                                  b"123456789012345678901234567890", b"-0.0", b"10", b"-100.25", b"0.5e-3",
                                  b"-0e0", b"1e400", b"2.5E+07"])
def test_json_numbers_are_parsed_as_json_does(text):
    import json

    assert bulk.json_numbers(*bulk.lines(text)) is not None
    got = bulk._values(*bulk.lines(b"7\n" + text), 2)
    want = float(json.loads(text))  # JSON's -0 is the integer 0: +0.0, while -0.0 keeps its sign
    assert got[1] == want and np.signbit(got[1]) == np.signbit(want)


@pytest.mark.parametrize("text", [b"01", b"-01", b".5", b"5.", b"1e", b"+1", b"1-2", b"1e5.2", b"1.2.3", b"1e5e3",
                                  b"--1", b"e5", b"-", b"NaN", b"true", b"1_0", b" 1", b"-.5", b"1.e5", b"00",
                                  b"-00.5", b"1E5E3", b"1.5e3.5", b"1E+", b"inf", b"nan", b"1\n", b"0x10"])
def test_what_json_refuses_or_spells_as_a_literal_is_not_a_plain_number(text):
    import json

    for joined in (b"1\n" + text + b"\n2", text, b"0.25\n" + text, text + b"\n7"):
        assert bulk.json_numbers(*bulk.lines(joined)) is None
    texts = b"\n".join([b"1.5", b"-2", text, b"3e1"])  # then parsed by json.loads, as JSON would, or refused
    try:
        want = np.array(json.loads(b"[" + texts.replace(b"\n", b",") + b"]"), dtype=np.float64)
    except ValueError:
        want = None
    got = bulk._values(*bulk.lines(texts), 4)
    assert got is None if want is None or want.shape != (4,) else np.array_equal(got, want, equal_nan=True)


def test_json_numbers_says_which_lines_have_a_fraction_or_exponent():
    got = bulk.json_numbers(*bulk.lines(b"1.5\n2e3\n3\n-0\n0.0\n1E-2\n100"))
    assert got.tolist() == [True, True, False, False, True, True, False]


def test_64_bit_offsets_give_the_same_frame(mixed_run, monkeypatch):
    want = WandbOfflineRun(mixed_run).metrics
    monkeypatch.setattr(bulk, "WIDE", 0)  # as for a batch of over 2 GiB (wide records): arrow's large_binary
    pd.testing.assert_frame_equal(WandbOfflineRun(mixed_run).metrics, want)


@pytest.mark.parametrize("texts", [b"1.5\nNaN\n-Infinity\ntrue\n-0\nfalse\nInfinity\n2e3", b"NaN", b"true\nfalse",
                                   b"1\nNaN\nnan", b"1\n-Infinity\n-Inf", b"Infinity\n01", b"tru\n1", b"1\nNaN\n-0.0"])
def test_the_literals_json_reads_as_numbers_are_read_beside_plain_numbers(texts):
    import json

    try:
        want = np.array(json.loads(b"[" + texts.replace(b"\n", b",") + b"]"), dtype=np.float64)
    except ValueError:
        want = None  # the records are then the per-record reader's
    got = bulk._values(*bulk.lines(texts), texts.count(b"\n") + 1)
    if want is None:
        assert got is None
    else:
        np.testing.assert_array_equal(got, want)
        assert (np.signbit(got) == np.signbit(want)).all()


def test_literals_are_found_by_line_and_written_as_numbers_for_the_parse():
    numbers, (at, values) = bulk._literals(*bulk.lines(b"1.5\nNaN\ntrue\n-Infinity"))
    assert numbers == b"\n1.5\n111\n1111\n111111111\n" and at.tolist() == [1, 2, 3]
    assert np.isnan(values[0]) and values[1:].tolist() == [1.0, -np.inf]
    assert bulk._literals(*bulk.lines(b"1.5\n2")) is None and bulk._literals(*bulk.lines(b"Nope")) is None
