"""wandb history records -> scalar points, with the Python work per record, not per value.

wandb writes every logged value as JSON text (`HistoryItem.value_json`). A record whose values are all plain
numbers (the common case: no nested key, no string, no media object) is decoded with one `json.loads` of
its joined texts and added to `columnar.Points` as it is; any other record returns False and is read row by
row (`offline.history_row`), which flattens nested dicts and skips media.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from functools import lru_cache
from typing import Any

import numpy as np

from collectors.readers.columnar import WALL, Points
from collectors.readers.keymap import STEP_LIMIT, family_name, to_number
from collectors.readers.protowire import varint as _varint

# TRL/OpenRLHF log their trainer step as train/global_step (OpenRLHF's eval rows: eval/global_step); prime-rl as
# `step` (WandbMonitor: define_metric("*", step_metric="step"), one wandb.log per group of metrics); slime as
# train/step, rollout/step or eval/step, one per dict it logs (slime/observability/wandb_utils.py); else _step
STEP_KEYS = ("train/global_step", "eval/global_step", "step", "train/step", "rollout/step", "eval/step", "_step")
_NOT_PLAIN = ('"', "{", "[", "null")  # strings, dicts (media), lists, nulls: the row-by-row path


class HistoryBatch:
    """History records of plain numbers, decoded together: one `json.loads` for the whole batch. Any other
    record goes to `slow(raw record, order)` at once. Records come as `light_history` parses them."""

    def __init__(self, points: Points, slow: Callable[[Any, int], None]) -> None:
        self.points, self.slow = points, slow
        self._texts: list[str] = []
        # (order, history, raw record, (codes, index of the step key))
        self._records: list[tuple[int, Any, bytes, tuple[list[int], int]]] = []

    def add(self, history: Any, raw: bytes, order: int | None = None) -> None:
        order = self.points.next_event() if order is None else order
        items = history.item
        keys = [it.nested_key or it.key for it in items]
        text = ",".join([it.value_json for it in items])
        if "" in keys or not text or any(mark in text for mark in _NOT_PLAIN):
            self.slow(raw, order)
            return
        index = self.points._index  # wandb-core writes a row's keys in no fixed order: looked up per record
        try:
            codes = [index[k] for k in keys]
        except KeyError:
            codes = [self.points.code(k) for k in keys]
        at = next((keys.index(k) for k in STEP_KEYS if k in keys), -1)
        self._texts.append(text)
        self._records.append((order, history, raw, (codes, at)))

    def flush(self) -> None:
        """Decode what was batched into `points` (records whose values do not parse go to `slow`)."""
        records, texts = self._records, self._texts
        self._records, self._texts = [], []
        if not records:
            return
        try:
            values = json.loads(f"[{','.join(texts)}]")
        except (ValueError, RecursionError):  # no JSON, or an integer of 5,000 digits: one at a time
            values = None
        counts = [len(layout[0]) for *_, layout in records]
        if values is None or len(values) != sum(counts):  # an empty or odd value somewhere: one at a time
            for (order, history, raw, _), text in zip(records, texts, strict=True):
                self._one(order, history, raw, text)
            return
        steps, orders, codes, keep, start = [], [], [], [], 0
        for (order, history, raw, (layout_codes, at)), n in zip(records, counts, strict=True):
            step = _step(values[start + at] if at >= 0 else None, history)
            if step is None:
                self.slow(raw, order)
            else:
                steps.append(step)
                orders.append(order)
                codes += layout_codes
                keep.append((start, start + n))
            start += n
        if not steps:
            return
        flat = values if len(keep) == len(records) else [v for a, b in keep for v in values[a:b]]
        lengths = [b - a for a, b in keep]
        try:
            numbers = np.array(flat, dtype=np.float64)
        except OverflowError:  # an integer beyond float (10**400): a signed infinity, as in every reader
            numbers = np.array([to_number(v) for v in flat], dtype=np.float64)
        self.points.add_arrays(np.repeat(np.array(steps, dtype=np.int64), lengths), np.array(codes, dtype=np.int64),
                               numbers, np.repeat(np.array(orders, dtype=np.int64), lengths))

    def _one(self, order: int, history: Any, raw: bytes, text: str) -> None:
        try:
            values = json.loads(f"[{text}]")
        except (ValueError, RecursionError):
            values = None
        keys = [it.nested_key or it.key for it in history.item]
        step = _step(next((values[keys.index(k)] for k in STEP_KEYS if k in keys), None), history) if (
            values is not None and len(values) == len(keys)) else None
        if step is None:
            self.slow(raw, order)
        else:
            self.points.add(step, keys, values, order)


HISTORY_FIELD = 2  # Record.history (wandb_internal.proto)


@lru_cache(maxsize=1)
def light_record_class() -> type:
    """A protobuf class that reads a wandb `Record` holding a history as `.history.item[i]` with `key`,
    `nested_key` and `value_json` as plain strings (and `.history.step.num`), fields numbered as in
    wandb_internal.proto. `nested_key` is repeated there; declared singular here, one field access per item
    costs a string instead of a container. A path of several parts would keep only its last part, so
    `light_history` takes a record only when nothing was dropped."""
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

    f = descriptor_pb2.FieldDescriptorProto
    proto = descriptor_pb2.FileDescriptorProto(name="grposcope_wandb_history.proto", package="grposcope_wandb",
                                               syntax="proto3")
    item = proto.message_type.add(name="Item")
    for name, number in (("key", 1), ("nested_key", 2), ("value_json", 16)):
        item.field.add(name=name, number=number, type=f.TYPE_STRING, label=f.LABEL_OPTIONAL)
    proto.message_type.add(name="Step").field.add(name="num", number=1, type=f.TYPE_INT64, label=f.LABEL_OPTIONAL)
    history = proto.message_type.add(name="History")
    history.field.add(name="item", number=1, type=f.TYPE_MESSAGE, label=f.LABEL_REPEATED,
                      type_name=".grposcope_wandb.Item")
    history.field.add(name="step", number=2, type=f.TYPE_MESSAGE, label=f.LABEL_OPTIONAL,
                      type_name=".grposcope_wandb.Step")
    record = proto.message_type.add(name="Record")
    record.field.add(name="history", number=HISTORY_FIELD, type=f.TYPE_MESSAGE, label=f.LABEL_OPTIONAL,
                     type_name=".grposcope_wandb.History")
    pool = descriptor_pool.DescriptorPool()
    pool.Add(proto)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName("grposcope_wandb.Record"))


def light_history(light: type, raw: bytes) -> Any | None:
    """The history of a serialized Record read with `light_record_class`, or None when that read would lose
    bytes (a nested key of several parts, a default written out) or the bytes do not parse: the record is
    then read with wandb's own classes. Fields it does not declare are kept as unknown, so a read that lost
    nothing serializes back to the same size."""
    from google.protobuf.message import DecodeError

    try:
        record = light.FromString(raw)
    except DecodeError:
        return None
    return record.history if record.ByteSize() == len(raw) else None


def _step(value: Any, history: Any) -> int | None:
    """The trainer's step (the first STEP_KEYS value, a finite number), else wandb's own `step.num`."""
    if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) \
            and abs(value) < STEP_LIMIT:  # 2**80 is no int64 step
        return int(value)
    return int(history.step.num) if history.HasField("step") else None


_FIRST_FIELD = re.compile(rb"(?:\x08[\x80-\xff]{0,9}[\x00-\x7f])?([\x00-\x7f])")  # Record.num, then a one-byte key


def record_type(raw: bytes, oneof_numbers: frozenset[int]) -> int | None:
    """The field number of a serialized `Record`'s `record_type` (2 for history), read off its first bytes,
    so that the many records a reader has no use for (wandb writes two summary updates per logged row) are
    never parsed; None when the bytes do not say (the record is then parsed whole)."""
    if (m := _FIRST_FIELD.match(raw)) is not None and (key := m.group(1)[0]) & 7 == 2 and key >> 3 in oneof_numbers:
        return key >> 3  # the common case, `num` then a record type of field 1-15: read off one regex match
    pos, n = 0, len(raw)
    try:
        while pos < n:
            key, pos = _varint(raw, pos)
            field, wire = key >> 3, key & 7
            if field in oneof_numbers:
                return field
            if wire == 0:
                _, pos = _varint(raw, pos)
            elif wire == 2:
                length, pos = _varint(raw, pos)
                pos += length
            elif wire in (1, 5):
                pos += 8 if wire == 1 else 4
            else:
                return None
    except IndexError:
        return None
    return None


def column(key: str) -> str | None:
    """Our column for a history key: wandb's `_timestamp` is the wall time, its other `_` keys are its own
    bookkeeping; everything else through the family maps (rows from the row-by-row path are already mapped,
    and mapping a canonical name again leaves it as it is)."""
    if key in ("_timestamp", WALL):
        return WALL
    if key.startswith("_"):
        return None
    return family_name(key)
