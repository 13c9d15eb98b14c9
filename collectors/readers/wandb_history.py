"""wandb history records -> scalar points, with the Python work per record, not per value.

wandb writes every logged value as JSON text (`HistoryItem.value_json`). A record whose values are all plain
numbers (the common case: no nested key, no string, no media object) is decoded with one `json.loads` of
its joined texts and added to `columnar.Points` as it is; any other record returns False and is read row by
row (`wandb_offline.history_row`), which flattens nested dicts and skips media.
"""

from __future__ import annotations

import json
import math
from typing import Any

from collectors.readers.columnar import WALL, Points
from collectors.readers.keymap import family_name

# TRL/OpenRLHF log their trainer step as train/global_step (OpenRLHF's eval rows: eval/global_step); else _step
STEP_KEYS = ("train/global_step", "eval/global_step", "_step")
_NOT_PLAIN = ('"', "{", "[")


def add_plain(points: Points, history: Any) -> bool:
    """Add a history record of plain numbers to `points`; False (nothing added) for any other record."""
    items = history.item
    keys = _keys(items)
    if keys is None:
        return False
    text = ",".join([it.value_json for it in items])
    if any(c in text for c in _NOT_PLAIN):
        return False
    try:
        values = json.loads(f"[{text}]")
    except json.JSONDecodeError:
        return False
    if len(values) != len(keys):
        return False  # an empty value_json
    step = _step(keys, values, history)
    if step is None:
        return False  # the row-by-row path notes it
    points.add(step, keys, values)
    return True


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


def _step(keys: list[str], values: list[Any], history: Any) -> int | None:
    for key in STEP_KEYS:
        if key in keys:
            v = values[keys.index(key)]
            if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v):
                return int(v)
    return int(history.step.num) if history.HasField("step") else None


def column(key: str) -> str | None:
    """Our column for a history key: wandb's `_timestamp` is the wall time, its other `_` keys are its own
    bookkeeping; everything else through the family maps (rows from the row-by-row path are already mapped,
    and mapping a canonical name again leaves it as it is)."""
    if key in ("_timestamp", WALL):
        return WALL
    if key.startswith("_"):
        return None
    return family_name(key)
