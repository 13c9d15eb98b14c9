"""What the text readers share once a log has become rows: numbers, canonical names, steps, reader notes.

A text reader (generic rows, key-value logs, console dicts) parses its format into a frame of logged
columns with a `step` column, and hands it to `TextRun._emit`, which converts the values to numbers (naming
the ones that are not), renames through `synonyms`, merges partial rows of one step, records logged NaNs,
and tracks the columns that were 0 on every row so far: for metrics that cannot be 0 throughout when
measured (PLACEHOLDER_ZERO) those were "not measured" (a trainer that skips its entropy logs 0.0), so
`metrics` leaves them out and a reader note says so.
Everything here is per column or per block of rows, never per value, so a 100,000-row file costs a few
vectorised passes.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from collectors.meta import RunError, RunMeta
from collectors.readers import jsontext
from collectors.readers.keymap import to_number, to_step
from collectors.readers.synonyms import canonical, rename_plan, to_canonical, user_map
from collectors.readers.text import responses
from collectors.readers.text.guess import refine_plan
from collectors.run import NAN_AT, Problem, Run

OWN_COLUMNS = ("step", "_seq")  # the table's own: a logged column renamed to one of them is no metric

# Fewer rows than this say nothing about a column being a placeholder (the KL to the reference is 0 at the
# first step of any run, by construction).
MIN_ROWS_UNMEASURED = 3
# Metrics that cannot read exactly 0 on every step when they are measured, so such a column is a placeholder
# (a trainer printing 0.0 for what it skipped: `compute_entropy: false`, no reference model). Others can
# truly be 0 throughout and stay: a binary reward's min, a truncation or clip fraction never hit, a grad
# norm of 0 (no gradient at all, which the diagnosis must see).
PLACEHOLDER_ZERO = frozenset({
    "policy/entropy",  # sampling at temperature > 0 has positive entropy
    "policy/kl_ref",  # the policy leaves the reference after its first update
    "policy/approx_kl_old",  # several minibatches or epochs move the policy off the rollout policy
    "completions/len_mean", "completions/len_max",  # a completion has at least one token
    "perf/step_s", "perf/tokens_per_s",
})
_KEEP = ("step", "wall_time", "_seq")
_CONSTANT = "the same value on every row"


def json_lines(block: bytes, first: int, note: Callable[[int, str], None],
               repaired: Callable[[str], None] | None = None) -> Iterator[tuple[int, Any]]:
    """(line number, parsed value) of each non-blank line of a JSON-lines block whose first line is `first`;
    a line that cannot be read is told to `note(line, why in words)` and skipped (a line read one at a time:
    the fallback of the block parsers, which name what is wrong). An integer past 4,300 digits is a signed
    infinity, as any number beyond float; a value nested more than MAX_ROW_DEPTH deep is left out of its row
    and a lone surrogate (`"\\ud800"`) becomes U+FFFD: once the block is read, `repaired(what)` says where."""
    fixed: list[int] = []
    deep: dict[int, list[str]] = {}
    for no, raw in enumerate(block.split(b"\n"), first):
        if not raw.strip():
            continue
        try:
            value, replaced = jsontext.loads(raw)
        except jsontext.JsonProblem as e:
            note(no, str(e))
            continue
        if replaced:
            fixed.append(no)
        if isinstance(value, dict) and raw.count(b"[") + raw.count(b"{") > MAX_ROW_DEPTH:
            value, gone = shallow(value)
            if gone:
                deep[no] = gone
        yield no, value
    if repaired is not None:
        if fixed:
            repaired(f"line {_lines(fixed)}: lone surrogates (\\u escapes of half a character, which no UTF-8 "
                     "text holds) replaced by U+FFFD")
        for no, keys in deep.items():
            repaired(f"line {no}: {', '.join(map(jsontext.shown, keys[:3]))} nested more than {MAX_ROW_DEPTH} "
                     "levels deep; left out")


MAX_ROW_DEPTH = 32  # a metrics row nests a few levels (verl's data, a dict of rewards); deeper is no metric


def shallow(row: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """`row` without the values nested deeper than MAX_ROW_DEPTH (flattening them would recurse that deep), and
    their keys; a value of verl's `data` (or any object) is looked at one level down."""
    gone: list[str] = []
    out = {}
    for k, v in row.items():
        if jsontext.depth(v, MAX_ROW_DEPTH) <= MAX_ROW_DEPTH:
            out[k] = v
        elif isinstance(v, dict):
            inner = {}
            for k2, v2 in v.items():
                if jsontext.depth(v2, MAX_ROW_DEPTH - 1) < MAX_ROW_DEPTH:
                    inner[k2] = v2
                else:
                    gone.append(f"{k}.{k2}")
            out[k] = inner
        else:
            gone.append(k)
    return out, gone


def _lines(numbers: list[int]) -> str:
    return ", ".join(map(str, numbers[:3])) + (f" and {len(numbers) - 3} more" if len(numbers) > 3 else "")


def numeric(frame: pd.DataFrame) -> tuple[pd.DataFrame, dict[str, np.ndarray], dict[str, np.ndarray], list[str]]:
    """Logged values -> float columns; (numbers, {column: logged-NaN mask}, {column: non-numeric mask}, text columns).

    A numeric string ("0.25", as older TRL prints) is its number; a null stays null; anything else
    (text, a list) is null and reported by the caller from the mask. A column with no number at all is
    text (a label logged beside the metrics) and left out.
    """
    if all(dt.kind in "fiub" for dt in frame.dtypes):  # the common case, in one step (a live refresh's row)
        return frame.astype(np.float64), {}, {}, []
    out, nans, bad, text = {}, {}, {}, []
    for col in frame.columns:
        s = frame[col]
        if s.dtype.kind in "fiub":  # a NaN here may be a null: the parser says which were logged NaNs
            values = s.to_numpy(dtype=np.float64, na_value=np.nan)
        else:
            s = _listable(s)
            try:
                num = pd.to_numeric(s.map(_scalar_text) if s.dtype == object or pd.api.types.is_string_dtype(s) else s,
                                    errors="coerce")
                values = num.to_numpy(dtype=np.float64, na_value=np.nan)
            except (OverflowError, TypeError, ValueError):  # an int beyond float (2**1000): value by value
                values = np.array([math.nan if (x := to_number(v)) is None else x for v in s], dtype=np.float64)
            given = s.notna().to_numpy()
            is_nan = np.isnan(values)
            logged_nan = given & is_nan & s.map(_is_nan_word).to_numpy(dtype=bool)
            if logged_nan.any():
                nans[col] = logged_nan
            wrong = given & is_nan & ~logged_nan
            if wrong.any() and wrong.sum() == given.sum() and not logged_nan.any():
                text.append(col)  # a label the trainer logs beside its numbers (a run name, a mode)
                continue
            if wrong.any():
                bad[col] = wrong
        out[col] = values
    return pd.DataFrame(out, index=frame.index, copy=False), nans, bad, text


def one_column_each(frame: pd.DataFrame) -> tuple[pd.DataFrame, dict[str, np.ndarray]]:
    """A frame whose columns repeat a name -> one column per name, the first value given in a row winning (as
    synonyms.to_canonical combines synonyms); and {repeated name: mask of the rows that gave it twice}."""
    out: dict[str, pd.Series] = {}
    both: dict[str, np.ndarray] = {}
    names = frame.columns
    for i, name in enumerate(names):
        col = frame.iloc[:, i]
        if name not in out:
            out[name] = col
            continue
        given = out[name].notna().to_numpy() & col.notna().to_numpy()
        both[name] = both.get(name, np.zeros(len(frame), dtype=bool)) | given
        first = out[name]
        try:
            out[name] = first.where(first.notna(), col) if first.dtype == col.dtype else \
                first.astype(object).where(first.notna(), col.astype(object))
        except (pa.ArrowException, UnicodeError, TypeError, ValueError):  # text that is no UTF-8: the first stays
            pass
    return pd.DataFrame(out, index=frame.index, copy=False), both


def _listable(s: pd.Series) -> pd.Series:
    """`s`, or where its Arrow text holds bytes that are no UTF-8 (and so cannot even be listed), a column
    of a marker text that the caller reports as not a number."""
    if s.dtype == object:
        return s
    try:
        s.tolist()
    except (pa.ArrowException, UnicodeError):
        return pd.Series(["<not UTF-8>"] * len(s), index=s.index, dtype=object)
    return s


# A number printed through its type's repr: numpy 2 (`np.float64(0.25)`, verl's console), torch (`tensor(0.25)`,
# `tensor(0.25, device='cuda:0')`): the number inside is the value
_WRAPPED_RE = re.compile(r"^(?:np\.|numpy\.)?(?:float|int|uint)\d*\(\s*([^,()]+?)\s*\)$|^tensor\(\s*([^,()]+?)\s*(?:,[^()]*)?\)$")


def _scalar_text(v):
    if isinstance(v, str):
        v = v.strip()
        if v.endswith(")") and (m := _WRAPPED_RE.match(v)):
            return m[1] or m[2]
        return v
    return v if isinstance(v, (int, float, bool)) or v is None else "x"


def _is_nan_word(v) -> bool:
    return (isinstance(v, float) and math.isnan(v)) or (isinstance(v, str) and v.strip().lower() == "nan")


class TextRun(Run):
    """A Run fed by frames of logged columns (see the module docstring). Subclasses implement `_read_new`
    and call `_emit(frame, file, lines)` with what they parsed."""

    nan_known = True

    def __init__(self, path: Path | str, meta: RunMeta, mapping: Mapping[str, str] | None = None) -> None:
        if not Path(path).exists():  # a forced reader (--source) skips detection, which would have said so
            raise RunError(f"{path}: no such file or folder")
        super().__init__(path, meta)
        self.mapping = dict(mapping) if mapping is not None else user_map()
        self._seq = 0
        self._rows_seen = 0
        self._valued: set[str] = set()  # columns with at least one non-null value
        self._text: set[str] = set()  # logged columns holding labels, not numbers
        # (file, column) -> (its lines holding a non-number, the note said): one note per column, its lines
        # gathered over the reads (a live log read a few steps at a time gave one note per read)
        self._non_numeric: dict[tuple[str, str], tuple[list[int], Problem]] = {}
        self._logged_as: dict[str, str] = {}  # canonical name -> the name as logged
        self._decided: dict[str, str] = {}  # logged column -> the meaning a guess gave it (kept for the run)
        self._nonzero: set[str] = set()
        self._all_zero: set[str] = set()
        self._first: dict[str, float] = {}  # each column's first logged value
        self._varies: set[str] = set()  # columns that logged two different values
        self._constant: dict[str, float] = {}  # named in a reader note: the same value on every row
        self._view: tuple[pd.DataFrame, pd.DataFrame] | None = None

    # -- subclasses call these -----------------------------------------------------------------
    def _read_side_config(self) -> None:
        """A `config*.yaml` beside the log file, as the run's config (folders.side_config)."""
        from collectors.readers.folders import side_config

        if not self.path.is_file():
            return
        config, where, wrong = side_config(self.path)
        if wrong:
            self._note(Problem(where, f"{wrong}; the run has no config"))
        elif config:
            self.meta.config = config
            self.meta.info["config_source"] = where

    def _reset(self, file: str, why: str) -> None:
        """The source was rewritten: what was read no longer describes the run."""
        self._table.reset()
        self._rows_seen, self._valued, self._nonzero, self._all_zero = 0, set(), set(), set()
        self._non_numeric = {}  # the old lines are gone with the old text
        self._first, self._varies, self._constant = {}, set(), {}
        self._note(Problem(file, why))

    def _emit(self, frame: pd.DataFrame, file: str, lines: np.ndarray | None = None,
              nans: dict[str, np.ndarray] | None = None) -> list[pd.DataFrame]:
        """Parsed rows (`step` plus logged columns) -> [metrics chunk] or [].

        lines: the source line of each row (for messages); nans: {column: mask of rows where the parser saw a
        logged NaN} for numeric columns, where a NaN and a null look alike once in a frame.
        """
        if not len(frame):
            return []
        lines = np.arange(1, len(frame) + 1) if lines is None else np.asarray(lines)
        if frame.columns.has_duplicates:  # two keys of a row renamed alike (verl's `actor/lr(1e-4)` beside `actor/lr`)
            frame, both = one_column_each(frame)
            for name, rows in both.items():
                where = f"line {_lines(lines[rows].tolist())}: " if rows.any() else ""
                self._note(Problem(file, f"{where}{name} logged twice in one row (two keys that are one column once "
                                         "renamed); one column, the first value of a row kept"))
        try:
            steps = pd.to_numeric(frame["step"], errors="coerce")
        except (OverflowError, TypeError, ValueError):  # an int beyond int64 in an object column
            steps = pd.Series([to_step(v) for v in frame["step"]], index=frame.index, dtype=np.float64)
        as_float = steps.to_numpy(dtype=np.float64, na_value=np.nan)
        ok = np.isfinite(as_float) & (np.abs(as_float) < 2**63)  # 2**80 is no int64 step
        if not ok.all():
            shown = ", ".join(map(str, lines[~ok][:3]))
            self._note(Problem(file, f"line {shown}: no integer step; skipped"))
        frame, lines = frame[ok], lines[ok]
        if not len(frame):
            return []
        expanded, said = responses.expand(frame.drop(columns=["step"]))
        for text in said:
            self._note(Problem(file, text))
        values, word_nans, bad, text = numeric(expanded)
        if new_text := [c for c in text if c not in self._text]:
            self._text.update(new_text)
            self._note(Problem(file, f"text, not metrics: {', '.join(new_text[:5])}; left out"))
        nans = {c: m[ok] for c, m in (nans or {}).items() if c in values.columns} | word_nans
        for col, mask in bad.items():
            self._note_non_numeric(file, col, lines[mask].tolist())
        values, nans, plan = self._plan(values, nans, file)
        named = self._reward_from_pass(to_canonical(values, self.mapping, plan), file)
        for col, name in plan.items():
            self._logged_as.setdefault(name, col)
        if len(set(plan.values())) < len(plan):
            self._note_synonyms(plan, file)
        # one float block and the step, built at once: the renamed frame may hold one block per column
        # (thousands on a wide log), and inserting into that is slow and warned about by pandas
        named = pd.concat([pd.DataFrame({"step": steps[ok].to_numpy().astype(np.int64)}),
                           pd.DataFrame(named.to_numpy(dtype=np.float64), columns=named.columns)], axis=1)
        nan_at = self._nan_steps(named, plan, nans)
        named = self._merge_steps(named, file)
        named["_seq"] = np.arange(self._seq, self._seq + len(named), dtype=np.int64)
        self._seq += len(named)
        named.attrs[NAN_AT] = nan_at
        self._track_zeros(named, nan_at, file)
        return [named]

    # -- helpers ---------------------------------------------------------------------------------
    def _note_non_numeric(self, file: str, col: str, at: list[int]) -> None:
        """The note on a column holding a non-number among its numbers, one per column: the lines found so far
        (the first three and how many more), replacing the note an earlier read gave."""
        lines, said = self._non_numeric.get((file, col), ([], None))
        lines = sorted(set(lines).union(at))
        if said in self.problems:
            self.problems.remove(said)
        note = Problem(file, f"line {_lines(lines)}: non-numeric {col}; left null")
        self._non_numeric[(file, col)] = (lines, note)
        self._note(note)

    def _note_synonyms(self, plan: dict[str, str], file: str) -> None:
        """A note per canonical name that several logged columns map to (`reward` and `reward_mean`): they are
        one column, the first one given in a row wins (synonyms.to_canonical)."""
        by_name: dict[str, list[str]] = {}
        for col, name in plan.items():
            by_name.setdefault(name, []).append(col)
        for name, cols in by_name.items():
            if len(cols) > 1:
                shown = ", ".join(map(repr, cols[:4])) + (f" and {len(cols) - 4} more" if len(cols) > 4 else "")
                self._note(Problem(file, f"{shown}: the same metric ({name}) under {len(cols)} names; one column, "
                                         "the first given in a row kept"))

    def _plan(self, values: pd.DataFrame, nans: dict[str, np.ndarray], file: str):
        """(values, nans, {logged column: canonical name}) of a block: the synonym plan, without columns named like
        the step, refined by guess.refine_plan (a reward under another name, value checks). A guess made on one
        block holds for the run's later blocks; each is said once in a note."""
        plan = rename_plan(values.columns, self.mapping)
        if own := [c for c, name in plan.items() if name in OWN_COLUMNS]:  # `train/step` beside the row's step
            values = values.drop(columns=own)
            nans = {c: m for c, m in nans.items() if c not in own}
            plan = {c: name for c, name in plan.items() if c not in own}
            self._note(Problem(file, f"{', '.join(map(repr, own[:3]))} named like the step itself; left out (the "
                                     "row's own step is used)"))
        refined, notes = refine_plan(plan, values, lambda n: canonical(n, self.mapping), fixed=self.mapping)
        for col, name in refined.items():
            if col in self._decided:
                refined[col] = self._decided[col]
            elif name != plan[col]:
                self._decided[col] = name
        for text in notes:
            self._note(Problem(file, f"guessed {text}"))
        return values, nans, refined

    def _reward_from_pass(self, named: pd.DataFrame, file: str) -> pd.DataFrame:
        """With a pass rate and no reward logged, the reward is the pass rate: the mean of a 0/1 reward is the
        fraction of responses that passed (said in a note; --map names another column as the reward)."""
        if "reward/mean" in named.columns or "reward/pass_rate" not in named.columns:
            return named
        self._note(Problem(file, "guessed reward: the pass rate (no reward is logged; the mean of a 0/1 reward is "
                                 "its pass rate; --map COLUMN=reward/mean names another)"))
        return named.assign(**{"reward/mean": named["reward/pass_rate"]})

    def _nan_steps(self, named: pd.DataFrame, plan: dict[str, str], nans: dict[str, np.ndarray]) -> dict:
        if not nans:
            return {}
        steps = named["step"].to_numpy()
        out: dict[str, list[int]] = {}
        for col, mask in nans.items():
            out.setdefault(plan[col], []).extend(steps[mask].tolist())
        return out

    def _merge_steps(self, named: pd.DataFrame, file: str) -> pd.DataFrame:
        """Rows of one step become one (the later value of a column wins, nulls do not erase). A step the table
        already holds is merged there the same way (MetricsTable): this block brings only what it read."""
        steps = named["step"]
        if steps.duplicated().any():
            named = named.groupby("step", sort=False, as_index=False).last()
        return named.reset_index(drop=True)

    def _track_zeros(self, chunk: pd.DataFrame, nan_at: dict, file: str) -> None:
        """Columns whose every value so far is exactly 0 (NaN and null aside): a placeholder, not a reading;
        and, among the rest, those logging one value on every row (`constant`), named in a note."""
        self._rows_seen += len(chunk)
        for col in chunk.columns:
            if col in _KEEP or (col in self._nonzero and col in self._varies):
                continue
            s = chunk[col].to_numpy(dtype=np.float64, na_value=np.nan)
            given = ~np.isnan(s)
            if given.any():
                self._valued.add(col)
                first = self._first.setdefault(col, float(s[given][0]))
                if (s[given] != first).any():
                    self._varies.add(col)
            if col in nan_at:
                self._varies.add(col)  # a logged NaN is no constant reading
            # a printed "-0.0000" is a measured value rounded by the print format, never a placeholder
            if ((s != 0) & given).any() or np.signbit(s[given]).any() or col in nan_at:
                self._nonzero.add(col)
        enough = self._rows_seen >= MIN_ROWS_UNMEASURED
        zero = (self._valued - self._nonzero) & PLACEHOLDER_ZERO if enough else set()
        if zero != self._all_zero:
            self._all_zero = zero
            self.problems = [p for p in self.problems if "not measured" not in p.message]
            if zero:
                self._note(Problem(file, f"{', '.join(self._as_logged(sorted(zero)))}: 0 on every row, so not "
                                         "measured; left out of the metrics"))
        constant = {c: self._first[c] for c in sorted(self._valued - self._varies - zero)} if enough else {}
        if constant != self._constant:
            self._constant = constant
            self.problems = [p for p in self.problems if not p.message.startswith(_CONSTANT)]
            if constant:
                shown = [f"{name} = {value:g}" for name, value in zip(
                    self._as_logged(list(constant)), constant.values(), strict=True)]
                more = f" and {len(shown) - 8} more" if len(shown) > 8 else ""
                self._note(Problem(file, f"{_CONSTANT}, kept as measured (a fixed learning rate, a clip "
                                         f"fraction never hit): {', '.join(shown[:8])}{more}"))
        self._view = None

    def _as_logged(self, names: list[str]) -> list[str]:
        return [c if self._logged_as.get(c, c) == c else f"{self._logged_as[c]} ({c})" for c in names]

    @property
    def constant(self) -> dict[str, float]:
        """Columns kept in `metrics` that logged one value on every row that logs them (at least
        MIN_ROWS_UNMEASURED rows): {name: value}. A constant is a reading (a fixed learning rate), unlike the
        placeholder zeros of `not_measured`."""
        return dict(self._constant)

    @property
    def not_measured(self) -> list[str]:
        """Columns logged as 0 on every row (left out of `metrics`)."""
        return sorted(self._all_zero)

    @property
    def metrics(self) -> pd.DataFrame:
        frame = self._table.frame()
        if not self._all_zero:
            return frame
        if self._view is None or self._view[0] is not frame:
            keep = [c for c in frame.columns if c not in self._all_zero]
            self._view = (frame, pd.DataFrame({c: frame[c] for c in keep}, copy=False))
        return self._view[1]
