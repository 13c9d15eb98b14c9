"""TensorBoard event records -> scalar points, with the Python work per layout, not per record or value.

An event of a summary is its wall time, its step and the serialized summary, in that order. Writers log the
same tags event after event, so most records of one length are byte for byte alike except for the 8 bytes
of the wall time, the bytes of the step and the 4 bytes of each float (torch's `add_scalar` writes one tag
per event: then every tag has its own such layout). Records are grouped by length; the first undecoded
record of a group is the template (its event split by a regex, its summary parsed with TensorBoard's
`Summary` protobuf, its tags and the byte offsets of its floats checked against that parse), and every
record of the group whose other bytes equal the template's is decoded at once with numpy: step, wall time
and floats read off a byte matrix. Anything else (tensors of new-style summaries, the `args` text, another
layout, any other event) is read by the protobuf, record by record. Tags are registered in the order of the
first record that carries them, whatever the grouping.
"""

from __future__ import annotations

import re
import struct
from typing import Any

import numpy as np

from collectors.extras import require
from collectors.readers.columnar import WALL, Points
from collectors.readers.protowire import varint as _varint

# transformers' TensorBoardCallback writes TrainingArguments (TRL: the GRPOConfig) as JSON text under "args"
CONFIG_TAGS = ("args/text_summary", "args")
_MAX_TEMPLATES = 64  # layouts tried per record length before the rest is read record by record
_MIN_BULK = 4  # a length shared by fewer records is read record by record (a template costs a few parses)
_FLOAT_BYTES = np.arange(4)
_DOUBLE = struct.Struct("<d")


def decode(records: list[bytes], points: Points | None = None) -> Points:
    """Serialized `Event`s -> their scalar points (and `wall_time` as one point per event with a scalar)."""
    # the one way in: without tensorboard, a line naming the extra instead of an ImportError
    require("tensorboard.compat.proto.event_pb2", "tensorboard", "reading TensorBoard event files")
    out = points if points is not None else Points()
    first = out.events  # records are numbered in arrival order (it decides the last write)
    out.events += len(records)
    pieces: list[tuple[int, tuple]] = []  # (first record number, what to add), applied in record order
    lengths = np.fromiter(map(len, records), dtype=np.int64, count=len(records))
    by_length = np.argsort(lengths, kind="stable")
    for idx in np.split(by_length, np.flatnonzero(np.diff(lengths[by_length])) + 1):
        if len(idx) >= _MIN_BULK:
            _decode_same_length(records, idx, first, pieces)
        else:
            pieces += [(first + i, ("one", records[i])) for i in idx.tolist()]
    pieces.sort(key=lambda p: p[0])
    for order, (kind, *args) in pieces:
        if kind == "block":
            steps, orders, tags, floats, walls = args
            out.add_block(steps, orders, tags, floats)
            out.add_block(steps, orders, [WALL], walls[:, None])
        else:
            _decode_one(args[0], order, out)
    return out


# an Event of a summary: wall_time (field 1, double), step (field 2, varint; absent when 0), summary (field 5)
_EVENT_RE = re.compile(rb"(?:\x09(.{8}))?(?:\x10([\x80-\xff]{0,9}[\x00-\x7f]))?\x2a([\x80-\xff]{0,4}[\x00-\x7f])",
                       re.DOTALL)


def _split_event(raw: bytes) -> tuple[re.Match, int] | None:
    """The regex match of an Event made of exactly wall_time (1), step (2) and summary (5), in field order,
    as every writer serializes them, and where its summary starts; else None. proto3 leaves out a zero step."""
    m = _EVENT_RE.match(raw)
    if m is None:
        return None
    length_bytes = m.group(3)
    length = length_bytes[0] if len(length_bytes) == 1 else _varint(length_bytes, 0)[0]
    if m.end() + length != len(raw) or not length:
        return None
    return m, m.end()


def _event_step(m: re.Match) -> int:
    step_bytes = m.group(2)
    if not step_bytes:
        return 0
    step = _varint(step_bytes, 0)[0] & ((1 << 64) - 1)
    return step - (1 << 64) if step >= 1 << 63 else step  # int64 two's complement


def _decode_same_length(records: list[bytes], idx: np.ndarray, first: int, pieces: list) -> None:
    """Records of one length (`idx` into `records`, in arrival order): each template's matching records at
    once with numpy, the rest record by record."""
    from tensorboard.compat.proto.summary_pb2 import Summary

    size = len(records[int(idx[0])])
    matrix = np.frombuffer(b"".join([records[i] for i in idx.tolist()]), dtype=np.uint8).reshape(len(idx), size)
    left = np.arange(len(idx))  # rows not decoded yet
    for _ in range(_MAX_TEMPLATES):
        if not len(left):
            return
        t = int(left[0])
        raw = records[int(idx[t])]
        split = _split_event(raw)
        layout = _template(raw[split[1]:], Summary) if split else None
        if layout is None:  # not a summary of simple values: read on its own
            pieces.append((first + int(idx[t]), ("one", raw)))
            left = left[1:]
            continue
        m, at = split
        tags, offsets = layout
        float_cols = ((offsets + at)[:, None] + _FLOAT_BYTES).reshape(-1)
        fixed = np.ones(size, dtype=bool)
        fixed[float_cols] = False
        wall = m.start(1) if m.group(1) is not None else -1
        if wall >= 0:
            fixed[wall:wall + 8] = False
        step_at, step_len = (m.start(2), len(m.group(2))) if m.group(2) else (0, 0)
        fixed[step_at:step_at + step_len] = False
        rows = matrix[left]
        match = (rows[:, fixed] == matrix[t, fixed]).all(axis=1)
        if step_len:  # the same varint length: continuation bits on all but its last byte
            step_bytes = rows[:, step_at:step_at + step_len]
            match &= (step_bytes[:, :-1] >= 0x80).all(axis=1) & (step_bytes[:, -1] < 0x80)
        hit, rows = left[match], rows[match]
        steps = _varints(rows[:, step_at:step_at + step_len]) if step_len else np.zeros(len(hit), np.int64)
        walls = (np.ascontiguousarray(rows[:, wall:wall + 8]).view("<f8").reshape(-1) if wall >= 0
                 else np.zeros(len(hit))).astype(np.float64)
        floats = np.ascontiguousarray(rows[:, float_cols]).view("<f4").reshape(len(hit), len(tags))
        orders = idx[hit].astype(np.int64) + first
        pieces.append((int(orders[0]), ("block", steps, orders, tags, floats, walls)))
        left = left[~match]
    pieces += [(first + i, ("one", records[i])) for i in idx[left].tolist()]


def _template(payload: bytes, summary_class: type) -> tuple[list[str], np.ndarray] | None:
    from google.protobuf.message import DecodeError

    try:
        return _layout(payload, summary_class.FromString(payload))
    except DecodeError:
        return None


def _varints(cols: np.ndarray) -> np.ndarray:
    """(n, k) bytes of k-byte varints -> int64 (the low 64 bits, two's complement, as protobuf reads int64)."""
    value = np.zeros(len(cols), dtype=np.uint64)
    for j in range(cols.shape[1]):
        value |= (cols[:, j].astype(np.uint64) & np.uint64(0x7F)) << np.uint64(7 * j)
    return value.view(np.int64)


def _layout(payload: bytes, summary: Any) -> tuple[list[str], np.ndarray] | None:
    """The tags of a serialized Summary and the byte offsets of their float32 `simple_value`s, when every
    value is one; None otherwise. Confirmed against the protobuf's parse of the same bytes."""
    offsets: list[int] = []
    pos = 0
    while pos < len(payload):
        if payload[pos] != 0x0A:  # Summary.value: field 1, length-delimited
            return None
        length, pos = _varint(payload, pos + 1)
        end, float_at = pos + length, None
        while pos < end:
            key, pos = _varint(payload, pos)
            field, wire = key >> 3, key & 7
            if wire == 2:
                length, pos = _varint(payload, pos)
                pos += length
            elif wire == 5:
                float_at = pos if field == 2 else float_at
                pos += 4
            elif wire == 0:
                _, pos = _varint(payload, pos)
            elif wire == 1:
                pos += 8
            else:
                return None
        if float_at is None or pos != end:
            return None
        offsets.append(float_at)
        pos = end
    values = summary.value
    if len(values) != len(offsets) or any(v.WhichOneof("value") != "simple_value" for v in values):
        return None
    tags = [v.tag for v in values]
    found = np.frombuffer(b"".join(payload[o:o + 4] for o in offsets), dtype="<f4")
    if not np.array_equal(found, np.array([v.simple_value for v in values], dtype="<f4"), equal_nan=True):
        return None
    return tags, np.array(offsets, dtype=np.int64)


def _decode_one(raw: bytes, order: int, out: Points) -> None:
    """One record read by the protobuf: a summary event's values, or any other event (file version, graph,
    a field we do not expect) parsed whole; bytes that are no Event are counted as undecodable."""
    from google.protobuf.message import DecodeError  # protobuf comes with tensorboard (and streamlit)
    from tensorboard.compat.proto.event_pb2 import Event
    from tensorboard.compat.proto.summary_pb2 import Summary

    if (split := _split_event(raw)) is not None:
        m, at = split
        try:
            values = Summary.FromString(raw[at:]).value
        except DecodeError:
            values = None
        if values is not None:
            wall = _DOUBLE.unpack(m.group(1))[0] if m.group(1) is not None else 0.0
            _add_values(out, values, _event_step(m), wall, order)
            return
    try:
        event = Event.FromString(raw)
    except DecodeError:
        out.undecodable += 1
        return
    if event.HasField("summary"):
        _add_values(out, event.summary.value, event.step, event.wall_time, order)


def _add_values(out: Points, values: Any, step: int, wall: float, order: int) -> None:
    """One summary read value by value: simple values, one-element tensors, and the config text."""
    tags, numbers = [], []
    for v in values:
        kind = v.WhichOneof("value")
        if kind == "simple_value":
            tags.append(v.tag)
            numbers.append(v.simple_value)
        elif kind == "tensor":
            if v.tag in CONFIG_TAGS and len(v.tensor.string_val) == 1:
                out.texts.append((v.tag, v.tensor.string_val[0].decode("utf-8", "replace")))
            elif (number := _tensor_scalar(v.tensor)) is not None:
                tags.append(v.tag)
                numbers.append(number)
    if tags:  # no wall time without a scalar
        out.add(step, [*tags, WALL], [*numbers, wall], order)


def _tensor_scalar(tensor: Any) -> float | None:
    """A one-element numeric tensor (tf2 / new-style summaries) as a float, else None."""
    from tensorboard.util import tensor_util

    try:
        arr = tensor_util.make_ndarray(tensor)
    except (TypeError, ValueError):
        return None
    if arr.size == 1 and arr.dtype.kind in "fiub":
        return float(arr.reshape(-1)[0])
    return None
