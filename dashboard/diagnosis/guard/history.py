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
away).

Rows are kept as float vectors over the columns seen so far (NaN = not logged; the logged NaNs are listed
apart), so the frame a check judges is one matrix filled from a few hundred vectors, not a DataFrame built
from a few hundred dicts: the guard builds it at every check (benchmarks/README.md, "Guard").
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

HEAD = 60  # early_level looks at steps [5, 55) at most (series.WARMUP_STEPS + the 50-step window cap)
TAIL = 300  # the recent steps at full resolution: longer than any rule's window (series.window_for caps at 50)
BINS = 120  # merged middle; even, so a pairwise merge halves it


def _grown(v: np.ndarray, width: int, fill: Any) -> np.ndarray:
    """v padded with `fill` to `width` (columns seen after v was made)."""
    if len(v) >= width:
        return v
    return np.concatenate([v, np.full(width - len(v), fill, dtype=v.dtype)])


class _Bin:
    """Consecutive steps merged: per column the sum and count of finite values, and the first non-finite value
    logged (which stands for the bin). Vectors over the history's columns; shorter ones are padded on use."""

    def __init__(self, step: int) -> None:
        self.first = self.last = step
        self.n = 0
        self.sums = np.zeros(0)
        self.counts = np.zeros(0)
        self.bad = np.zeros(0)  # the first non-finite value logged, by column (valid where has_bad)
        self.has_bad = np.zeros(0, dtype=bool)
        self._row: np.ndarray | None = None

    def _widen(self, width: int) -> None:
        self.sums, self.counts = _grown(self.sums, width, 0.0), _grown(self.counts, width, 0.0)
        self.bad, self.has_bad = _grown(self.bad, width, np.nan), _grown(self.has_bad, width, False)

    def add(self, step: int, values: np.ndarray, bad: np.ndarray) -> None:
        """values: (C,) NaN where not logged; bad: (C,) bool, a logged non-finite value."""
        self._widen(len(values))
        width = len(self.sums)
        values, bad = _grown(values, width, np.nan), _grown(bad, width, False)
        self.last, self.n, self._row = step, self.n + 1, None
        ok = np.isfinite(values)
        self.sums += np.where(ok, values, 0.0)
        self.counts += ok
        new = bad & ~self.has_bad
        self.bad[new] = values[new]
        self.has_bad |= new

    def merge(self, other: _Bin) -> None:
        width = max(len(self.sums), len(other.sums))
        self._widen(width)
        other._widen(width)
        self.last, self.n, self._row = other.last, self.n + other.n, None
        self.sums += other.sums
        self.counts += other.counts
        take = other.has_bad & ~self.has_bad
        self.bad[take] = other.bad[take]
        self.has_bad |= take

    def row(self) -> np.ndarray:
        """(C,) the mean of the finite values, the bin's non-finite value where one was logged, else NaN."""
        if self._row is None:
            with np.errstate(invalid="ignore", divide="ignore"):
                out = np.where(self.counts > 0, self.sums / np.maximum(self.counts, 1), np.nan)
            self._row = np.where(self.has_bad, self.bad, out)
        return self._row


class BoundedHistory:
    """Steps in increasing order -> a frame of at most head + bins + tail rows (see the module docstring)."""

    def __init__(self, head: int = HEAD, tail: int = TAIL, bins: int = BINS) -> None:
        if bins < 2 or bins % 2:
            raise ValueError(f"bins must be an even number >= 2, got {bins}")
        self.head_size, self.tail_size, self.max_bins = head, tail, bins
        self.columns: dict[str, int] = {}  # name -> position in every row vector, in order of first appearance
        self.head: list[tuple[int, np.ndarray]] = []
        self.tail: deque[tuple[int, np.ndarray]] = deque()
        self.bins: list[_Bin] = []
        self.width = 1  # steps per bin; doubles at each merge
        self.last_step: int | None = None
        self.steps_seen = 0
        self._nan_keys: dict[int, list[int]] = {}  # head/tail steps that logged a NaN: step -> column positions

    def add(self, step: int, row: Mapping[str, Any]) -> None:
        """Append one step. `row` holds numbers (None means not logged); a step at or before the last one
        replaces nothing and is ignored (the caller rebuilds the history on a resume)."""
        step = int(step)
        if self.last_step is not None and step <= self.last_step:
            return
        self.last_step, self.steps_seen = step, self.steps_seen + 1
        clean = [(self._column(k), float(v)) for k, v in row.items()
                 if k != "step" and v is not None and (type(v) is float or _is_number(v))]
        vec = np.full(len(self.columns), np.nan)
        nans = []
        for j, v in clean:
            vec[j] = v
            if math.isnan(v):
                nans.append(j)
        if nans:
            self._nan_keys[step] = nans
        if len(self.head) < self.head_size:
            self.head.append((step, vec))
            return
        self.tail.append((step, vec))
        if len(self.tail) > self.tail_size:
            self._to_bins(*self.tail.popleft())

    def _column(self, name: str) -> int:
        j = self.columns.get(name)
        if j is None:
            j = self.columns[name] = len(self.columns)
            # every kept row gets the new column (not logged there), so the view is one np.stack; new metric
            # names come in the first steps of a run, rarely later
            width = len(self.columns)
            self.head = [(s, _grown(v, width, np.nan)) for s, v in self.head]
            self.tail = deque((s, _grown(v, width, np.nan)) for s, v in self.tail)
        return j

    def _to_bins(self, step: int, vec: np.ndarray) -> None:
        bad = ~np.isfinite(vec) & ~np.isnan(vec)  # an inf is a logged value; a NaN only where it was logged
        for j in self._nan_keys.pop(step, ()):  # from here on the bin keeps it
            bad[j] = True
        if not self.bins or self.bins[-1].n >= self.width:
            self.bins.append(_Bin(step))
        self.bins[-1].add(step, vec, bad)
        if len(self.bins) > self.max_bins:
            merged = []
            for i in range(0, len(self.bins) - 1, 2):
                self.bins[i].merge(self.bins[i + 1])
                merged.append(self.bins[i])
            if len(self.bins) % 2:
                merged.append(self.bins[-1])
            self.bins, self.width = merged, self.width * 2

    def __len__(self) -> int:
        return len(self.head) + len(self.bins) + len(self.tail)

    def first_recent_step(self) -> int | None:
        """The first step of the full-resolution recent part (the tail, or the head while the run is short)."""
        part = self.tail or self.head
        return part[0][0] if part else None

    def _matrix(self) -> tuple[np.ndarray, np.ndarray]:
        """(steps (R,), values (R, C)): head, bins (each at its last step), tail, in step order."""
        width = len(self.columns)
        parts = [*self.head, *((b.last, _grown(b.row(), width, np.nan)) for b in self.bins), *self.tail]
        steps = np.fromiter((s for s, _ in parts), dtype=np.int64, count=len(parts))
        if not parts:
            return steps, np.empty((0, width))
        return steps, np.stack([v for _, v in parts])

    def _logged_nan(self) -> dict[int, list[int]]:
        """{step: column positions logging a NaN}, the bins' included (a bin stands at its last step)."""
        marks = dict(self._nan_keys)
        for b in self.bins:
            if b.has_bad.any():
                js = np.nonzero(b.has_bad & np.isnan(b.bad))[0].tolist()
                if js:
                    marks[b.last] = js
        return marks

    def rows(self) -> list[tuple[int, dict[str, float]]]:
        """(step, {metric: value}) in step order, without the metrics a row did not log."""
        steps, values = self._matrix()
        names = list(self.columns)
        marks = self._logged_nan()
        out = []
        for step, vec in zip(steps.tolist(), values):
            nan_ok = set(marks.get(step, ()))
            out.append((step, {names[j]: float(v) for j, v in enumerate(vec) if not math.isnan(v) or j in nan_ok}))
        return out

    def matrix(self) -> tuple[np.ndarray, np.ndarray, list[str], dict[str, set[int]]]:
        """(steps (R,) int64, values (R, C) float64 with NaN where not logged, the C metric names, {metric: steps
        whose value is a logged NaN}): the view without a DataFrame (a live guard's check reads columns of it)."""
        steps, values = self._matrix()
        names = list(self.columns)
        nan_at: dict[str, set[int]] = {}
        for step, js in self._logged_nan().items():
            for j in js:
                nan_at.setdefault(names[j], set()).add(step)
        return steps, values, names, nan_at

    def frame(self) -> tuple[pd.DataFrame, dict[str, set[int]]]:
        """(metrics frame with `step` first, {metric: steps whose value is a logged NaN})."""
        steps, values, names, nan_at = self.matrix()
        frame = pd.DataFrame(values, columns=names, copy=False)
        frame.insert(0, "step", steps)
        return frame, nan_at


def _is_number(v: Any) -> bool:
    try:
        float(v)
    except (TypeError, ValueError):
        return False
    return not isinstance(v, (str, bytes))
