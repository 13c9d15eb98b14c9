"""What a rule sees of a run: cleaned metric columns, the flat config, and the samples on demand.

Any object with `.metrics` (a DataFrame with a `step` column), `.meta.config` and `.samples()` works: our
native runs and every foreign reader in `collectors` give that. Cleaning happens once here so rules do
not each handle unsorted or duplicated steps, strings in numeric columns, or a missing config.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from dashboard.diagnosis import stats
from dashboard.diagnosis.findings import NotJudged

# Where an exact 0 on every row is a measurement (no reward, no spread, no update, nothing truncated). Any
# other column that is exactly 0 on every row was not measured: a custom trainer's placeholder `entropy` or
# `approx_kl` column, never "entropy collapsed to 0" or "the policy did not move".
ZERO_IS_MEASURED = ("reward/", "groups/", "completions/truncated_frac", "optim/grad_norm", "loss/", "adv/", "eval/",
                    "policy/ratio_first_step_max_dev")


def _clean_metrics(frame: pd.DataFrame | None) -> pd.DataFrame:
    if frame is None or len(frame) == 0 or "step" not in frame:
        return pd.DataFrame({"step": pd.Series([], dtype=np.int64)})
    step = frame["step"]
    if step.dtype == np.int64 and isinstance(frame.index, pd.RangeIndex) and frame.index.start == 0 and \
            frame.index.step == 1 and bool(np.all(np.diff(step.to_numpy()) > 0)):
        return frame.copy(deep=False)  # already clean (the guard's view, a native run): skip the sort's copies
    f = frame.copy()
    f["step"] = pd.to_numeric(f["step"], errors="coerce")
    f = f[np.isfinite(f["step"].to_numpy(dtype=np.float64))]
    # Out-of-order or re-logged steps: the last row written for a step wins, then sort by step.
    f = f.drop_duplicates("step", keep="last").sort_values("step", kind="stable").reset_index(drop=True)
    f["step"] = f["step"].astype(np.int64)
    return f


def placeholder_zeros(x: np.ndarray) -> bool:
    """True when every value is exactly 0 (at least two of them, nothing non-finite): a placeholder."""
    f = x[~np.isnan(x)]
    return len(f) >= 2 and bool(np.all(f == 0.0))


# A measured per-token average over thousands of tokens never repeats to the last bit: the same value on every
# row of these is a placeholder (a constant a custom trainer writes), not a level to judge.
NEVER_CONSTANT = ("policy/entropy", "policy/kl_ref", "policy/approx_kl_old")


# The sample columns the rules read (verifier_suspect, low_diversity, group_size, zero_variance_examples): a live
# guard builds its samples frame of these alone. tests/diagnosis/test_watch.py judges every rule on frames cut to these and
# fails when a rule reads another one.
JUDGED_SAMPLE_COLUMNS = ("step", "group", "prompt", "completion", "reward")


def frame_columns(s: pd.DataFrame | None, names: tuple[str, ...]) -> dict[str, np.ndarray] | None:
    """{name: s[name].to_numpy()} for the `names` that `s` has, (N,) each as stored; None when s is None or has no
    rows (the samples of a run without samples)."""
    if s is None or not len(s):
        return None
    return {c: s[c].to_numpy() for c in names if c in s.columns}


def column_array(values: list) -> np.ndarray:
    """One sample column given as a list of values (None where a row has none) -> (N,) array, as a DataFrame built
    from the rows holds it once read with to_numpy(): int64, float64 (None -> NaN), bool, or object; a text column
    is object with its strings as they are. Plain ints, floats, bools and strings take a numpy path; anything else
    (numpy scalars, mixed kinds, ints past int64) pandas' own inference (tests/diagnosis/test_rules_samples.py compares the
    two)."""
    kinds = set(map(type, values))
    try:
        if kinds == {int}:
            return np.array(values, dtype=np.int64)
        if kinds <= {int, float, type(None)} and kinds & {float, type(None)} and kinds != {type(None)}:
            return np.array(values, dtype=np.float64)
    except OverflowError:  # an int past int64: pandas makes it uint64 or object
        pass
    if kinds == {bool}:
        return np.array(values, dtype=bool)
    if kinds <= {str, type(None)}:
        return np.fromiter(values, dtype=object, count=len(values))
    return pd.Series(values).to_numpy()


def latest_rows(s: pd.DataFrame | None, step: int, columns: tuple[str, ...] | None = None) -> pd.DataFrame | None:
    """The rows of `s` (samples with a `step` column) at its latest step at or before `step`, only `columns` of
    them when given (those `s` has); None if none."""
    if s is None or "step" not in s.columns:
        return None
    steps = pd.to_numeric(s["step"], errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan)
    upto = steps <= step
    if not upto.any():
        return None
    rows = s[steps == steps[upto].max()]
    return rows if columns is None else rows[[c for c in columns if c in rows.columns]]


class RunData:
    """A run prepared for the rules. `col(name)` is a float64 (T,) array, or None when not logged."""

    def __init__(self, run: Any, memo: Mapping[str, Any] | None = None, shown: frozenset[str] = frozenset()) -> None:
        """memo: facts already known of this run (a live guard carries its slow trends between checks).
        shown: rule ids whose sample examples the reader has already been shown (a live guard's confirmed
        findings): their rules may leave the examples out (`wants_examples`).

        A run with `.matrix` = (steps (T,) increasing int64, values (T, C) float64, C names) is read from that
        block instead of `.metrics`: a live guard's view is already clean and numeric, and building and reading a
        DataFrame was a third of its check inside a training loop (benchmarks/README.md, "Guard")."""
        self.run = run
        block = getattr(run, "matrix", None)
        if block is not None:
            steps, values, names = block
            self.steps = np.asarray(steps, dtype=np.int64)
            self._columns = np.ascontiguousarray(np.asarray(values, dtype=np.float64).T)  # (C, T): a column is a row
            self._names = list(names)
            self._index = {n: j for j, n in enumerate(self._names)}
            self._metrics: pd.DataFrame | None = None
        else:
            self._columns, self._names, self._index = None, None, None
            self._metrics = _clean_metrics(getattr(run, "metrics", None))
            self.steps = self._metrics["step"].to_numpy()
        meta = getattr(run, "meta", None)
        config = getattr(meta, "config", None)
        self.config: Mapping[str, Any] = config if isinstance(config, Mapping) else {}
        self.source = str(getattr(meta, "source", "") or "")
        # the reader numbered the rows itself (no step column): step 1 is the first row, not the first update
        info = getattr(meta, "info", None)
        self.steps_from_order = isinstance(info, Mapping) and info.get("step_from") == "order"
        # {column: steps logged as NaN} when the reader can tell a NaN from a null, else None
        self.nan_at = getattr(run, "nan_at", None) if getattr(run, "nan_known", False) else None
        self._samples: pd.DataFrame | None = None
        self._sample_cols: dict[str, np.ndarray | None] = {}  # sample_columns' arrays (None: the run has not that one)
        self._has_samples: bool | None = None
        self._cols: dict[str, np.ndarray | None] = {}
        self._values: dict[str, np.ndarray | None] = {}
        self._memo: dict[str, Any] = dict(memo or {})
        self._shown = shown

    def memo(self, key: str, fn):
        """fn(self), computed once per run: several rules and the verdict share a trend test."""
        if key not in self._memo:
            self._memo[key] = fn(self)
        return self._memo[key]

    def memos(self) -> dict[str, Any]:
        """The facts computed so far, by memo key (a live guard carries the slow ones to its next check)."""
        return dict(self._memo)

    @property
    def n(self) -> int:
        return len(self.steps)

    @property
    def metrics(self) -> pd.DataFrame:
        """The cleaned metrics frame (`step` first); built on first use for a run given as a matrix."""
        if self._metrics is None:
            self._metrics = pd.DataFrame(self._columns.T, columns=self._names, copy=False)
            self._metrics.insert(0, "step", self.steps)
        return self._metrics

    def metric_names(self) -> list[str]:
        """The metric columns (not `step`, not the reader's `_` columns), in the run's order."""
        names = self._names if self._names is not None else list(self.metrics.columns)
        return [c for c in names if c != "step" and not str(c).startswith("_")]

    def inf_columns(self) -> dict[str, bool]:
        """{numeric column: holds an inf}; a column that is not numeric is absent (its values need a look)."""
        if self._columns is not None:
            return dict(zip(self._names, np.isinf(self._columns).any(axis=1).tolist(), strict=True))
        # select_dtypes, not metrics[names]: a list of names becomes a fixed-width numpy string array, and one
        # 5 MB column name (a log line without newlines) made that 36 x 21 MB
        numeric = self.metrics.select_dtypes("number")
        return dict(zip(numeric.columns, np.isinf(numeric.to_numpy(np.float64)).any(axis=0), strict=True))

    def values(self, name: str) -> np.ndarray | None:
        """The column as float64 (T,), strings and nulls NaN, without col()'s judgement; None when absent."""
        if name not in self._values:
            if self._columns is not None:
                j = self._index.get(name)
                self._values[name] = None if j is None else self._columns[j]
                return self._values[name]
            c = self.metrics.get(name)
            if c is not None:
                # a float64 column is already what to_numeric would return; skip its Series round trip (a live
                # guard reads some forty columns at every check)
                c = c if c.dtype == np.float64 else pd.to_numeric(c, errors="coerce")
                c = c.to_numpy(dtype=np.float64, na_value=np.nan)
            self._values[name] = c
        return self._values[name]

    def col(self, name: str) -> np.ndarray | None:
        if name not in self._cols:
            arr = self.values(name)
            if arr is not None:
                if not np.isfinite(arr).any() and not np.isinf(arr).any():
                    arr = None  # a column of nulls is "not logged", never a made-up zero
                elif not name.startswith(ZERO_IS_MEASURED) and placeholder_zeros(arr) or name in NEVER_CONSTANT and stats.is_constant(arr) and np.isfinite(arr).sum() >= 5:
                    arr = None
            self._cols[name] = arr
        return self._cols[name]

    def dense(self, name: str) -> tuple[np.ndarray, np.ndarray] | None:
        """(steps, values) at the steps where `name` is finite. Sparse keys (TRL's rollout metrics with
        num_iterations > 1, eval metrics) are judged on the steps that carry them, never filled."""
        return self.memo("dense:" + name, lambda _: self._dense(name))

    def _dense(self, name: str) -> tuple[np.ndarray, np.ndarray] | None:
        x = self.col(name)
        if x is None:
            return None
        ok = np.isfinite(x)
        return self.steps[ok], x[ok]

    def need(self, rule_id: str, *names: str, min_points: int = 1) -> NotJudged | None:
        """NotJudged naming what is missing, or None when every metric has at least `min_points` values."""
        for name in names:
            d = self.dense(name)
            if d is None:
                return NotJudged(rule_id, f"{name} is not logged by this run")
            if len(d[1]) < min_points:
                return NotJudged(rule_id, f"{name} has {len(d[1])} finite value(s); this rule needs {min_points}")
        return None

    def setting(self, *names: str) -> tuple[str, Any] | None:
        """(key, value) of the first config key equal to one of `names` or ending in `.name`."""
        for name in names:
            if name in self.config:
                return name, self.config[name]
        for name in names:
            for k, v in self.config.items():
                if k.endswith("." + name):
                    return k, v
        return None

    def number(self, *names: str) -> tuple[str, float] | None:
        hit = self.setting(*names)
        if hit is None:
            return None
        try:
            return hit[0], float(hit[1])
        except (TypeError, ValueError):
            return None

    def samples(self) -> pd.DataFrame | None:
        """The run's samples (None when the source has none). Read once, on the first rule that asks."""
        if self._samples is None:
            try:
                s = self.run.samples()
            except Exception:  # noqa: BLE001 - a reader that cannot give samples is a source without samples here
                s = None
            self._samples = s if isinstance(s, pd.DataFrame) else pd.DataFrame()
        return self._samples if len(self._samples) else None

    def sample_columns(self, *names: str) -> dict[str, np.ndarray] | None:
        """{name: (N,) array} of the samples' columns `names` that the run has, as stored (frame_columns; texts are
        object arrays), every one over the same rows in the samples' order; None when the run has no samples. A
        live guard's view answers from its buffer of rows without building a DataFrame: that frame was the largest
        single cost of the checks that judge the sample rules (benchmarks/README.md, Guard)."""
        want = tuple(c for c in names if c not in self._sample_cols)
        if want and self._has_samples is not False:
            if self._samples is None and hasattr(self.run, "sample_columns"):
                try:
                    got = self.run.sample_columns(want)
                except Exception:  # noqa: BLE001 - as samples(): a source that cannot give them has none here
                    got = None
            else:
                got = frame_columns(self.samples(), want)
            self._has_samples = got is not None
            self._sample_cols.update({c: (got or {}).get(c) for c in want})
        if not self._has_samples:
            return None
        return {c: x for c in names if (x := self._sample_cols[c]) is not None}

    def wants_examples(self, rule_id: str) -> bool:
        """Whether `rule_id` should build its sample examples: always, except for a live guard that holds its
        finding confirmed and has reported its examples (rebuilding them at every check was most of what a held
        zero-variance finding cost the guard; benchmarks/README.md, Guard)."""
        return rule_id not in self._shown

    def latest_samples(self, step: int, columns: tuple[str, ...] | None = None) -> pd.DataFrame | None:
        """The sample rows of the latest step at or before `step` that has samples (None when there is none),
        only `columns` of them when given. A live guard's view answers from its own buffer without building the
        frame of every recent step: a rule that shows one step's examples at every check need not pay for five."""
        if self._samples is None and hasattr(self.run, "latest_samples"):
            rows = self.run.latest_samples(step, columns)
            return rows if rows is not None and len(rows) else None
        return latest_rows(self.samples(), step, columns)

    def step_range(self, i0: int, i1: int) -> tuple[int, int]:
        return int(self.steps[i0]), int(self.steps[i1])
