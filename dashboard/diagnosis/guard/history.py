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
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

HEAD = 60  # early_level looks at steps [5, 55) at most (series.WARMUP_STEPS + the 50-step window cap)
TAIL = 300  # the recent steps at full resolution: longer than any rule's window (series.window_for caps at 50)
BINS = 120  # merged middle; even, so a pairwise merge halves it


@dataclass
class _Bin:
    first: int
    last: int
    n: int = 0
    sums: dict[str, float] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)
    bad: dict[str, float] = field(default_factory=dict)  # a logged non-finite value, by metric

    def add(self, step: int, row: Mapping[str, float]) -> None:
        self.last, self.n = step, self.n + 1
        for k, v in row.items():
            if math.isfinite(v):
                self.sums[k] = self.sums.get(k, 0.0) + v
                self.counts[k] = self.counts.get(k, 0) + 1
            else:
                self.bad.setdefault(k, v)

    def merge(self, other: _Bin) -> None:
        self.last, self.n = other.last, self.n + other.n
        for k, v in other.sums.items():
            self.sums[k] = self.sums.get(k, 0.0) + v
            self.counts[k] = self.counts.get(k, 0) + other.counts[k]
        for k, v in other.bad.items():
            self.bad.setdefault(k, v)

    def row(self) -> dict[str, float]:
        out = {k: s / self.counts[k] for k, s in self.sums.items()}
        out.update(self.bad)
        return out


class BoundedHistory:
    """Steps in increasing order -> a frame of at most head + bins + tail rows (see the module docstring)."""

    def __init__(self, head: int = HEAD, tail: int = TAIL, bins: int = BINS) -> None:
        if bins < 2 or bins % 2:
            raise ValueError(f"bins must be an even number >= 2, got {bins}")
        self.head_size, self.tail_size, self.max_bins = head, tail, bins
        self.head: list[tuple[int, dict[str, float]]] = []
        self.tail: deque[tuple[int, dict[str, float]]] = deque()
        self.bins: list[_Bin] = []
        self.width = 1  # steps per bin; doubles at each merge
        self.last_step: int | None = None
        self.steps_seen = 0
        self._nan_keys: dict[int, list[str]] = {}  # head/tail steps that logged a NaN: step -> metrics

    def add(self, step: int, row: Mapping[str, Any]) -> None:
        """Append one step. `row` holds numbers (None means not logged); a step at or before the last one
        replaces nothing and is ignored (the caller rebuilds the history on a resume)."""
        step = int(step)
        if self.last_step is not None and step <= self.last_step:
            return
        clean = {k: float(v) for k, v in row.items() if k != "step" and v is not None and _is_number(v)}
        self.last_step, self.steps_seen = step, self.steps_seen + 1
        if nans := [k for k, v in clean.items() if math.isnan(v)]:
            self._nan_keys[step] = nans
        if len(self.head) < self.head_size:
            self.head.append((step, clean))
            return
        self.tail.append((step, clean))
        if len(self.tail) > self.tail_size:
            self._to_bins(*self.tail.popleft())

    def _to_bins(self, step: int, row: dict[str, float]) -> None:
        self._nan_keys.pop(step, None)  # from here on the bin keeps it
        if not self.bins or self.bins[-1].n >= self.width:
            self.bins.append(_Bin(step, step))
        self.bins[-1].add(step, row)
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

    def rows(self) -> list[tuple[int, dict[str, float]]]:
        """(step, row) in step order; a bin stands at its last step."""
        return [*self.head, *((b.last, b.row()) for b in self.bins), *self.tail]

    def frame(self) -> tuple[pd.DataFrame, dict[str, set[int]]]:
        """(metrics frame with `step` first, {metric: steps whose value is a logged NaN})."""
        rows = self.rows()
        frame = pd.DataFrame.from_records([r for _, r in rows])
        frame.insert(0, "step", pd.array([s for s, _ in rows], dtype="int64"))
        nan_at: dict[str, set[int]] = {}
        marks = [(s, ks) for s, ks in self._nan_keys.items()]
        marks += [(b.last, [k for k, v in b.bad.items() if math.isnan(v)]) for b in self.bins if b.bad]
        for step, keys in marks:
            for k in keys:
                nan_at.setdefault(k, set()).add(step)
        return frame, nan_at


def _is_number(v: Any) -> bool:
    try:
        float(v)
    except (TypeError, ValueError):
        return False
    return not isinstance(v, (str, bytes))
