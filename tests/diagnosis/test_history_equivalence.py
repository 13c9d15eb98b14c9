"""BoundedHistory (rows queued, converted in blocks; head, tail and bins as arrays) gives the same view as the
implementation it replaced, kept below as `_ReferenceHistory` (frozen copy of bde1013): the same steps, values
bit for bit, names, logged-NaN marks and rows, on random runs (NaN, inf, None, strings, keys appearing late, steps
skipped, repeated or going back) read at random moments, over many merges, and on every sample run."""

from __future__ import annotations

import math
import random
from collections import deque
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd
import pytest
from helpers.paths import REPO
from hypothesis import given, settings
from hypothesis import strategies as st

from collectors import load_run
from dashboard.diagnosis.guard import history
from dashboard.diagnosis.guard.history import BINS, HEAD, TAIL, BoundedHistory

SAMPLES = REPO / "sample_runs"
# values near 1e308 overflow the bins' sums, in both implementations alike
pytestmark = pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning",
                                        "ignore:invalid value encountered:RuntimeWarning")


def assert_same(new: BoundedHistory, ref: _ReferenceHistory) -> None:
    """Every reading of the two histories equal: values bit for bit (NaN payloads and signed zeros included)."""
    steps, values, names, nan_at = new.matrix()
    r_steps, r_values, r_names, r_nan_at = ref.matrix()
    assert steps.dtype == r_steps.dtype == np.int64 and steps.tolist() == r_steps.tolist()
    assert values.dtype == r_values.dtype == np.float64 and values.shape == r_values.shape
    assert np.array_equal(np.ascontiguousarray(values).view(np.uint64), np.ascontiguousarray(r_values).view(np.uint64))
    assert names == r_names and nan_at == r_nan_at
    assert same_rows(new.rows(), ref.rows())
    assert len(new) == len(ref) and new.first_recent_step() == ref.first_recent_step()
    assert (new.last_step, new.steps_seen, new.columns, new.width) == (ref.last_step, ref.steps_seen, ref.columns, ref.width)


def same_rows(rows: list, ref_rows: list) -> bool:
    """repr tells a NaN and -0.0 apart, where == would not."""
    return [(s, list(r), [repr(v) for v in r.values()]) for s, r in rows] == \
        [(s, list(r), [repr(v) for v in r.values()]) for s, r in ref_rows]


ODD_VALUES = [None, "1.5", "abc", b"2", [1.0], 1 + 2j, float("nan"), np.nan, -float("nan"), float("inf"),
              -float("inf"), 0.0, -0.0, 1e308, -1e308, 5e-324, True, False, 7, -3, np.float32(0.1), np.int64(4),
              np.float64("nan"), np.float32("inf")]


def random_value(rng: random.Random) -> Any:
    """Mostly plain floats of mixed scales; sometimes a value to skip or a non-finite one."""
    if rng.random() < 0.8:
        return rng.gauss(0.0, 1.0) * 10.0 ** rng.randint(-6, 6)
    return rng.choice(ODD_VALUES)


def random_run(seed: int, n: int) -> list[tuple[Any, dict]]:
    """n (step, row): steps mostly consecutive, some skipped, repeated or going back; keys left out at random,
    new keys appearing late, sometimes a "step" key inside the row."""
    rng = random.Random(seed)
    keys = ["a", "b/c", "d", "e"]
    late = [(rng.randrange(n), f"late/{i}") for i in range(4)]
    out, step = [], 0
    for i in range(n):
        keys += [k for at, k in late if at == i]
        r = rng.random()
        step = step + rng.randint(2, 40) if r < 0.1 else step if r < 0.13 else step - rng.randint(1, 5) if r < 0.16 \
            else step + 1
        row = {k: random_value(rng) for k in keys if rng.random() < 0.85}
        if rng.random() < 0.02:
            row["step"] = rng.randint(0, 9)
        out.append((rng.choice([step, np.int64(step), float(step)]) if rng.random() < 0.05 else step, row))
    return out


def read_one(new: BoundedHistory, ref: _ReferenceHistory, rng: random.Random) -> None:
    """One reading, chosen at random (each flushes the queue), compared; sometimes all of them."""
    what = rng.choice(["len", "first", "columns", "width", "frame", "rows", "all"])
    if what == "len":
        assert len(new) == len(ref)
    elif what == "first":
        assert new.first_recent_step() == ref.first_recent_step()
    elif what == "columns":
        assert new.columns == ref.columns
    elif what == "width":
        assert new.width == ref.width
    elif what == "frame":
        (frame, nan_at), (r_frame, r_nan_at) = new.frame(), ref.frame()
        pd.testing.assert_frame_equal(frame, r_frame, check_exact=True)
        assert nan_at == r_nan_at
    elif what == "rows":
        assert same_rows(new.rows(), ref.rows())
    else:
        assert_same(new, ref)


def drive(sizes: tuple[int, int, int], run: list[tuple[Any, dict]], seed: int, max_gap: int) -> BoundedHistory:
    """Both histories fed `run`, read after gaps of 1..max_gap steps (so queues of every length are converted,
    some at the PENDING bound), compared at each read and at the end."""
    rng = random.Random(seed)
    new, ref = BoundedHistory(*sizes), _ReferenceHistory(*sizes)
    next_read = rng.randint(1, max_gap)
    for i, (step, row) in enumerate(run):
        new.add(step, row)
        ref.add(step, row)
        if i == next_read:
            read_one(new, ref, rng)
            next_read = i + rng.randint(1, max_gap)
    assert_same(new, ref)
    return new


SIZES = [(3, 5, 4), (0, 0, 2), (2, 2, 2), (1, 0, 2), (0, 3, 6), (5, 1, 8), (4, 70, 4), (HEAD, TAIL, BINS)]


@pytest.mark.parametrize("sizes", SIZES)
@pytest.mark.parametrize("seed", [0, 1])
def test_random_runs_read_at_random_moments_match_the_reference(sizes, seed):
    n = 3000 if sizes == (HEAD, TAIL, BINS) else 5000
    new = drive(sizes, random_run(seed, n), seed, max_gap=150)
    assert new.width >= 16  # many merges happened


@pytest.mark.parametrize("sizes", [(3, 5, 4), (HEAD, TAIL, BINS)])
def test_read_after_every_step_matches_the_reference(sizes):
    drive(sizes, random_run(7, 800), 7, max_gap=1)


def test_queue_stays_bounded_unread_and_rows_are_copied_when_added():
    new, ref = BoundedHistory(3, 5, 4), _ReferenceHistory(3, 5, 4)
    row = {"x": 1.0}
    for s in range(1000):
        row["x"] = float(s)
        new.add(s, row)
        ref.add(s, row)
        assert len(new._queued) < history.PENDING
    row["x"] = -1.0  # the caller reusing its dict after the last add changes nothing held
    assert_same(new, ref)
    assert [r["x"] for _, r in new.rows()][-1] == 999.0


def test_small_queue_and_few_remembered_key_sets_change_nothing(monkeypatch):
    """Queues converted at the bound every 3 rows, and the conversion's key sets forgotten every 2 (random runs
    log many key sets): the same view."""
    monkeypatch.setattr(history, "PENDING", 3)
    monkeypatch.setattr(history, "MAX_PLANS", 2)
    for sizes in [(3, 5, 4), (0, 0, 2), (HEAD, TAIL, BINS)]:
        drive(sizes, random_run(11, 1500), 11, max_gap=40)


def test_a_bin_sums_its_values_in_step_order_as_before():
    """Values whose sum depends on the order of addition: the bins add them as the reference did (step by step
    within a bin, then the two halves at a merge), so means agree to the last bit."""
    rng = random.Random(3)
    run = [(s, {"x": rng.choice([1e16, 1.0, -1e16, 3.0, 0.1, 1e-9])}) for s in range(3000)]
    drive((1, 1, 4), run, 3, max_gap=100)
    drive((1, 1, 2), run, 4, max_gap=9)


def test_empty_and_one_step_histories_match():
    new, ref = BoundedHistory(3, 5, 4), _ReferenceHistory(3, 5, 4)
    assert_same(new, ref)
    assert new.matrix()[1].shape == (0, 0) and new.first_recent_step() is None
    new.add(4, {"x": None, "y": "s"})
    ref.add(4, {"x": None, "y": "s"})
    assert_same(new, ref)
    assert len(new) == 1 and new.columns == {}


def test_an_int_past_the_float_range_is_an_inf_and_loses_nothing():
    """An int past the float range makes float() raise OverflowError: the old add() raised it (and a trainer
    calling the guard would have died of it); now it is logged as +-inf, an overflowed value, and every row is
    kept."""
    h = BoundedHistory(3, 5, 4)
    for s in range(10):
        h.add(s, {"x": float(s)})
    len(h)
    h.add(10, {"x": 1.0, "y": 2.0, "huge": 10**400, "low": -(10**400)})
    for s in range(11, 14):
        h.add(s, {"x": float(s)})
    steps, values, names, nan_at = h.matrix()
    row = dict(zip(names, values[steps.tolist().index(10)].tolist()))
    assert row["huge"] == math.inf and row["low"] == -math.inf and row["y"] == 2.0
    assert steps.tolist()[-4:] == [10, 11, 12, 13] and nan_at == {}


def test_odd_bins_are_refused():
    for bins in (0, 3, -2):
        with pytest.raises(ValueError, match="even"):
            BoundedHistory(bins=bins)


row_values = st.one_of(st.floats(), st.none(), st.integers(-5, 5), st.booleans(), st.sampled_from(["1", "x"]),
                       st.sampled_from([1e308, -1e308, 0.0, -0.0]))
steps_and_rows = st.lists(st.tuples(st.integers(-2, 3), st.dictionaries(st.sampled_from(["a", "b", "c", "step"]),
                                                                       row_values, max_size=4), st.booleans()),
                          max_size=300)


@settings(max_examples=150, deadline=None)
@given(st.tuples(st.integers(0, 4), st.integers(0, 6), st.sampled_from([2, 4, 6])), steps_and_rows)
def test_any_run_read_anywhere_matches_the_reference(sizes, run):
    """Step increments -2..3 (repeats and steps going back included), a read wherever the flag says."""
    new, ref = BoundedHistory(*sizes), _ReferenceHistory(*sizes)
    step = 0
    for delta, row, read in run:
        step += delta
        new.add(step, row)
        ref.add(step, row)
        if read:
            assert_same(new, ref)
    assert_same(new, ref)


def sample_rows(name: str) -> list[tuple[int, dict]]:
    """A sample run's rows as the guard gets them: the values it logged, a NaN only where the reader says one
    was logged."""
    run = load_run(SAMPLES / name)
    frame, nan_at = run.metrics, (run.nan_at if getattr(run, "nan_known", False) else {})
    out = []
    for i, step in enumerate(frame["step"].to_numpy(dtype=np.int64).tolist()):
        row = {}
        for c in frame.columns.drop("step"):
            v = frame[c].iloc[i]
            if v is not None and not pd.isna(v) or step in nan_at.get(c, ()):
                row[c] = float(v)
        out.append((step, row))
    return out


SAMPLE_RUNS = sorted(p.name for p in SAMPLES.iterdir() if p.is_dir())


@pytest.mark.parametrize("name", SAMPLE_RUNS)
def test_every_sample_run_matches_the_reference(name):
    rows = sample_rows(name)
    assert rows
    for sizes in [(HEAD, TAIL, BINS), (5, 20, 8), (3, 5, 4)]:
        new, ref = BoundedHistory(*sizes), _ReferenceHistory(*sizes)
        for i, (step, row) in enumerate(rows):
            new.add(step, row)
            ref.add(step, row)
            if i % 10 == 9:  # as the guard reads: every 10 steps
                assert_same(new, ref)
        assert_same(new, ref)


# -- the reference: history.py at bde1013, unchanged but for the class name ------------------------------------

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


class _ReferenceHistory:
    """BoundedHistory as of bde1013 (one vector per row, one _Bin object per bin), frozen here."""

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
