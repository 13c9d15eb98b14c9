"""The helpers every reader shares to put foreign metric names under ours; the maps themselves, one module per
framework, are in collectors/readers/keymaps/ (re-exported here for the readers that name one).

A map is a plain dict `their name -> canonical name`. Where a framework's metric means something other than
ours, the comment on its line says how; a metric with no faithful canonical twin stays under its own name
as an extra column (nothing is dropped, nothing is relabelled into a meaning it does not have).
Loggers such as wandb and TensorBoard add prefixes (`train/`, `eval/`); `canonical_name` strips them.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Mapping
from functools import lru_cache
from typing import Any

import numpy as np
import pandas as pd

from collectors.readers.keymaps import FAMILIES, OPENRLHF, TRAINER_SUMMARY_KEYS, TRL, VERL  # noqa: F401 (re-exported)
from collectors.run import NAN_AT
from collectors.schema import METRICS

# Loggers' namespaces; `train/` is dropped, `eval/` and `eval_` name an eval metric.
_PREFIXES = ("train/", "training/", "train_")


def canonical_name(key: str, maps: Iterable[Mapping[str, str]] = FAMILIES.values()) -> str:
    """Our name for `key`: a known family key, a canonical name as is, else `key` unchanged (an extra column)."""
    maps = list(maps)
    for candidate in _candidates(key):
        if candidate in METRICS:
            return candidate
        for table in maps:
            if candidate in table:
                return table[candidate]
    return key


def _candidates(key: str) -> list[str]:
    out = [key]
    for prefix in _PREFIXES:
        if key.startswith(prefix) and key != prefix:
            out.append(key[len(prefix):])
    if key.startswith("eval/"):
        out.append("eval_" + key[len("eval/"):])
    return out


@lru_cache(maxsize=1 << 14)
def family_name(key: str) -> str:
    """`canonical_name` over every family map, cached: readers call it once per logged value."""
    return canonical_name(key)


def to_number(value: Any) -> float | None:
    """A float for numbers, booleans and numeric strings (NaN included); None for anything else.

    Out of float range is kept as infinity with its sign (an integer of 400 digits, "1e400"): the value was
    logged, it is just not finite, and the diagnosis treats it as such.
    """
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, (int, float, np.integer, np.floating)):
        try:
            return float(value)
        except OverflowError:  # an int beyond 1.8e308
            return math.inf if value > 0 else -math.inf
    if isinstance(value, str):
        try:
            return float(value.strip())
        except ValueError:
            return None
    return None


STEP_LIMIT = 2**63  # steps are int64 in every table


def to_step(value: Any) -> int | None:
    """An int64 step from an int, an integral float or integer text; None for anything else (NaN, 1e400,
    2**80, 1.5, "x"): such a row has no place on the step axis and is left out by `chunk`."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (float, np.floating)):
        if not math.isfinite(value) or value != int(value):
            return None
        value = int(value)
    elif isinstance(value, str):
        if not is_int_text(value.strip()):
            return None
        value = int(value.strip()) if len(value) < 30 else STEP_LIMIT
    elif not isinstance(value, (int, np.integer)):
        return None
    return int(value) if -STEP_LIMIT <= value < STEP_LIMIT else None


BAD_STEPS = "bad_steps"  # chunk.attrs: how many rows `chunk` left out for a step that is not an int64


def map_row(raw: Mapping[str, Any], maps: Iterable[Mapping[str, str]] | Callable[[str], str] | None = None,
            overrides: Mapping[str, str] | None = None) -> tuple[dict[str, float], list[str]]:
    """Rename and coerce one step's metrics; return (row, keys whose value was not a number).

    A null value stays null (None) rather than absent, so a sparse key keeps its column, and apart from a
    logged NaN (float NaN), which `chunk` records. When two source keys land on one canonical name
    (`actor/entropy` and the old `actor/entropy_loss`), the first non-null wins.
    """
    if maps is None:
        lookup = family_name
    elif callable(maps):  # a cached name function of the reader's own (per-value speed)
        lookup = maps
    else:
        lookup = lambda k, m=list(maps): canonical_name(k, m)
    row: dict[str, float | None] = {}
    bad: list[str] = []
    for key, value in raw.items():
        name = (overrides or {}).get(key) or lookup(key)
        number = None if value is None else to_number(value)
        if number is None and value is not None:
            bad.append(key)
            continue
        if name in row and row[name] is not None and not math.isnan(row[name]):
            continue
        row[name] = number
    return row, bad


def chunk(rows: list[dict[str, Any]], seq_start: int = 0) -> pd.DataFrame:
    """Rows of {"step": int, name: float or None} -> a metrics chunk with `_seq` in arrival order.

    In the frame a null (None) and a logged NaN are both NaN, so the logged NaNs are listed in
    `frame.attrs[NAN_AT]` first: the diagnosis tells "not measured this step" from "the loss was NaN".
    A row whose step is not an int64 (NaN, 1e400, 2**80, text) is left out; `frame.attrs[BAD_STEPS]`
    counts them for the reader to report.
    """
    good = [row | {"step": step} for row in rows if (step := to_step(row.get("step"))) is not None]
    left_out, rows = len(rows) - len(good), good
    if any(not k.isascii() for row in rows for k in row):  # JSON's "\ud800" is a lone surrogate: no column name
        rows = [{k.encode("utf-8", "replace").decode() if not k.isascii() else k: v for k, v in row.items()}
                for row in rows]
    nan_at: dict[str, list[int]] = {}
    for row in rows:
        for key, value in row.items():
            if isinstance(value, float) and math.isnan(value):  # a null (None) is not a NaN
                nan_at.setdefault(key, []).append(int(row["step"]))
    frame = pd.DataFrame(rows)
    frame.attrs[NAN_AT] = nan_at
    frame.attrs[BAD_STEPS] = left_out
    if not len(frame):
        return frame
    frame["step"] = frame["step"].astype("int64")
    frame["_seq"] = np.arange(seq_start, seq_start + len(frame), dtype=np.int64)
    return frame


def parse_overrides(pairs: Iterable[str]) -> dict[str, str]:
    """`["theirs=ours", ...]` -> {"theirs": "ours"}; raises ValueError naming the bad pair."""
    out: dict[str, str] = {}
    for pair in pairs:
        theirs, sep, ours = pair.partition("=")
        if not sep or not theirs or not ours:
            raise ValueError(f"--map {pair!r}: expected theirs=ours")
        out[theirs] = ours
    return out


_STEP_RE = re.compile(r"^\d+$")


def is_int_text(text: str) -> bool:
    return bool(_STEP_RE.match(text))


_SCALED_RE = re.compile(r"^(?P<name>.+)\((?P<scale>[0-9.]+(?:e[-+]?\d+)?)\)$", re.IGNORECASE)


def unscale(key: str, value: float) -> tuple[str, float]:
    """Older verl logs `actor/lr(1e-4): 0.010`, meaning 0.010 x 1e-4: return ("actor/lr", 1e-6)."""
    m = _SCALED_RE.match(key)
    try:
        return (m["name"], value * float(m["scale"])) if m else (key, value)
    except ValueError:  # "1.2.3" matches the pattern but is no number: not a scale, a plain name
        return key, value


def merge_by_step(rows: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Rows that share a step become one (later keys win), in first-appearance order.

    The run table replaces a whole row per step, so several partial writes of one step (a validation line
    and a training line, one TensorBoard tag at a time) must be merged before they reach it.
    """
    merged: dict[int, dict[str, Any]] = {}
    for row in rows:
        step = to_step(row.get("step"))
        if step is None:
            merged.setdefault(id(row), row)  # not a step; `chunk` leaves it out and counts it
        else:
            merged.setdefault(step, {}).update(row | {"step": step})
    return list(merged.values())


def fill_from(frame: pd.DataFrame, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Complete rows for steps already in `frame` with the values already there (the new ones win)."""
    if not len(frame) or not rows:
        return rows
    steps = frame["step"].to_numpy()
    out = []
    for row in rows:
        i = int(np.searchsorted(steps, row["step"]))
        if i < len(steps) and steps[i] == row["step"]:
            old = {k: v for k, v in frame.iloc[i].items() if not (isinstance(v, float) and math.isnan(v))}
            old.pop("_seq", None)
            row = old | row
        out.append(row)
    return out


def step_chunks(known: pd.DataFrame, rows: list[dict[str, Any]], seq: int) -> tuple[list[pd.DataFrame], int]:
    """New rows of a reader -> ([metrics chunk] or [], the next `_seq`).

    Partial writes of a step are merged, and a step already in `known` (the run's table) keeps the values
    it had, because the table replaces whole rows per step.
    """
    if not rows:
        return [], seq
    rows = fill_from(known, merge_by_step(rows))
    return [chunk(rows, seq)], seq + len(rows)

