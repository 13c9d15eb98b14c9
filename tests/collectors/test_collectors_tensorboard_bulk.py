"""The bulk TensorBoard decoding (byte templates, numpy CRC) equals a record-by-record protobuf read of the
same files, written by torch's SummaryWriter and TensorBoard's own EventFileWriter."""

from __future__ import annotations

import json

import google_crc32c
import numpy as np
import pandas as pd
import pytest
from torch.utils.tensorboard import SummaryWriter

from collectors.readers.columnar import Points, pivot
from collectors.readers.tensorboard import events
from collectors.readers.tensorboard.tfrecord import RecordReader, crc32c_rows

# steps across every varint length change (1, 2, 3, 5 and 10 bytes; 0 is left out by proto3; negative)
STEPS = [0, 1, 127, 128, 129, 16_383, 16_384, 2**31, 2**62, -1, -5, 3, 3]
VALUES = [0.5, -0.0, float("nan"), float("inf"), -float("inf"), 1e-40, 3.4e38, 7.0, 1.25, -2.5, 0.0, 9.0, 10.0]


def _reference(records: list[bytes]) -> pd.DataFrame:
    """Every record parsed whole by the protobuf, value by value: what the reader did before the templates."""
    from tensorboard.compat.proto.event_pb2 import Event

    points = Points()
    for raw in records:
        event = Event.FromString(raw)
        order = points.next_event()
        if event.HasField("summary"):
            events._add_values(points, event.summary.value, event.step, event.wall_time, order)
    return pivot(points)


def _bulk(records: list[bytes]) -> pd.DataFrame:
    return pivot(events.decode(records))


def _records(folder) -> list[bytes]:
    (f,) = list(folder.glob("events.out.tfevents.*"))
    reader = RecordReader(f)
    out = reader.read()
    assert reader.error is None
    return out


def _same(a: pd.DataFrame, b: pd.DataFrame) -> None:
    pd.testing.assert_frame_equal(a, b)  # same columns in the same order, values bit for bit (NaN == NaN)
    assert a.attrs == b.attrs


@pytest.mark.parametrize("min_bulk", [1, 4])  # 1: every record length, even a lone one, goes through a template
def test_one_tag_per_event_equals_the_protobuf_read(tmp_path, monkeypatch, min_bulk):
    monkeypatch.setattr(events, "_MIN_BULK", min_bulk)
    w = SummaryWriter(log_dir=str(tmp_path))
    w.add_text("args", json.dumps({"learning_rate": 1e-6}))  # TRL's config, a tensor summary
    for i, (step, value) in enumerate(zip(STEPS, VALUES, strict=True)):
        w.add_scalar("train/reward", value, step)
        w.add_scalar("train/kl_xx", value * 2, step)  # same length as the next tag: one record length, two layouts
        w.add_scalar("train/kl_yy", -value, step)
        if i % 3 == 0:
            w.add_scalars("multi", {"a": value, "bb": 1.0}, step)  # other files; not this one's records
    w.close()
    records = _records(tmp_path)
    got, want = _bulk(records), _reference(records)
    _same(got, want)
    assert len(got) == len(set(STEPS))
    assert got.loc[got["step"] == 2**62, "reward/mean"].item() == 1.25
    assert got.loc[got["step"] == -1, "train/kl_yy"].item() == 2.5
    assert got.loc[got["step"] == 3, "reward/mean"].item() == 10.0  # step 3 logged twice: the last write
    assert got.attrs["nan_at"] == {"reward/mean": [127], "train/kl_xx": [127], "train/kl_yy": [127]}
    points = events.decode(records)
    assert points.texts == [("args/text_summary", json.dumps({"learning_rate": 1e-6}))]
    assert sum(len(b[0]) for b in points.blocks) >= (2 * 3 * len(STEPS) if min_bulk == 1 else 1)


def test_many_tags_per_event_and_a_zero_wall_time_equal_the_protobuf_read(tmp_path):
    from tensorboard.compat.proto import event_pb2, summary_pb2
    from tensorboard.summary.writer.event_file_writer import EventFileWriter

    w = EventFileWriter(str(tmp_path))
    rng = np.random.default_rng(0)
    for step in range(300):
        tags = ["a", "bb", "ccc"] if step % 7 else ["a", "bb"]  # two layouts in one file
        summary = summary_pb2.Summary(value=[summary_pb2.Summary.Value(tag=t, simple_value=float(rng.random()))
                                             for t in tags])
        w.add_event(event_pb2.Event(step=step, wall_time=0.0 if step % 5 == 0 else 1e9 + step, summary=summary))
    w.close()
    records = _records(tmp_path)
    _same(_bulk(records), _reference(records))


def test_numpy_crc_equals_the_native_one():
    rows = np.random.default_rng(1).integers(0, 256, (300, 45), dtype=np.uint8)
    assert crc32c_rows(rows).tolist() == [google_crc32c.value(r.tobytes()) for r in rows]
    assert crc32c_rows(np.zeros((2, 0), dtype=np.uint8)).tolist() == [0, 0]


def test_a_flipped_byte_in_a_one_tag_file_stops_at_that_record(tmp_path):
    w = SummaryWriter(log_dir=str(tmp_path))
    for s in range(400):  # 400 records of one length: their CRCs are checked with numpy
        w.add_scalar("train/reward", float(s), s)
    w.close()
    (f,) = list(tmp_path.glob("events.out.tfevents.*"))
    good = RecordReader(f).read()
    data = bytearray(f.read_bytes())
    at = data.rindex(b"train/reward", 0, len(data) // 2)  # a tag's byte in a record near the middle
    data[at] ^= 0x01
    f.write_bytes(bytes(data))
    reader = RecordReader(f)
    kept = reader.read()
    assert kept == good[:len(kept)] and 100 < len(kept) < 300
    start = sum(16 + len(r) for r in kept)
    assert start <= at < start + 16 + len(good[len(kept)])
    assert reader.error == f"corrupt record at byte {start} (CRC mismatch); later events skipped"


class _CountedName(str):
    """A column name that counts how often it is compared for equality."""

    compared = 0

    def __eq__(self, other):
        _CountedName.compared += 1
        return str.__eq__(self, other)

    __hash__ = str.__hash__


def test_a_step_of_thousands_of_tags_is_pivoted_in_linear_work():
    """One event of N tags (a trainer logging every parameter's norm; issue 38 timed 20,000 tags at 6.9 s): each
    tag finds its column by hashing, not by a search of the column list (N^2 / 2 comparisons: 3 s at 20,000)."""
    n = 2_000
    points = Points()
    points.add(7, [f"norm/layer{i}" for i in range(n)], [float(i) for i in range(n)])
    _CountedName.compared = 0
    frame = pivot(points, column=lambda tag: _CountedName(tag))
    assert _CountedName.compared < 10 * n  # was about n^2 / 2 = 2,000,000
    assert list(frame.columns[:3]) == ["step", "norm/layer0", "norm/layer1"] and len(frame.columns) == n + 1
    assert frame.loc[0, "step"] == 7 and frame.loc[0, "norm/layer1999"] == 1999.0
