"""wandb history records -> scalar points, with the Python work per record, not per value.

wandb writes every logged value as JSON text (`HistoryItem.value_json`). A record whose values are all plain
numbers (the common case: no nested key, no string, no media object) is decoded with one `json.loads` of
its joined texts and added to `columnar.Points` as it is; any other record returns False and is read row by
row (`wandb_offline.history_row`), which flattens nested dicts and skips media.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from typing import Any

import numpy as np

from collectors.readers.columnar import WALL, Points
from collectors.readers.keymap import family_name

# TRL/OpenRLHF log their trainer step as train/global_step (OpenRLHF's eval rows: eval/global_step); else _step
STEP_KEYS = ("train/global_step", "eval/global_step", "_step")
_NOT_PLAIN = re.compile(r'["{\[]|null')  # strings, dicts (media), lists, nulls: the row-by-row path


class HistoryBatch:
    """History records of plain numbers, decoded together: one `json.loads` for the whole batch. Any other
    record goes to `slow(history, order)` at once."""

    def __init__(self, points: Points, slow: Callable[[Any, int], None]) -> None:
        self.points, self.slow = points, slow
        self._texts: list[str] = []
        self._records: list[tuple[int, Any, tuple[list[int], int]]] = []  # (order, history, (codes, step at))

    def add(self, history: Any) -> None:
        order = self.points.next_event()
        items = history.item
        keys = _keys(items)
        text = ",".join([it.value_json for it in items]) if keys is not None else ""
        if keys is None or not text or _NOT_PLAIN.search(text):
            self.slow(history, order)
            return
        index = self.points._index  # wandb-core writes a row's keys in no fixed order: looked up per record
        try:
            codes = [index[k] for k in keys]
        except KeyError:
            codes = [self.points.code(k) for k in keys]
        at = next((keys.index(k) for k in STEP_KEYS if k in keys), -1)
        self._texts.append(text)
        self._records.append((order, history, (codes, at)))

    def flush(self) -> None:
        """Decode what was batched into `points` (records whose values do not parse go to `slow`)."""
        records, texts = self._records, self._texts
        self._records, self._texts = [], []
        if not records:
            return
        try:
            values = json.loads(f"[{','.join(texts)}]")
        except json.JSONDecodeError:
            values = None
        counts = [len(layout[0]) for _, _, layout in records]
        if values is None or len(values) != sum(counts):  # an empty or odd value somewhere: one at a time
            for (order, history, _), text in zip(records, texts, strict=True):
                self._one(order, history, text)
            return
        steps, orders, codes, keep, start = [], [], [], [], 0
        for (order, history, (layout_codes, at)), n in zip(records, counts, strict=True):
            step = _step(values[start + at] if at >= 0 else None, history)
            if step is None:
                self.slow(history, order)
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
        self.points.add_arrays(np.repeat(np.array(steps, dtype=np.int64), lengths), np.array(codes, dtype=np.int64),
                               np.array(flat, dtype=np.float64), np.repeat(np.array(orders, dtype=np.int64), lengths))

    def _one(self, order: int, history: Any, text: str) -> None:
        try:
            values = json.loads(f"[{text}]")
        except json.JSONDecodeError:
            values = None
        keys = _keys(history.item)
        step = _step(next((values[keys.index(k)] for k in STEP_KEYS if k in keys), None), history) if (
            values is not None and keys is not None and len(values) == len(keys)) else None
        if step is None:
            self.slow(history, order)
        else:
            self.points.add(step, keys, values, order)


def _keys(items: Any) -> list[str] | None:
    """The items' names: wandb-core writes each as a one-element `nested_key` (older clients as `key`);
    None when one is a path of several parts (a logged dict), which the row-by-row path joins."""
    nested = [it.nested_key for it in items]
    lengths = list(map(len, nested))
    if lengths.count(1) == len(lengths):
        return [n[0] for n in nested]
    if lengths.count(0) == len(lengths):
        keys = [it.key for it in items]
        return None if "" in keys else keys
    return None


def _step(value: Any, history: Any) -> int | None:
    """The trainer's step (the first STEP_KEYS value, a finite number), else wandb's own `step.num`."""
    if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
        return int(value)
    return int(history.step.num) if history.HasField("step") else None


def record_type(raw: bytes, oneof_numbers: frozenset[int]) -> int | None:
    """The field number of a serialized `Record`'s `record_type` (2 for history), read off its first bytes,
    so that the many records a reader has no use for (wandb writes two summary updates per logged row) are
    never parsed; None when the bytes do not say (the record is then parsed whole)."""
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


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        byte = data[pos]
        result |= (byte & 0x7F) << shift
        pos += 1
        if byte < 0x80:
            return result, pos
        shift += 7


def column(key: str) -> str | None:
    """Our column for a history key: wandb's `_timestamp` is the wall time, its other `_` keys are its own
    bookkeeping; everything else through the family maps (rows from the row-by-row path are already mapped,
    and mapping a canonical name again leaves it as it is)."""
    if key in ("_timestamp", WALL):
        return WALL
    if key.startswith("_"):
        return None
    return family_name(key)
