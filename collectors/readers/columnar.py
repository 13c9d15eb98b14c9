"""Scalar points in arrival order -> one row per step, with numpy: the shared back end of the binary readers.

A reader appends (step, tag, value) points per record with as little Python per value as it can (list
comprehensions over a record's values); `pivot` then builds the chunk in a few array operations: the last
write of a (step, column) wins, a logged NaN is listed in `attrs[NAN_AT]`, a null (logged as None) is not.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from collectors.readers.keymap import TRAINER_SUMMARY_KEYS, family_name, to_number
from collectors.run import NAN_AT

WALL = "wall_time"


@dataclass
class Points:
    """Scalar points in arrival order: `codes[i]` indexes `tags`; `steps`/`values` per point, `orders` the
    number of the record (event) that wrote it, which decides the last write. Points come one record at a
    time (`add`, Python lists) or as numpy blocks of many records (`add_block`)."""

    tags: list[str] = field(default_factory=list)
    codes: list[int] = field(default_factory=list)
    steps: list[int] = field(default_factory=list)
    values: list[float] = field(default_factory=list)
    orders: list[int] = field(default_factory=list)
    blocks: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = field(default_factory=list)
    texts: list[tuple[str, str]] = field(default_factory=list)  # (tag, text) of config text summaries
    nulls: list[int] = field(default_factory=list)  # list positions whose value was logged as null, not NaN
    undecodable: int = 0
    events: int = 0  # records numbered so far

    def add(self, step: int, tags: list[str], values: list, order: int | None = None) -> None:
        """One record's values at `step` (`order`: its record number, when already numbered); a None value
        is a null (not measured), kept apart from a NaN."""
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
        self.orders += [self.next_event() if order is None else order] * len(codes)

    def add_block(self, steps: np.ndarray, orders: np.ndarray, tags: list[str], values: np.ndarray) -> None:
        """Records that hold the same tags: `values[i, j]` is tag j of the record numbered `orders[i]`."""
        n, k = values.shape
        codes = np.array([self.code(t) for t in tags], dtype=np.int64)
        self.blocks.append((np.repeat(steps, k), np.tile(codes, n), values.reshape(-1).astype(np.float64),
                            np.repeat(orders, k)))

    def add_arrays(self, steps: np.ndarray, codes: np.ndarray, values: np.ndarray, orders: np.ndarray) -> None:
        """Points given as arrays, one entry per point (codes from `code`)."""
        self.blocks.append((steps, codes, values, orders))

    def next_event(self) -> int:
        self.events += 1
        return self.events - 1

    def mark(self) -> tuple[int, int]:
        return len(self.steps), len(self.blocks)

    def step_extent(self, since: tuple[int, int] = (0, 0)) -> tuple[int, int] | None:
        """(lowest, highest) step of the points added after `since` (a `mark()`), or None."""
        parts = [np.asarray(self.steps[since[0]:], dtype=np.int64)] + [b[0] for b in self.blocks[since[1]:]]
        parts = [x for x in parts if len(x)]
        if not parts:
            return None
        return min(int(x.min()) for x in parts), max(int(x.max()) for x in parts)

    def arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(steps, codes, values, orders) of every point; the list points first, so `nulls` index them."""
        try:
            values = np.asarray(self.values, dtype=np.float64)
        except OverflowError:  # an integer beyond float (10**400): a signed infinity, as in every reader
            values = np.array([math.nan if v is None else to_number(v) for v in self.values], dtype=np.float64)
        parts = [(np.asarray(self.steps, dtype=np.int64), np.asarray(self.codes, dtype=np.int64),
                  values, np.asarray(self.orders, dtype=np.int64)), *self.blocks]
        return tuple(np.concatenate([p[i] for p in parts]) for i in range(4))  # type: ignore[return-value]

    def code(self, tag: str) -> int:
        index = self._index
        if tag not in index:
            index[tag] = len(self.tags)
            self.tags.append(tag)
        return index[tag]

    def __post_init__(self) -> None:
        self._index: dict[str, int] = {t: i for i, t in enumerate(self.tags)}


OWN_COLUMNS = ("step", "_seq")  # the table's own: a tag or key renamed to one of them is left out, not a metric


def own_column_tags(points: Points, column: Callable[[str], str | None]) -> list[str]:
    """The tags that `column` names like a column of the table's own (`train/step` -> step): left out of the
    metrics by `pivot`, for the reader to say so."""
    return [t for t in points.tags if column(t) in OWN_COLUMNS]


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
    steps, codes, values, orders = points.arrays()
    if not len(steps):
        return pd.DataFrame()
    names = [None if (n := column(t)) in OWN_COLUMNS else n for t in points.tags]  # a tag `train/step`: no metric
    columns = list(dict.fromkeys(n for n in names if n is not None))
    where = {n: i for i, n in enumerate(columns)}  # not columns.index: that is O(tags^2), 3 s at 20,000 tags
    col_of_code = np.array([where[n] if n is not None else -1 for n in names], dtype=np.int64)
    cols = col_of_code[codes]
    known = cols >= 0
    at = None if known.all() else np.flatnonzero(known)  # the points of kept tags (None: all of them)
    if at is not None and not len(at):
        return pd.DataFrame()
    uniq, row = _rows(steps if at is None else steps[at])
    key = row * len(columns) + (cols if at is None else cols[at])
    keep = _last_writes(key, lambda: orders if at is None else orders[at], len(uniq) * len(columns))
    if keep is not None:
        key, at = key[keep], keep if at is None else at[keep]
    taken = values if at is None else values[at]  # the value of each cell written, in `key` order
    table = np.full(len(uniq) * len(columns), np.nan)
    table[key] = taken
    frame = pd.DataFrame(table.reshape(len(uniq), len(columns)), columns=columns)
    frame.insert(0, "step", uniq)
    nan = np.isnan(taken)  # a logged NaN, unless the point was a null (not measured)
    if points.nulls:
        null = np.zeros(len(values), dtype=bool)
        null[points.nulls] = True
        nan &= ~(null if at is None else null[at])
    nan_at: dict[str, list[int]] = {}
    for k in np.sort(key[nan]).tolist():  # by step, then column
        nan_at.setdefault(columns[k % len(columns)], []).append(int(uniq[k // len(columns)]))
    frame.attrs[NAN_AT] = nan_at
    return frame


def _rows(steps: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(the distinct steps sorted, each point's row among them); hashed, so O(points) plus a sort of the
    distinct steps (np.unique sorts every point)."""
    codes, distinct = pd.factorize(steps)
    order = np.argsort(distinct, kind="stable")
    rank = np.empty(len(order), dtype=np.int64)
    rank[order] = np.arange(len(order))
    return np.asarray(distinct)[order], rank[codes]


def _last_writes(key: np.ndarray, orders: Callable[[], np.ndarray], cells: int) -> np.ndarray | None:
    """Which points to keep: the last write (highest order) of each key; None when that is every point
    (the common case: each step logs each tag once), found with one count instead of a sort."""
    if cells <= 1 << 26 and np.bincount(key, minlength=cells).max(initial=0) <= 1:
        return None
    by_key = np.lexsort((orders(), key))  # each (step, column) together, its writes in record order
    sorted_key = key[by_key]
    return by_key[np.append(sorted_key[1:] != sorted_key[:-1], True)]  # the last write of each


def new_chunk(points: Points, known: pd.DataFrame, seq: int,
              column: Callable[[str], str | None] = column_of) -> tuple[list[pd.DataFrame], int]:
    """What a binary reader's refresh returns for the points it read: ([their rows, completed with the
    known table's values of the same steps and numbered from `seq` in `_seq`], the next seq); [] without
    rows."""
    frame = pivot(points, column)
    if not len(frame):
        return [], seq
    frame = fill_known(frame, known)
    frame["_seq"] = range(seq, seq + len(frame))
    return [frame], seq + len(frame)


def fill_known(frame: pd.DataFrame, known: pd.DataFrame) -> pd.DataFrame:
    """Complete the new rows of steps already in `known` (the run's table, sorted by step) with the values
    there: the table replaces whole rows, and a step's tags may arrive over two refreshes. A NaN logged now
    stays NaN. Costs O(new rows x log(known rows)): a live refresh does not grow with the run."""
    if not len(known) or not len(frame):
        return frame
    steps = known["step"].to_numpy()
    new = frame["step"].to_numpy()
    at = np.minimum(np.searchsorted(steps, new), len(steps) - 1)
    overlap = steps[at] == new
    if not overlap.any():
        return frame
    nan_at = frame.attrs.get(NAN_AT, {})
    frame = frame.copy()
    rows = at[overlap]
    for col in known.columns:
        if col in ("step", "_seq"):
            continue
        before = known[col].to_numpy(dtype=np.float64)[rows]
        mine = frame[col].to_numpy()[overlap] if col in frame else np.full(len(rows), np.nan)
        logged = np.isin(new[overlap], nan_at.get(col, []))
        if col not in frame:
            frame[col] = np.nan
        frame.loc[overlap, col] = np.where(np.isnan(mine) & ~logged, before, mine)
    frame.attrs[NAN_AT] = nan_at
    return frame
