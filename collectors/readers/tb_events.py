"""TensorBoard event records -> scalar points -> a metrics chunk, with the Python work per record, not per value.

`decode` parses each record with TensorBoard's `Event` protobuf (upb, C) and takes a whole event's tags and
`simple_value`s in two list comprehensions; only an event holding a 0.0 (which is also what a value of
another kind reads as) is looked at value by value, for one-element tensors (new-style summaries) and the
`args` text. `columnar.pivot` turns the points into one row per step.
"""

from __future__ import annotations

from typing import Any

from collectors.extras import require
from collectors.readers.columnar import WALL, Points

# transformers' TensorBoardCallback writes TrainingArguments (TRL: the GRPOConfig) as JSON text under "args"
CONFIG_TAGS = ("args/text_summary", "args")


def decode(records: list[bytes], points: Points | None = None) -> Points:
    """Serialized `Event`s -> their scalar points (and `wall_time` as one point per event)."""
    Event = require("tensorboard.compat.proto.event_pb2", "tensorboard", "reading TensorBoard event files").Event
    from google.protobuf.message import DecodeError  # protobuf comes with tensorboard (and streamlit)

    out = points if points is not None else Points()
    index, wall = out._index, out.code(WALL)
    for raw in records:
        try:
            event = Event.FromString(raw)
        except DecodeError:
            out.undecodable += 1
            continue
        values = event.summary.value
        if not values:
            continue
        step = event.step
        numbers = [v.simple_value for v in values]
        if 0.0 in numbers:  # a logged zero, or a value of another kind: look at each
            tags, numbers = _slow(values, out.texts)
        else:
            tags = [v.tag for v in values]
        if not tags:
            continue  # only text or other kinds: no scalar, and no wall time without one
        try:
            codes = [index[t] for t in tags]
        except KeyError:
            codes = [out.code(t) for t in tags]
        codes.append(wall)
        numbers.append(event.wall_time)
        out.codes += codes
        out.values += numbers
        out.steps += [step] * len(codes)
    return out


def _slow(values: Any, texts: list[tuple[str, str]]) -> tuple[list[str], list[float]]:
    tags, numbers = [], []
    for v in values:
        kind = v.WhichOneof("value")
        if kind == "simple_value":
            tags.append(v.tag)
            numbers.append(v.simple_value)
        elif kind == "tensor":
            if v.tag in CONFIG_TAGS and len(v.tensor.string_val) == 1:
                texts.append((v.tag, v.tensor.string_val[0].decode("utf-8", "replace")))
            elif (number := _tensor_scalar(v.tensor)) is not None:
                tags.append(v.tag)
                numbers.append(number)
    return tags, numbers


def _tensor_scalar(tensor: Any) -> float | None:
    """A one-element numeric tensor (tf2 / new-style summaries) as a float, else None."""
    tensor_util = require("tensorboard.util.tensor_util", "tensorboard", "reading TensorBoard tensors")

    try:
        arr = tensor_util.make_ndarray(tensor)
    except (TypeError, ValueError):
        return None
    if arr.size == 1 and arr.dtype.kind in "fiub":
        return float(arr.reshape(-1)[0])
    return None
