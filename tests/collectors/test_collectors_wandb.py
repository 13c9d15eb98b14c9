"""wandb offline reader on a real offline run made here with WANDB_MODE=offline (no network, no account)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import wandb  # noqa: F401 - the dev extra: a broken install fails here, never skips
from fixtures.wandb_offline import write_offline_run  # tests/ is on sys.path

from collectors.readers.wandb.offline import WandbOfflineRun, wandb_file
from collectors.sources import detect_source, open_run

SCRIPT = """
import wandb
run = wandb.init(project="p", name="tiny", config={"lr": 0.1, "grpo": {"group_size": 8}}, dir=DIR)
for s in range(N):
    row = {"train/reward": 0.01 * s, "train/kl": 0.5, "train/global_step": s + 1, "note": "txt"}
    if s == 0:  # a completions table (media, not read) and a nested dict (wandb names it "grpo.kl_coef")
        row["completions"] = wandb.Table(columns=["prompt", "completion"], data=[["1+1=", "2"]])
        row["grpo"] = {"kl_coef": 0.05}
    wandb.log(row)
run.finish()
"""


@pytest.fixture(scope="module")
def offline_run(tmp_path_factory):
    return write_offline_run(tmp_path_factory.mktemp("wb"), SCRIPT, N=3000)


def test_history_config_and_status(offline_run):
    assert detect_source(offline_run) == "wandb"
    run = open_run(offline_run)
    m = run.metrics
    # 3000 rows span several 32 KiB blocks, so chunks split across blocks are joined
    assert len(m) == 3000 and run.problems == []
    assert list(m["step"].iloc[:3]) == [1, 2, 3]  # train/global_step, not wandb's _step
    assert m["reward/mean"].iloc[100] == pytest.approx(1.0)
    assert m["policy/kl_ref"].iloc[0] == 0.5
    assert run.meta.config["lr"] == 0.1 and run.meta.config["grpo.group_size"] == 8
    assert run.meta.status == "finished" and run.name == "tiny"
    # the table's nrows/ncols are not metrics and it gives no samples; the nested key is named as online
    assert [c for c in m.columns if c.startswith("completions")] == [] and len(run.samples()) == 0
    assert m["grpo.kl_coef"].iloc[0] == 0.05 and m["grpo.kl_coef"].isna().sum() == 2999


def test_growing_file_refresh_reads_new_chunks(offline_run, tmp_path):
    data = wandb_file(offline_run).read_bytes()
    f = tmp_path / "run-x.wandb"
    f.write_bytes(data[: len(data) // 2])
    run = WandbOfflineRun(f)
    half = len(run.metrics)
    assert 0 < half < 3000
    with f.open("ab") as fh:
        fh.write(data[len(data) // 2 :])
    assert run.refresh() >= 3000 - half
    assert len(run.metrics) == 3000


def test_a_file_read_in_pieces_gives_what_one_read_gives(offline_run, tmp_path, monkeypatch):
    from collectors.readers.wandb import framing

    whole = WandbOfflineRun(offline_run).metrics
    data = wandb_file(offline_run).read_bytes()
    monkeypatch.setattr(framing, "WINDOW", framing.BLOCK)  # a window per 32 KiB block: records span windows
    pd.testing.assert_frame_equal(WandbOfflineRun(offline_run).metrics, whole)
    monkeypatch.undo()
    # a refresh after each piece, cut anywhere: inside a header, inside records read and passed over,
    # between the FIRST and LAST chunks of one record
    at, lengths, kinds, types = _chunks(data)
    split = [int(at[i] + 7 + lengths[i]) for t in (2, 3) for i in np.flatnonzero((kinds == 2) & (types == t))[:2]]
    assert len(split) == 4  # two history and two summary records begun in one block and ended in the next
    f = tmp_path / "run-grow.wandb"
    f.write_bytes(data[:3])
    run = WandbOfflineRun(f)
    for cut in sorted({*range(3, len(data), len(data) // 9 + 4321), *split, len(data)}):
        with f.open("ab") as fh:
            fh.write(data[f.stat().st_size:cut])
        run.refresh()
    assert [p for p in run.problems if "skipped" in p.message] == []  # no chunk taken for a damaged one
    pd.testing.assert_frame_equal(run.metrics.reset_index(drop=True), whole.reset_index(drop=True))


def _chunks(data: bytes) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per chunk of a .wandb file: (position, data length, chunk type, record type read off its first bytes:
    2 history, 3 summary, -1 for the chunks that continue a record)."""
    from collectors.readers.wandb.framing import FIRST, FULL, chunks, leading_type

    arr = np.frombuffer(data, dtype=np.uint8)[7:]
    at, lengths, kinds, *_ = chunks(arr, 7)
    types = np.full(len(at), -1)
    start = (kinds == FULL) | (kinds == FIRST)
    types[start] = leading_type(arr, at[start] + 7, lengths[start], frozenset({2, 3, 4, 5, 7, 11, 17, 18}))
    return at + 7, lengths, kinds, types


def _chunk_of(data: bytes, record_type: int) -> tuple[int, int]:
    """(position, data length) of the middle one of the FULL chunks holding a record of `record_type`."""
    at, lengths, kinds, types = _chunks(data)
    pick = np.flatnonzero((kinds == 1) & (types == record_type))
    i = pick[len(pick) // 2]
    return int(at[i]), int(lengths[i])


def test_corrupt_and_unknown_version(offline_run, tmp_path):
    good = wandb_file(offline_run).read_bytes()
    data = bytearray(good)
    at, length = _chunk_of(good, 2)  # a byte inside a history record: caught by its CRC, reading stops there
    data[at + 7 + length // 2] ^= 0xFF
    f = tmp_path / "run-bad.wandb"
    f.write_bytes(bytes(data))
    run = WandbOfflineRun(f)
    assert 0 < len(run.metrics) < 3000
    assert run.problems[0].message == (f"corrupt chunk at byte {at} (CRC mismatch); later records skipped")
    assert "run-bad.wandb" in str(run.problems[0])
    g = tmp_path / "run-new.wandb"
    g.write_bytes(b":W&B\xe1\xbe\x09" + bytes(data[7:]))
    assert "not a wandb run file of a known version" in str(WandbOfflineRun(g).problems[0])
    empty = tmp_path / "empty"
    empty.mkdir()
    assert "no run-*.wandb" in str(WandbOfflineRun(empty).problems[0])


def test_a_damaged_record_that_is_never_read_costs_nothing(offline_run, tmp_path):
    good = wandb_file(offline_run).read_bytes()
    data = bytearray(good)
    at, length = _chunk_of(good, 3)  # a summary record's data: passed over unread, its CRC never checked
    data[at + 7 + length // 2] ^= 0xFF
    f = tmp_path / "run-summary.wandb"
    f.write_bytes(bytes(data))
    run = WandbOfflineRun(f)
    assert len(run.metrics) == 3000 and run.problems == []
    pd.testing.assert_frame_equal(run.metrics, WandbOfflineRun(offline_run).metrics)
    data = bytearray(good)
    data[at + 4] ^= 0x40  # its length, though: the walk of that block goes astray and stops with an error
    f.write_bytes(bytes(data))
    run = WandbOfflineRun(f)
    assert len(run.metrics) < 3000 and "later records skipped" in str(run.problems[0])


def test_discovery_finds_offline_runs_inside_a_wandb_folder(offline_run):
    from collectors import discover_runs

    root = offline_run.parent.parent  # the folder that holds wandb/, as a user's project folder does
    found = discover_runs(root)
    assert [(r.path, r.source) for r in found] == [(offline_run, "wandb")]


def test_the_type_read_off_a_record_s_first_bytes_is_the_one_its_fields_say(offline_run):
    from wandb.proto import wandb_internal_pb2 as pb

    from collectors.readers.wandb.framing import RecordReader, leading_type
    from collectors.readers.wandb.history import record_type

    types = frozenset(f.number for f in pb.Record.DESCRIPTOR.oneofs_by_name["record_type"].fields)
    real = RecordReader(wandb_file(offline_run)).read()
    rng = np.random.default_rng(0)  # and byte strings made up to look like a record's beginning, or not
    made = [bytes(rng.choice([0x08, 0x12, 0x1A, 0x8A, 0x01, 0x80, 0xFF, 0x00], size=n)) for n in rng.integers(0, 12, 3000)]
    raws = real + made
    at = np.cumsum([0] + [len(r) for r in raws[:-1]])
    got = leading_type(np.frombuffer(b"".join(raws) + bytes(16), dtype=np.uint8), at,
                       np.array([len(r) for r in raws]), types)
    want = [record_type(r, types) for r in raws]
    assert all(g == -1 or g == w for g, w in zip(got.tolist(), want, strict=True))  # never another type
    # wandb's own records nearly all told at once (the rest, a control field first, by record_type)
    assert (got[:len(real)] >= 0).mean() > 0.99 and (got[len(real):] >= 0).any()
