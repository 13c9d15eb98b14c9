"""Scalar points in arrival order -> one row per step, with numpy: the shared back end of the binary readers.

A reader appends (step, tag, value) points per record with as little Python per value as it can (list
comprehensions over a record's values); `pivot` then builds the chunk in a few array operations: the last
write of a (step, column) wins, a logged NaN is listed in `attrs[NAN_AT]`, a null (logged as None) is not.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from collectors.readers.keymap import TRAINER_SUMMARY_KEYS, family_name
from collectors.run import NAN_AT

WALL = "wall_time"


@dataclass
class Points:
    """Scalar points in arrival order: `codes[i]` indexes `tags`; `steps`/`values` per point."""

    tags: list[str] = field(default_factory=list)
    codes: list[int] = field(default_factory=list)
    steps: list[int] = field(default_factory=list)
    values: list[float] = field(default_factory=list)
    texts: list[tuple[str, str]] = field(default_factory=list)  # (tag, text) of config text summaries
    nulls: list[int] = field(default_factory=list)  # positions whose value was logged as null, not NaN
    undecodable: int = 0

    def add(self, step: int, tags: list[str], values: list) -> None:
        """One record's values at `step`; a None value is a null (not measured), kept apart from a NaN."""
        index = self._index
        try:
            codes = [index[t] for t in tags]
        except KeyError:
            codes = [self.code(t) for t in tags]
        if None in values:
            start = len(self.values)
            self.nulls += [start + i for i, v in enumerate(values) if v is None]
        self.codes += codes
        self.values += values
        self.steps += [step] * len(codes)

    def code(self, tag: str) -> int:
        index = self._index
        if tag not in index:
            index[tag] = len(self.tags)
            self.tags.append(tag)
        return index[tag]

    def __post_init__(self) -> None:
        self._index: dict[str, int] = {t: i for i, t in enumerate(self.tags)}


def column_of(tag: str) -> str | None:
    """Our column for a tag; None for the trainer's end-of-training summary (`train/train_runtime`, ...),
    which is not a step's metric (the trainer_state.json reader skips it too)."""
    if tag == WALL:
        return WALL
    bare = tag.split("/", 1)[1] if tag.startswith("train/") else tag
    if bare in TRAINER_SUMMARY_KEYS:
        return None
    return family_name(tag)


def pivot(points: Points, column: Callable[[str], str | None] = column_of) -> pd.DataFrame:
    """Points -> one row per step (sorted), a column per `column(tag)` (None drops the tag); `attrs[NAN_AT]`
    lists logged NaNs.

    Hand-worked: points (1, a, 0.5), (2, a, 0.7), (1, a, 0.6) -> step 1: a = 0.6 (the last write), step 2: 0.7.
    """
    if not points.steps:
        return pd.DataFrame()
    steps = np.asarray(points.steps, dtype=np.int64)
    codes = np.asarray(points.codes, dtype=np.int64)
    values = np.asarray(points.values, dtype=np.float64)
    names = [column(t) for t in points.tags]
    columns = list(dict.fromkeys(n for n in names if n is not None))
    col_of_code = np.array([columns.index(n) if n is not None else -1 for n in names], dtype=np.int64)
    cols = col_of_code[codes]
    known = cols >= 0
    steps, cols, values = steps[known], cols[known], values[known]
    if not len(steps):
        return pd.DataFrame()
    uniq, row = np.unique(steps, return_inverse=True)
    key = row * len(columns) + cols
    _, first_from_end = np.unique(key[::-1], return_index=True)  # the last write of each (step, column)
    keep = len(key) - 1 - first_from_end
    table = np.full((len(uniq), len(columns)), np.nan)
    table[row[keep], cols[keep]] = values[keep]
    frame = pd.DataFrame(table, columns=columns)
    frame.insert(0, "step", uniq)
    logged_nan = np.isnan(values)
    if points.nulls:
        null = np.zeros(len(points.values), dtype=bool)
        null[points.nulls] = True
        logged_nan &= ~null[known]
    nan = keep[logged_nan[keep]]
    nan_at: dict[str, list[int]] = {}
    for c, s in zip(cols[nan].tolist(), steps[nan].tolist(), strict=True):
        nan_at.setdefault(columns[c], []).append(s)
    frame.attrs[NAN_AT] = nan_at
    return frame


def fill_known(frame: pd.DataFrame, known: pd.DataFrame) -> pd.DataFrame:
    """Complete the new rows of steps already in `known` (the run's table) with the values there: the table
    replaces whole rows, and a step's tags may arrive over two refreshes. A NaN logged now stays NaN."""
    if not len(known) or not len(frame):
        return frame
    old = known.set_index("step")
    overlap = frame["step"].isin(old.index).to_numpy()
    if not overlap.any():
        return frame
    nan_at = frame.attrs.get(NAN_AT, {})
    frame = frame.copy()
    before = old.loc[frame.loc[overlap, "step"]]
    for col in before.columns:
        if col == "_seq":
            continue
        mine = frame[col].to_numpy()[overlap] if col in frame else np.full(overlap.sum(), np.nan)
        logged = np.isin(frame.loc[overlap, "step"].to_numpy(), nan_at.get(col, []))
        fill = np.isnan(mine) & ~logged
        mine = np.where(fill, before[col].to_numpy(dtype=np.float64), mine)
        if col not in frame:
            frame[col] = np.nan
        frame.loc[overlap, col] = mine
    frame.attrs[NAN_AT] = nan_at
    return frame
