"""A bounded-resolution view of a growing run: the first steps and the recent steps at full resolution,
everything between merged into a fixed number of bins, so judging a run costs the same at step 100 and at
step 1,000,000.

Why these three parts: the rules compare a run with its own start (early levels, the first-step ratio), and
a live guard cares most about what happens now; the middle only needs its shape. Bins merge pairwise when
they fill up (widths double), so adding a step costs O(metrics) amortised and the view holds at most
HEAD + BINS + TAIL rows. A run shorter than that is held whole: the view then is the run.

A row is a dict {metric: value}; a key left out is "not logged this step", a NaN or inf present is a value
that was logged. A bin keeps that difference: its value is the mean of the finite values, unless one of its
steps logged a non-finite value, which then stands for the whole bin (a NaN in the history never averages
away). A bin stands at its last step.

`add` only queues the row: a trainer calls it after every step, where even one small numpy call costs tens of
microseconds (caches cold). Queued rows become one (k, C) float matrix when the history is read (or when
PENDING of them wait), and move through head, tail and bins as a block: the head is an array, the tail a block
written forward, the bins arrays of per-column sums, counts and first non-finite values, so the view a check
judges is a few numpy calls, whatever the number of bins (benchmarks/README.md, "Guard"). A bin's sum adds
its values in step order, as one running sum per bin would: the view is the same, to the last bit, whenever
the history is read.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

HEAD = 60  # early_level looks at steps [5, 55) at most (series.WARMUP_STEPS + the 50-step window cap)
TAIL = 300  # the recent steps at full resolution: longer than any rule's window (series.window_for caps at 50)
BINS = 120  # merged middle; even, so a pairwise merge halves it
PENDING = 64  # rows queued by `add` before they are converted unread: memory stays bounded between reads
MAX_PLANS = 256  # key sets remembered by the row conversion (a trainer logs one or a few)
_PLAIN = frozenset({float, np.float64})  # value types taken as they are, without a check per value


@dataclass
class _Rows:
    """k steps in order. steps (k,) int64; values (k, C) float64, NaN where not logged (or a logged NaN);
    nan (k, C) bool, a logged NaN."""

    steps: np.ndarray
    values: np.ndarray
    nan: np.ndarray

    def __len__(self) -> int:
        return len(self.steps)

    def __getitem__(self, part: slice) -> _Rows:
        return _Rows(self.steps[part], self.values[part], self.nan[part])

    def widened(self, width: int) -> _Rows:
        """The same rows over `width` columns (the new ones not logged)."""
        extra = width - self.values.shape[1]
        return _Rows(self.steps, _pad(self.values, extra, np.nan), _pad(self.nan, extra, False))


def _empty(width: int) -> _Rows:
    return _Rows(np.empty(0, np.int64), np.empty((0, width)), np.empty((0, width), bool))


def _cat(parts: list[_Rows]) -> _Rows:
    return _Rows(*(np.concatenate([getattr(p, f) for p in parts]) for f in ("steps", "values", "nan")))


def _pad(a: np.ndarray, extra: int, fill: Any) -> np.ndarray:
    """(n, C) -> (n, C + extra), the new columns `fill`."""
    return np.concatenate([a, np.full((len(a), extra), fill, dtype=a.dtype)], axis=1)


def _to_rows(queued: list[tuple[int, Mapping[str, Any]]], columns: dict[str, int],
             plans: dict[tuple, np.ndarray | None]) -> _Rows:
    """Queued (step, row) -> their matrix over `columns`, which gains the new names in order of first
    appearance. None and non-numbers are not logged; a key "step" is not a metric. A row of plain floats is
    taken whole through `plans` (its keys -> their column positions; None where a key is "step"): a
    trainer logs the same keys at every step, so most rows cost no Python work per value."""
    plain: dict[tuple, tuple[np.ndarray, list[int], list[list[float]]]] = {}  # keys -> (plan, rows, values)
    at, cols, vals = [], [], []  # the other rows, value by value
    for i, (_, row) in enumerate(queued):
        values = list(row.values())
        if _PLAIN.issuperset(map(type, values)):
            keys = tuple(row)
            plan = plans.get(keys, False)
            if plan is False:
                if len(plans) >= MAX_PLANS:
                    plans.clear()
                plan = plans[keys] = None if "step" in row else np.array([_column(columns, k) for k in keys], np.intp)
            if plan is not None:
                group = plain.setdefault(keys, (plan, [], []))
                group[1].append(i)
                group[2].append(values)
                continue
        for k, v in row.items():
            if k != "step" and v is not None and (f := v if type(v) is float else _as_float(v)) is not None:
                at.append(i)
                cols.append(_column(columns, k))
                vals.append(f)
    steps = np.fromiter((s for s, _ in queued), dtype=np.int64, count=len(queued))
    out = _Rows(steps, np.full((len(queued), len(columns)), np.nan), np.zeros((len(queued), len(columns)), bool))
    for plan, rows, values in plain.values():
        _put(out, np.array(rows)[:, None], plan, np.array(values, dtype=np.float64))
    if vals:
        _put(out, np.array(at), np.array(cols), np.array(vals, dtype=np.float64))
    return out


def _column(columns: dict[str, int], name: str) -> int:
    j = columns.get(name)
    if j is None:
        j = columns[name] = len(columns)
    return j


def _put(rows: _Rows, r: np.ndarray, c: np.ndarray, v: np.ndarray) -> None:
    """rows.values[r, c] = v (indices broadcast), the NaNs among v marked as logged."""
    rows.values[r, c] = v
    logged_nan = np.isnan(v)
    if logged_nan.any():
        rows.nan[r, c] = logged_nan


class _Tail:
    """The last `size` rows, in a block with room for PENDING more after them: new rows are written after the
    held ones, the oldest leave by moving a start index, and the held rows move back to the block's start only
    when that room is used up (once per PENDING rows at most)."""

    def __init__(self, size: int, width: int) -> None:
        self.size, room = size, size + PENDING
        self.block = _Rows(np.zeros(room, np.int64), np.full((room, width), np.nan), np.zeros((room, width), bool))
        self.lo = self.hi = 0  # the held rows: block[lo:hi]

    def widen(self, width: int) -> None:
        self.block = self.block.widened(width)

    def view(self) -> _Rows:
        return self.block[self.lo:self.hi]

    def push(self, new: _Rows) -> _Rows:
        """Append `new` (at most PENDING rows); returns the rows that no longer fit, oldest first, as a view of
        the block that the next push may overwrite."""
        k, b = len(new), self.block
        if self.hi + k > len(b):
            n = self.hi - self.lo
            b.steps[:n], b.values[:n], b.nan[:n] = b.steps[self.lo:self.hi], b.values[self.lo:self.hi], \
                b.nan[self.lo:self.hi]
            self.lo, self.hi = 0, n
        b.steps[self.hi:self.hi + k], b.values[self.hi:self.hi + k], b.nan[self.hi:self.hi + k] = \
            new.steps, new.values, new.nan
        self.hi += k
        out = max(0, self.hi - self.lo - self.size)
        self.lo += out
        return b[self.lo - out:self.lo]

    def first_step(self) -> int | None:
        return int(self.block.steps[self.lo]) if self.hi > self.lo else None


class _Bins:
    """The merged middle. The i-th row binned (from 0) lies in bin i // width; every bin but the last is full,
    and when all `size` are full the next row first merges them pairwise (width doubles). Per bin and column:
    the sum and count of finite values, the first non-finite value logged (`bad`, NaN where `has_bad` is
    False), and the bin's last step. Arrays (size, C), of which the first `n` rows are used."""

    def __init__(self, size: int, width: int) -> None:
        self.size, self.width, self.binned = size, 1, 0
        self.sums, self.counts = np.zeros((size, width)), np.zeros((size, width))
        self.bad, self.has_bad = np.full((size, width), np.nan), np.zeros((size, width), dtype=bool)
        self.last = np.zeros(size, np.int64)

    @property
    def n(self) -> int:
        return -(-self.binned // self.width)

    def widen(self, width: int) -> None:
        extra = width - self.sums.shape[1]
        self.sums, self.counts = _pad(self.sums, extra, 0.0), _pad(self.counts, extra, 0.0)
        self.bad, self.has_bad = _pad(self.bad, extra, np.nan), _pad(self.has_bad, extra, False)

    def add(self, rows: _Rows) -> None:
        """Bin `rows`, a block at a time between merges."""
        done = 0
        while done < len(rows):
            if self.binned == self.size * self.width:
                self._merge()
            take = min(len(rows) - done, self.size * self.width - self.binned)
            self._fill(rows[done:done + take])
            done += take

    def _fill(self, rows: _Rows) -> None:
        """Rows that fit in the bins at the current width: the last bin's room, then new bins."""
        w, k = self.width, len(rows)
        lo, e = divmod(self.binned, w)  # the block starts e rows into bin lo
        starts = [0, *range(w - e, k, w)]  # where each bin's rows begin in the block
        hi = lo + len(starts)
        seg, local = np.divmod(np.arange(e, e + k), w)  # (k,) each row's bin (from lo) and place in it ...
        local[:w - e] -= e  # ... counted from the block's start
        ok = np.isfinite(rows.values)
        # a bin's sum adds its values one step at a time, in step order, as they came: a grid of the bin's sum
        # so far, then its rows, summed by accumulate (strictly in order; a plain sum may pair them up)
        grid = np.zeros((len(starts), min(k, w) + 1, rows.values.shape[1]))
        if e:
            grid[0, 0] = self.sums[lo]
        grid[seg, local + 1] = np.where(ok, rows.values, 0.0)
        self.sums[lo:hi] = np.add.accumulate(grid, axis=1)[:, -1]
        counts = np.add.reduceat(ok, starts, axis=0, dtype=np.float64)
        if e:
            counts[0] += self.counts[lo]
        self.counts[lo:hi] = counts
        self.last[lo:hi] = rows.steps[[s - 1 for s in starts[1:]] + [k - 1]]
        bad = np.isinf(rows.values) | rows.nan  # an inf, or a NaN that was logged
        if bad.any():
            self._mark_bad(lo + seg, rows.values, bad)
        self.binned += k

    def _mark_bad(self, bin_of: np.ndarray, values: np.ndarray, bad: np.ndarray) -> None:
        """Bins without a non-finite value in a column take the first one of their new rows."""
        r, c = np.nonzero(bad)  # row-major: the first occurrence of a (bin, column) is its earliest row
        _, first = np.unique(bin_of[r] * bad.shape[1] + c, return_index=True)
        b, c, v = bin_of[r[first]], c[first], values[r[first], c[first]]
        take = ~self.has_bad[b, c]
        self.bad[b[take], c[take]] = v[take]
        self.has_bad[b, c] = True

    def _merge(self) -> None:
        """All bins full: neighbours pairwise into the first half (the left one's non-finite value first)."""
        left, right, half = slice(0, self.size, 2), slice(1, self.size, 2), self.size // 2
        self.sums[:half] = self.sums[left] + self.sums[right]
        self.counts[:half] = self.counts[left] + self.counts[right]
        self.bad[:half] = np.where(self.has_bad[left], self.bad[left], self.bad[right])
        self.has_bad[:half] = self.has_bad[left] | self.has_bad[right]
        self.last[:half] = self.last[right].copy()
        self.bad[half:], self.has_bad[half:] = np.nan, False  # the bins to come start clean
        self.width *= 2

    def view(self) -> _Rows:
        """One row per bin at its last step: the mean of the finite values, the first non-finite value logged
        where there is one, NaN where nothing was logged."""
        n = self.n
        sums, counts, bad, has_bad = self.sums[:n], self.counts[:n], self.bad[:n], self.has_bad[:n]
        values = np.divide(sums, counts, out=np.full(sums.shape, np.nan), where=counts > 0)
        np.copyto(values, bad, where=has_bad)
        return _Rows(self.last[:n], values, has_bad & np.isnan(bad))


class BoundedHistory:
    """Steps in increasing order -> a frame of at most head + bins + tail rows (see the module docstring)."""

    def __init__(self, head: int = HEAD, tail: int = TAIL, bins: int = BINS) -> None:
        if bins < 2 or bins % 2:
            raise ValueError(f"bins must be an even number >= 2, got {bins}")
        self.head_size, self.tail_size, self.max_bins = head, tail, bins
        self.last_step: int | None = None
        self.steps_seen = 0
        self._queued: list[tuple[int, Mapping[str, Any]]] = []
        self._columns: dict[str, int] = {}  # name -> position in every row vector, in order of first appearance
        self._plans: dict[tuple, np.ndarray | None] = {}  # see _to_rows
        self._head = _empty(0)
        self._tail = _Tail(max(0, tail), 0)
        self._bins = _Bins(bins, 0)

    def add(self, step: int, row: Mapping[str, Any]) -> None:
        """Append one step. `row` holds numbers (None means not logged); a step at or before the last one
        replaces nothing and is ignored (the caller rebuilds the history on a resume). The row is copied and
        read later (see the module docstring)."""
        step = int(step)
        if self.last_step is not None and step <= self.last_step:
            return
        self.last_step, self.steps_seen = step, self.steps_seen + 1
        self._queued.append((step, dict(row)))
        if len(self._queued) >= PENDING:
            self._flush()

    def _flush(self) -> None:
        """The queued rows into head, tail and bins, as one block."""
        if not self._queued:
            return
        queued, self._queued = self._queued, []  # taken first: a value float() raises on loses this block only
        rows = _to_rows(queued, self._columns, self._plans)
        if rows.values.shape[1] > self._head.values.shape[1]:
            self._widen(rows.values.shape[1])
        free = max(0, self.head_size - len(self._head))
        if free:
            self._head = _cat([self._head, rows[:free]])
            rows = rows[free:]
        if len(rows):
            out = self._tail.push(rows)
            if len(out):
                self._bins.add(out)

    def _widen(self, width: int) -> None:
        """Every kept row gets the new columns (not logged there), so the view is one concatenation; new metric
        names come in the first steps of a run, rarely later."""
        self._head = self._head.widened(width)
        self._tail.widen(width)
        self._bins.widen(width)

    @property
    def columns(self) -> dict[str, int]:
        """name -> position in the view's columns, in order of first appearance."""
        self._flush()
        return self._columns

    @property
    def width(self) -> int:
        """Steps per bin (doubles at each merge)."""
        self._flush()
        return self._bins.width

    def __len__(self) -> int:
        self._flush()
        return len(self._head) + self._bins.n + len(self._tail.view())

    def first_recent_step(self) -> int | None:
        """The first step of the full-resolution recent part (the tail, or the head while the run is short)."""
        self._flush()
        step = self._tail.first_step()
        if step is None and len(self._head):
            step = int(self._head.steps[0])
        return step

    def _parts(self) -> list[_Rows]:
        """head, bins (each at its last step), tail: the view in step order, in a few blocks."""
        self._flush()
        return [self._head, self._bins.view(), self._tail.view()]

    def _logged_nan(self, parts: list[_Rows]) -> dict[int, list[int]]:
        """{step: column positions logging a NaN}, the bins' included."""
        marks: dict[int, list[int]] = {}
        for p in parts:
            r, c = np.nonzero(p.nan)
            for step, j in zip(p.steps[r].tolist(), c.tolist()):
                marks.setdefault(step, []).append(j)
        return marks

    def rows(self) -> list[tuple[int, dict[str, float]]]:
        """(step, {metric: value}) in step order, without the metrics a row did not log."""
        parts = self._parts()
        view = _cat(parts)
        names = list(self._columns)
        marks = self._logged_nan(parts)
        out = []
        for step, vec in zip(view.steps.tolist(), view.values):
            nan_ok = set(marks.get(step, ()))
            out.append((step, {names[j]: float(v) for j, v in enumerate(vec) if not math.isnan(v) or j in nan_ok}))
        return out

    def matrix(self) -> tuple[np.ndarray, np.ndarray, list[str], dict[str, set[int]]]:
        """(steps (R,) int64, values (R, C) float64 with NaN where not logged, the C metric names, {metric: steps
        whose value is a logged NaN}): the view without a DataFrame (a live guard's check reads columns of it)."""
        parts = self._parts()
        steps = np.concatenate([p.steps for p in parts])
        values = np.concatenate([p.values for p in parts])
        names = list(self._columns)
        nan_at: dict[str, set[int]] = {}
        for step, js in self._logged_nan(parts).items():
            for j in js:
                nan_at.setdefault(names[j], set()).add(step)
        return steps, values, names, nan_at

    def frame(self) -> tuple[pd.DataFrame, dict[str, set[int]]]:
        """(metrics frame with `step` first, {metric: steps whose value is a logged NaN})."""
        steps, values, names, nan_at = self.matrix()
        frame = pd.DataFrame(values, columns=names, copy=False)
        frame.insert(0, "step", steps)
        return frame, nan_at


def _as_float(v: Any) -> float | None:
    """v as a float; None for what is not a number (strings and bytes included). An integer beyond the float
    range is logged as +-inf (a value that overflowed), never an error that would lose the queued rows."""
    if isinstance(v, (str, bytes)):
        return None
    try:
        return float(v)
    except OverflowError:
        return (math.inf if v > 0 else -math.inf) if isinstance(v, int) else None
    except (TypeError, ValueError):
        return None
