"""The run object every reader returns: metadata, a metrics frame, samples, problems, refresh().

`Run` keeps the merge rules in one place (schema union, the last write of a step wins, sorted steps,
canonical columns first) so that every reader, native or foreign, only says what is new:
a subclass implements `_read_new()` and returns metric chunks; it may override `samples()`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from collectors.levels import place as place_levels
from collectors.meta import STALE_AFTER_S, RunMeta
from collectors.schema import SAMPLES, ordered_columns
from collectors.store.parts import SEQ_COLUMN

# A reader may list, in `chunk.attrs[NAN_AT]` = {column: [steps]}, where a NaN was logged: in the float
# table a NaN and a null ("not measured this step") look alike, and the diagnosis must tell them apart.
NAN_AT = "nan_at"
# The longest column name a run keeps. Metric names are tags like `actor/pg_clipfrac_lower`; numpy holds a list of
# labels at its longest one's width, so one 8 MB name (a broken quote in a printed dict swallowing a whole line)
# made a 44-column chunk cost 1.4 GB (fuzzing, issue 38). 4,096 is PATH_MAX: room for any name a logger writes.
MAX_NAME_CHARS = 4_096
MAX_NOTE_CHARS = 2_000  # a note is a line or two to read: about 20 lines of a terminal


def last_update_of(meta: RunMeta, path: Path) -> float | None:
    """When a run last wrote (Unix s): the heartbeat its writer records (for an ended run, its end), else, for
    a run that records no time of its own, the newest modification time of its files two folder levels deep.

    One rule for the runs table and a run's header: a cloned or copied run's files are as new as the copy,
    but it last wrote when its heartbeat says."""
    if meta.heartbeat is not None:
        return meta.heartbeat
    return newest_mtime(path)


@dataclass(frozen=True)
class Problem:
    """Something a reader skipped or repaired, and why. Shown to the user; never silently dropped."""

    file: str
    message: str

    def __post_init__(self) -> None:
        # a note names what it is about, and a name can be anything a file holds (an 8 MB key, fuzzing): past
        # MAX_NOTE_CHARS the rest is cut, and the note says how long it was
        for name in ("file", "message"):
            text = getattr(self, name)
            if isinstance(text, str) and len(text) > MAX_NOTE_CHARS:
                object.__setattr__(self, name, f"{text[:MAX_NOTE_CHARS]}... ({len(text):,} characters)")

    def __str__(self) -> str:
        return f"{self.file}: {self.message}"


def newest_mtime(path: Path, depth: int = 2, limit: int = 5000) -> float | None:
    """The newest mtime of `path` and of what lies up to `depth` levels below it (at most `limit` entries)."""
    try:
        newest = path.stat().st_mtime
    except OSError:
        return None
    level, seen = [path] if path.is_dir() else [], 0
    for _ in range(depth):
        below = []
        for folder in level:
            try:
                entries = list(os.scandir(folder))
            except OSError:
                continue
            for e in entries:
                seen += 1
                if seen > limit:
                    return newest
                try:
                    newest = max(newest, e.stat().st_mtime)
                except OSError:
                    continue  # vanished between the listing and the stat
                if e.is_dir(follow_symlinks=False):
                    below.append(Path(e.path))
        level = below
    return newest


class _Columns:
    """Growable column arrays (capacity doubles), so appending k rows costs O(k), not O(rows so far).

    `frame()` wraps views of the filled prefix without copying; later appends write past that prefix
    (or into new arrays after a growth), so a frame handed out earlier never changes under its holder.
    """

    INT_COLUMNS = ("step", SEQ_COLUMN)

    def __init__(self) -> None:
        self.n = 0
        self.cap = 0
        self.cols: dict[str, np.ndarray] = {}

    def _empty(self, name: str, cap: int) -> np.ndarray:
        if name in self.INT_COLUMNS:
            return np.zeros(cap, dtype=np.int64)
        return np.full(cap, np.nan, dtype=np.float64)

    def _grow(self, need: int) -> None:
        cap = max(need, 2 * self.cap, 1024)
        for name, old in self.cols.items():
            arr = self._empty(name, cap)
            arr[: self.n] = old[: self.n]
            self.cols[name] = arr
        self.cap = cap

    def append(self, chunk: pd.DataFrame) -> None:
        k = len(chunk)
        if self.n + k > self.cap:
            self._grow(self.n + k)
        # the float columns as one (k, C) block: `chunk[name]` per column costs ~90 us in pandas (a Series and a
        # copy of the chunk's attrs each), 1.7 s for a step of 20,000 tags (issue 38)
        floats = [c for c, t in chunk.dtypes.items() if t == np.float64 and c not in self.INT_COLUMNS]
        block = chunk[floats].to_numpy() if len(floats) > 1 else None
        for j, name in enumerate(floats if block is not None else ()):
            if name not in self.cols:
                self.cols[name] = self._empty(name, self.cap)
            self.cols[name][self.n : self.n + k] = block[:, j]
        for name in chunk.columns if block is None else chunk.columns.difference(floats, sort=False):
            if name not in self.cols:
                self.cols[name] = self._empty(name, self.cap)
            values = chunk[name]
            if name in self.INT_COLUMNS:
                self.cols[name][self.n : self.n + k] = values.to_numpy(dtype=np.int64)
            elif values.dtype == np.float64:  # already numbers (most chunks): no per-column conversion pass
                self.cols[name][self.n : self.n + k] = values.to_numpy()
            else:  # metrics are numbers; a reader reports what it could not parse, here it is null
                self.cols[name][self.n : self.n + k] = pd.to_numeric(values, errors="coerce").to_numpy(
                    dtype=np.float64, na_value=np.nan)
        self.n += k

    def frame(self, columns: list[str]) -> pd.DataFrame:
        return pd.DataFrame({c: self.cols[c][: self.n] for c in columns}, copy=False)


class MetricsTable:
    """Accumulates metric chunks into one frame: one row per step; of a column, the last value a step was given.

    Each chunk has a `step` column and a `_seq` column that orders writes (a part number, a line number; a chunk
    without one comes after every chunk before it); among rows with the same step, each column keeps its value
    from the row with the highest `_seq` that has one: a step whose keys arrive in two refreshes (TensorBoard and
    wandb flush a step's scalars one by one) is one row with all of them, and a null never erases a value.
    Appending steps past the current last step (the live case) costs the size of the chunk; anything else (a
    resume, a restart, steps out of order, the rest of a step) rebuilds the table with a stable sort.
    """

    def __init__(self) -> None:
        self._cols = _Columns()
        self._cols.append(pd.DataFrame({"step": pd.Series(dtype="int64"), SEQ_COLUMN: pd.Series(dtype="int64")}))
        self._public: pd.DataFrame | None = None
        self.duplicate_steps: list[int] = []  # steps with a column written twice, seen at the last rebuild
        self._next_seq = 0  # the _seq a chunk without one starts at: after every row appended so far

    def append(self, chunk: pd.DataFrame) -> int:
        """Merge a chunk in; return the number of rows it holds."""
        if not len(chunk):
            return 0
        if SEQ_COLUMN not in chunk:
            chunk = chunk.assign(**{SEQ_COLUMN: np.arange(self._next_seq, self._next_seq + len(chunk))})
        self._next_seq = max(self._next_seq, int(chunk[SEQ_COLUMN].max()) + 1)
        steps = chunk["step"].to_numpy()
        last = self._cols.cols["step"][self._cols.n - 1] if self._cols.n else None
        in_order = len(steps) < 2 or bool(np.all(np.diff(steps) > 0))
        if in_order and (last is None or steps[0] > last):
            self._cols.append(chunk)
        else:
            self._rebuild(chunk)
        self._public = None
        return len(chunk)

    def _rebuild(self, chunk: pd.DataFrame) -> None:
        current = self._cols.frame(list(self._cols.cols))
        merged = pd.concat([current, chunk], ignore_index=True, sort=False)
        merged = merged.sort_values(["step", SEQ_COLUMN], kind="stable")
        repeated = merged["step"].duplicated(keep=False)
        if not repeated.any():
            self.duplicate_steps = []
        else:
            # a step written twice is a duplicate only where one column got two values; keys of one step split
            # over two writes are its parts
            values = merged.loc[repeated].drop(columns=[SEQ_COLUMN])
            counts = values.drop(columns=["step"]).notna().groupby(values["step"]).sum()
            self.duplicate_steps = sorted(counts.index[(counts > 1).any(axis=1)].tolist())
            # groupby.last takes each column's last non-null value in `_seq` order
            merged = merged.groupby("step", sort=True, as_index=False).last()
        self._cols = _Columns()
        self._cols.append(merged)

    def reset(self) -> None:
        self.__init__()

    def frame(self) -> pd.DataFrame:
        if self._public is None:
            cols = [c for c in ordered_columns(self._cols.cols) if c != SEQ_COLUMN]
            self._public = self._cols.frame(cols)
        return self._public


# meta.info key a reader sets when it joined files (or stretches of rows) to one run as the same run resumed or
# restarted from a checkpoint: the first step of each joined part, ascending (Run.resumed_at)
RESUMED_AT = "resumed_at"


class Run:
    """A run in the canonical schema. Subclasses implement `_read_new()`; see the module docstring."""

    # True when the reader's format keeps a logged NaN apart from a missing value and lists them
    # (chunk.attrs[NAN_AT]); `nan_at` then says where each column was logged as NaN.
    nan_known = False

    def __init__(self, path: Path | str, meta: RunMeta, stale_after_s: float = STALE_AFTER_S) -> None:
        self.path = Path(path)
        self.meta = meta
        self.problems: list[Problem] = []
        self.stale_after_s = stale_after_s
        self._table = MetricsTable()
        self.nan_at: dict[str, set[int]] = {}
        self._samples = pd.DataFrame({c: pd.Series(dtype=t if t != "string" else "object")
                                      for c, (t, _) in SAMPLES.items()})
        self._eval_samples = self._samples  # the same schema; validation generations, no training rollout

    # -- what subclasses provide ------------------------------------------------------------
    def _read_new(self) -> list[pd.DataFrame]:
        """Metric chunks written since the last call (each with `step`, optionally `_seq`)."""
        raise NotImplementedError

    # -- the public surface -----------------------------------------------------------------
    @property
    def name(self) -> str:
        return self.meta.name or self.path.name

    @property
    def metrics(self) -> pd.DataFrame:
        return self._table.frame()

    @property
    def status(self) -> str:
        return self.meta.effective_status(stale_after_s=self.stale_after_s)

    @property
    def last_update(self) -> float | None:
        """When the run last wrote (unix s): its writer's heartbeat when it has one (while it runs; its end once
        it ended); for a run without one that has ended (or whose state is unknown), the last wall time it logged:
        a published log's files are as new as the clone ("14 min ago" for a run of months ago). Else the newest
        modification time of its files (last_update_of)."""
        # a writer's heartbeat is the run's own record (its end once it ended; grpo-import's the source's end), and
        # what the Runs table reads without opening the run (last_update_of): it wins, so both say the same
        ended = self.meta.status != "running"
        if self.meta.heartbeat is None and ended and (own := self._last_wall_time()) is not None:
            return own
        return last_update_of(self.meta, self.path)

    def _last_wall_time(self) -> float | None:
        frame = self.metrics
        if "wall_time" not in frame:
            return None
        t = pd.to_numeric(frame["wall_time"], errors="coerce").to_numpy(dtype="float64")
        t = t[np.isfinite(t) & (t > 0)]
        return float(t.max()) if len(t) else None

    @property
    def resumed_at(self) -> list[int]:
        """The steps where a part the reader joined to this run as a resume or restart takes over (meta.info
        RESUMED_AT); [] when none was joined or the reader does not say."""
        return sorted(int(s) for s in (self.meta.info or {}).get(RESUMED_AT, ()) or ())

    @property
    def last_step(self) -> int | None:
        frame = self.metrics
        return int(frame["step"].iloc[-1]) if len(frame) else None

    def refresh(self) -> int:
        """Read what is new since the last call; return the number of new metric rows read."""
        n = 0
        for chunk in self._read_new():
            chunk = self._names_kept(chunk)
            if chunk.columns.has_duplicates:
                chunk = self._one_column_each(chunk)
            chunk = place_levels(chunk, self.meta.config or {}, self.meta.info)  # a key's level from the config
            if new_nans := chunk.attrs.get(NAN_AT):
                # copied, not updated in place: a page drawing the run from another thread keeps a whole one
                self.nan_at = {**self.nan_at, **{k: self.nan_at.get(k, set()) | set(v) for k, v in new_nans.items()}}
            n += self._table.append(chunk)
        self._note_duplicates()
        return n

    def samples(self, step_min: int | None = None, step_max: int | None = None) -> pd.DataFrame:
        """Sample rows with step_min <= step <= step_max (either bound optional), sorted."""
        s = self._samples
        if step_min is not None:
            s = s[s["step"] >= step_min]
        if step_max is not None:
            s = s[s["step"] <= step_max]
        return s.reset_index(drop=True)

    def eval_samples(self) -> pd.DataFrame:
        """Validation generations (a prompt, a response, its score), in the samples schema, sorted; kept apart from
        `samples()`, which the diagnosis reads as training rollouts. Empty where the format logs none."""
        return self._eval_samples.reset_index(drop=True)

    def until(self, step: int) -> Run:
        """A frozen copy of the run as it stood at `step`: metrics and samples up to it, nothing to refresh.

        For post-mortems ("what would the diagnosis have said at step 40?") and for measuring how soon a
        rule fires, by replaying a finished run step by step.
        """
        return _Prefix(self, step)

    def _names_kept(self, chunk: pd.DataFrame) -> pd.DataFrame:
        """The chunk without columns whose name is no metric's (over MAX_NAME_CHARS characters, or not text);
        a note says how many and how long."""
        odd = [i for i, c in enumerate(chunk.columns) if not isinstance(c, str) or len(c) > MAX_NAME_CHARS]
        if not odd:
            return chunk
        longest = max(len(str(chunk.columns[i])) for i in odd)
        self._note(Problem("metrics", f"{len(odd)} column(s) with a name of up to {longest:,} characters, no "
                                      f"metric's name (over {MAX_NAME_CHARS:,}); left out"))
        keep = [i for i in range(chunk.shape[1]) if i not in set(odd)]
        out = chunk.iloc[:, keep]
        out.attrs = {k: ({n: v for n, v in a.items() if n in out.columns} if isinstance(a, dict) else a)
                     for k, a in chunk.attrs.items()}
        return out

    def _note(self, problem: Problem) -> None:
        if problem not in self.problems:
            self.problems.append(problem)

    def _one_column_each(self, chunk: pd.DataFrame) -> pd.DataFrame:
        """A chunk holding two columns of one name (a reader renamed two keys alike) as one column each, the
        first value of a step winning; a note names them. The table could not hold such a chunk."""
        out: dict[str, pd.Series] = {}
        for i, name in enumerate(chunk.columns):
            col = chunk.iloc[:, i]
            out[name] = col if name not in out else out[name].combine_first(col)
        twice = list(dict.fromkeys(chunk.columns[chunk.columns.duplicated()]))
        problem = Problem("metrics", f"{', '.join(map(str, twice[:5]))}: two columns of one name; one kept, the "
                                     "first value of a step")
        if problem not in self.problems:
            self.problems.append(problem)
        frame = pd.DataFrame(out, index=chunk.index)
        frame.attrs = dict(chunk.attrs)
        return frame

    def _note_duplicates(self) -> None:
        _ = self.metrics  # merge now, so duplicates are known
        dups = self._table.duplicate_steps
        if not dups or self.meta.resumes:
            return  # after a resume, re-logged steps are expected and noted in run.json
        shown = ", ".join(map(str, dups[:5])) + (" ..." if len(dups) > 5 else "")
        problem = Problem("metrics", f"{len(dups)} step(s) logged more than once ({shown}); the last write is kept")
        self.problems = [p for p in self.problems if not (p.file == "metrics" and "logged more" in p.message)]
        self.problems.append(problem)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r} source={self.meta.source} steps={len(self.metrics)}>"


class _Prefix(Run):
    """`Run.until(step)`: the same metadata, the rows up to `step`; refresh() reads nothing."""

    def __init__(self, run: Run, step: int) -> None:
        super().__init__(run.path, run.meta, run.stale_after_s)
        self.nan_known = run.nan_known
        self.nan_at = {k: {s for s in v if s <= step} for k, v in run.nan_at.items()}
        frame = run.metrics
        self._table.append(frame[frame["step"] <= step])
        self._samples = run.samples(step_max=step)
        ev = run.eval_samples()
        self._eval_samples = ev[ev["step"] <= step]
        self.problems = list(run.problems)

    def _read_new(self) -> list[pd.DataFrame]:
        return []


@dataclass(frozen=True)
class RunInfo:
    """One line of the runs table, read cheaply (run.json and file times; no metrics)."""

    path: Path
    name: str
    source: str
    status: str  # running, finished, failed, stopped, unknown, stale
    last_step: int | None
    last_update: float | None  # Unix seconds
    error: str | None = None
    phase: dict | None = None  # run.json's `phase`: what a running run does before its first step
