"""TensorBoard event records -> scalar points, with the Python work per record and per layout, not per value.

An event of a summary is its wall time, its step and the serialized summary, in that order; those three are
split off the record's bytes. Writers log the same tags event after event, so most summaries are byte for
byte alike except for the 4 bytes of each float: they are grouped by size, the first of a group is the
template (parsed with TensorBoard's `Summary` protobuf; its tags and the offsets of its floats are checked
against that parse), and every summary whose other bytes equal the template's is decoded at once with
numpy. Anything else (tensors of new-style summaries, the `args` text, another layout, any other event) is
read by the protobuf, value by value.
"""

from __future__ import annotations

import re
import struct
from typing import Any

import numpy as np

from collectors.extras import require
from collectors.readers.columnar import WALL, Points

# transformers' TensorBoardCallback writes TrainingArguments (TRL: the GRPOConfig) as JSON text under "args"
CONFIG_TAGS = ("args/text_summary", "args")
_MAX_TEMPLATES = 64  # layouts tried per summary size before the rest is read value by value
_FLOAT_BYTES = np.arange(4)
_DOUBLE = struct.Struct("<d")


def decode(records: list[bytes], points: Points | None = None) -> Points:
    """Serialized `Event`s -> their scalar points (and `wall_time` as one point per event with a scalar)."""
    # the one way in: without tensorboard, a line naming the extra instead of an ImportError
    Event = require("tensorboard.compat.proto.event_pb2", "tensorboard", "reading TensorBoard event files").Event
    from google.protobuf.message import DecodeError  # protobuf comes with tensorboard (and streamlit)

    out = points if points is not None else Points()
    by_layout: dict[bytes, list[tuple[int, int, float, bytes]]] = {}
    first = out.events  # records are numbered in arrival order (it decides the last write)
    out.events += len(records)
    for order, raw in enumerate(records, first):
        if (split := _split_event(raw)) is not None:
            by_layout.setdefault(split[0], []).append((order, *split[1:]))
            continue
        try:  # any other event (file version, graph, a field we do not expect): the protobuf reads it
            event = Event.FromString(raw)
        except DecodeError:
            out.undecodable += 1
            continue
        if event.HasField("summary"):
            _add_event(out, event, order)
    for rows in by_layout.values():
        _decode_same_size(rows, out)
    return out


# an Event of a summary: wall_time (field 1, double), step (field 2, varint; absent when 0), summary (field 5)
_EVENT_RE = re.compile(rb"(?:\x09(.{8}))?(?:\x10([\x80-\xff]{0,9}[\x00-\x7f]))?\x2a([\x80-\xff]{0,4}[\x00-\x7f])",
                       re.DOTALL)


def _split_event(raw: bytes) -> tuple[bytes, int, float, bytes] | None:
    """(layout key, step, wall_time, serialized summary) of an Event made of exactly those fields (wall_time
    1, step 2, summary 5, in field order, as every writer serializes them), else None. proto3 leaves out a
    zero step. The key is the summary's size and first tag (`0a len 0a taglen tag ...`, one-byte lengths),
    so that summaries a writer logs one tag at a time (torch's add_scalar) are grouped by tag before
    templates are tried; only a grouping: the template check decides."""
    m = _EVENT_RE.match(raw)
    if m is None:
        return None
    wall_bytes, step_bytes, length_bytes = m.groups()
    length = length_bytes[0] if len(length_bytes) == 1 else _varint(length_bytes, 0)[0]
    pos = m.end()
    if pos + length != len(raw) or not length:
        return None
    step = 0
    if step_bytes:
        n = len(step_bytes)
        step = step_bytes[0] if n == 1 else (step_bytes[0] & 0x7F) | (step_bytes[1] << 7) if n == 2 else \
            _varint(step_bytes, 0)[0]
        if step >= 1 << 63:
            step -= 1 << 64  # int64 two's complement
    key = length.to_bytes(4, "little")
    if length >= 4 and raw[pos] == 0x0A and raw[pos + 1] < 0x80 and raw[pos + 2] == 0x0A and (
            tag_len := raw[pos + 3]) < 0x80:
        key += raw[pos:pos + 4 + tag_len]
    return key, step, (_DOUBLE.unpack(wall_bytes)[0] if wall_bytes else 0.0), raw[pos:]


def _decode_same_size(rows: list[tuple[int, int, float, bytes]], out: Points) -> None:
    """Summaries of one size (and first tag): each template's matching rows at once with numpy, the rest
    value by value."""
    from tensorboard.compat.proto.summary_pb2 import Summary

    size = len(rows[0][3])
    orders, steps, walls = (np.array(col) for col in zip(*((r[0], r[1], r[2]) for r in rows), strict=True))
    matrix = np.frombuffer(b"".join(r[3] for r in rows), dtype=np.uint8).reshape(len(rows), size)
    left = np.arange(len(rows))  # rows not decoded yet
    for _ in range(_MAX_TEMPLATES):
        if not len(left):
            return
        first = int(left[0])
        summary = Summary.FromString(rows[first][3])
        layout = _layout(rows[first][3], summary)
        if layout is None:
            _add_values(out, summary.value, int(steps[first]), float(walls[first]), int(orders[first]))
            left = left[1:]
            continue
        tags, offsets = layout
        float_cols = (offsets[:, None] + _FLOAT_BYTES).reshape(-1)
        fixed = np.ones(size, dtype=bool)
        fixed[float_cols] = False
        match = (matrix[left][:, fixed] == matrix[first, fixed]).all(axis=1)
        hit = left[match]
        floats = np.ascontiguousarray(matrix[hit][:, float_cols]).view("<f4").reshape(len(hit), len(tags))
        out.add_block(steps[hit].astype(np.int64), orders[hit].astype(np.int64), tags, floats)
        out.add_block(steps[hit].astype(np.int64), orders[hit].astype(np.int64), [WALL],
                      walls[hit].astype(np.float64)[:, None])
        left = left[~match]
    for i in left.tolist():
        _add_values(out, Summary.FromString(rows[i][3]).value, int(steps[i]), float(walls[i]), int(orders[i]))


def _layout(payload: bytes, summary: Any) -> tuple[list[str], np.ndarray] | None:
    """The tags of a serialized Summary and the byte offsets of their float32 `simple_value`s, when every
    value is one; None otherwise. Confirmed against the protobuf's parse of the same bytes."""
    tags: list[str] = []
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


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        byte = data[pos]
        result |= (byte & 0x7F) << shift
        pos += 1
        if byte < 0x80:
            return result, pos
        shift += 7


def _add_event(out: Points, event: Any, order: int) -> None:
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
