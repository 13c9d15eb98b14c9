"""Reading run folders of our own format: load_run, live refresh, and the runs-table line.

A reader only ever reads whole part files (they are written atomically), remembers which sequence
numbers it has taken, and on refresh() reads just the parts that are new. A corrupt or truncated part is
skipped and listed in `problems`; the rest of the run still loads.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from collectors.meta import RUN_JSON, STALE_AFTER_S, RunError, RunMeta, read_meta
from collectors.oserrors import cannot_read
from collectors.run import NAN_AT, Problem, Run, RunInfo, last_update_of
from collectors.schema import SAMPLES
from collectors.store.parts import SEQ_COLUMN, Part, list_parts


def logged_nans(table: pa.Table) -> dict[str, list[int]]:
    """{column: steps} where a part holds a NaN (not a null): Parquet keeps the two apart, pandas does not."""
    out = {}
    steps = None
    for name in table.column_names:
        col = table[name]
        if not pa.types.is_floating(col.type):
            continue
        nan = pc.fill_null(pc.is_nan(col), False)
        if pc.any(nan).as_py():
            steps = table["step"] if steps is None else steps
            out[name] = pc.filter(steps, nan).to_pylist()
    return out


_ARROW = {"int64": pa.int64(), "float64": pa.float64(), "bool": pa.bool_(), "string": pa.string()}


def _wanted(kind: str, name: str) -> pa.DataType | None:
    """The type a part's column must have: `step`/`_seq` int64; metrics float64; samples their schema type."""
    if name in ("step", SEQ_COLUMN):
        return pa.int64()
    if kind == "metrics":
        return pa.float64()
    if name in SAMPLES:
        return _ARROW[SAMPLES[name][0]]
    return None  # an extra sample column stays as written


def conform(kind: str, table: pa.Table) -> tuple[pa.Table | None, str | None]:
    """A part's table with every column in the run format's type, or (None, why) when the part is unusable.

    A hand-written or damaged part can hold a column of another type (a step as text, a reward as a list);
    a numeric column is cast (int -> float), a column that cannot be is dropped and named, so one bad
    column costs that column, not the run, and parts of different vintages still concatenate.
    """
    try:
        names = table.column_names
    except UnicodeDecodeError:
        return None, "a column name is not UTF-8 text; skipped"
    if "step" not in names:
        return None, "part has no 'step' column; skipped"
    if len(set(table.column_names)) < table.num_columns:
        return None, "part has duplicate column names; skipped"
    pandas_meta = (table.schema.metadata or {}).get(b"pandas")
    if pandas_meta is not None:
        try:
            json.loads(pandas_meta)
        except (ValueError, RecursionError):  # damaged metadata (index names): the columns are still good
            table = table.replace_schema_metadata(None)
    try:
        table.validate(full=True)  # text that is no UTF-8 would fail later, when the frame is built
    except pa.ArrowInvalid as e:
        return None, f"damaged data ({' '.join(str(e).split())[:120]}); skipped"
    dropped = []
    for name in list(table.column_names):
        col = table[name]
        want = _wanted(kind, name)
        if want is None or col.type == want:
            continue
        try:
            table = table.set_column(table.schema.get_field_index(name), name, col.cast(want))
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError):
            if name == "step":
                return None, f"column 'step' is {col.type}, not integers; skipped"
            table = table.drop_columns([name])
            dropped.append(f"{name!r} ({col.type})")
    notes = [f"column(s) {', '.join(dropped)} not of the run format's type; ignored"] if dropped else []
    if missing := table["step"].null_count:  # a damaged part: a row of no step belongs nowhere (and a null
        # cast to an integer later is -2**63, a step the charts and the rules would take as real)
        table = table.filter(pc.is_valid(table["step"]))
        notes.append(f"{missing:,} row(s) with an empty 'step' left out")
    return table, "; ".join(notes) or None


# Lists of a folder's parts per read: a merge replaces parts at most once per flush, so a reader racing
# the writer rarely needs a second list, practically never a third.
RELIST_TRIES = 5


class NativeRun(Run):
    """A run folder written by RunWriter (or by hand, following docs/run-format.md)."""

    nan_known = True  # Parquet parts keep null ("not measured") and NaN apart

    def __init__(self, path: Path | str, stale_after_s: float = STALE_AFTER_S) -> None:
        path = Path(path)
        if not path.is_dir():
            raise RunError(f"{path}: not a folder")
        # lexists: a run.json linked to itself is still this run's file, refused when read (not "no run.json")
        has_json, has_metrics = os.path.lexists(path / RUN_JSON), (path / "metrics").is_dir()
        if not has_json and not has_metrics:
            raise RunError(f"{path}: not a run folder (no run.json and no metrics/)")
        super().__init__(path, RunMeta(name=path.name, status="unknown"), stale_after_s)
        self._meta_mtime: float | None = None
        self._known_id: str | None = None  # run_id of the run.json read last
        self._seen: dict[str, set[int]] = {"metrics": set(), "samples": set()}
        self._bad: dict[Path, float | None] = {}  # corrupt file -> its ctime when found bad
        self._strangers: set[Path] = set()
        self._sample_parts: list[Part] = []
        self._sample_steps: dict[Path, tuple[int, int] | None] = {}
        self.refresh()

    # -- run.json ---------------------------------------------------------------------------
    def _read_meta(self) -> None:
        path = self.path / RUN_JSON
        try:
            mtime = path.stat().st_mtime_ns
        except FileNotFoundError:
            self._replace_problem(RUN_JSON, "missing; loaded the parts without metadata (status unknown)")
            return
        except OSError as e:  # a link to itself, a folder that may not be searched: said, the parts still load
            self._meta_mtime = None
            self._replace_problem(RUN_JSON, f"{cannot_read(RUN_JSON, e)}; metadata ignored")
            return
        if mtime == self._meta_mtime:
            return
        self._meta_mtime = mtime
        try:
            meta = read_meta(self.path)
        except RunError as e:
            self._replace_problem(RUN_JSON, str(e).removeprefix(f"{path}: ") + "; metadata ignored")
            return
        if self._known_id is not None and meta.run_id != self._known_id:
            self._forget_parts()  # another run now lives in this folder (deleted and written again)
        self._known_id = meta.run_id
        self.meta = meta
        self._replace_problem(RUN_JSON, None)

    def _forget_parts(self) -> None:
        """Drop everything read so far; the next read takes the folder's parts from the start."""
        self._table.reset()
        self._seen = {"metrics": set(), "samples": set()}
        self._bad.clear()
        self._sample_steps.clear()
        self._strangers.clear()
        self.problems = [Problem(self.path.name, "the folder now holds another run (a new run_id); read again")]

    def _replace_problem(self, file: str, message: str | None) -> None:
        self.problems = [p for p in self.problems if p.file != file]
        if message:
            self.problems.append(Problem(file, message))

    # -- parts ------------------------------------------------------------------------------
    def _new_parts(self, kind: str) -> list[Part]:
        try:
            parts, strangers = list_parts(self.path / kind)
        except OSError as e:  # a folder this user may not list: its parts are not read, and that is said
            self._replace_problem(kind, f"{cannot_read(kind + '/', e)}; its parts are not read")
            return [], []
        self._replace_problem(kind, None)
        for s in strangers:
            if s not in self._strangers:
                self._strangers.add(s)
                self.problems.append(Problem(f"{kind}/{s.name}", "not a part file; ignored"))
        seen = self._seen[kind]
        return [q for q in parts if not seen.issuperset(q.seqs)], parts

    def _read_part(self, kind: str, q: Part, columns: list[str] | None = None) -> pa.Table | None:
        """Read one part, or None (and a problem) when it is corrupt. A part removed by a concurrent
        merge is simply not there (None, no problem): the caller lists the parts again and reads the merge,
        which the writer completes before it deletes what it merged."""
        name = f"{kind}/{q.path.name}"
        mtime: float | None = None
        try:
            st = q.path.stat()
            mtime = st.st_ctime  # a chmod changes it (and not the mtime): a part made readable is read again
            if self._bad.get(q.path) == mtime:
                return None
            table = pq.read_table(q.path, columns=columns)  # a refused open: PermissionError, errno 13
        except FileNotFoundError:
            return None
        except (pa.ArrowException, OSError) as e:
            if isinstance(e, OSError) and e.errno is not None:  # no permission, a link to itself: in words
                return self._skip(q, mtime, Problem(name, f"{cannot_read(name, e)}; skipped"))
            # a damaged file: pyarrow's plain OSError (no errno) or its own exceptions, whose text says where
            return self._skip(q, mtime, Problem(name, f"unreadable Parquet part skipped ({e})"))
        table, message = conform(kind, table)
        if table is None:
            self._bad[q.path] = mtime
        elif SEQ_COLUMN in table.column_names and (gaps := table[SEQ_COLUMN].null_count):
            # a damaged part's write order: its rows were written with the part, so its own number stands in
            seq = table.schema.get_field_index(SEQ_COLUMN)
            table = table.set_column(seq, SEQ_COLUMN, pc.fill_null(table[SEQ_COLUMN], pa.scalar(q.lo, pa.int64())))
            filled = f"{gaps:,} empty value(s) in column {SEQ_COLUMN!r}; the part's own number used as their order"
            message = "; ".join(filter(None, [message, filled]))
        problem = Problem(f"{kind}/{q.path.name}", message or "")
        if message and problem not in self.problems:  # samples are read again per query: name it once
            self.problems.append(problem)
        return table

    def _skip(self, q: Part, mtime: float | None, problem: Problem) -> None:
        """A part that cannot be read: remembered (not tried again until it changes) and said once."""
        self._bad[q.path] = mtime
        if problem not in self.problems:
            self.problems.append(problem)

    def _read_new(self) -> list[pd.DataFrame]:
        self._read_meta()
        chunks: list[pd.DataFrame] = []
        for _ in range(RELIST_TRIES):  # a part merged away while read: list again and read its merge
            if not self._read_metric_parts(chunks):
                break
        self._refresh_sample_index()
        return chunks

    def _read_metric_parts(self, chunks: list[pd.DataFrame]) -> bool:
        """Append the unseen metric parts' frames to `chunks`; True when a listed part vanished meanwhile."""
        new, _ = self._new_parts("metrics")
        seen = self._seen["metrics"]
        vanished = False
        for q in new:
            table = self._read_part("metrics", q)
            if table is None:
                vanished = vanished or not q.path.exists()
                continue
            frame = table.to_pandas()
            frame.attrs[NAN_AT] = logged_nans(table)
            if SEQ_COLUMN not in frame:
                frame[SEQ_COLUMN] = q.lo  # a hand-written part: its file order is its write order
            elif seen.intersection(q.seqs):
                frame = frame[~frame[SEQ_COLUMN].isin(seen)]  # a merge of parts partly read already
            seen.update(q.seqs)
            chunks.append(frame)
        return vanished

    # -- samples, read lazily -----------------------------------------------------------------
    def _refresh_sample_index(self) -> None:
        _, parts = self._new_parts("samples")
        self._sample_parts = parts
        for q in parts:
            self._step_range(q)  # footer only, once per part: later range queries skip parts unopened

    def _step_range(self, q: Part) -> tuple[int, int] | None:
        """Min and max step of a part from its footer statistics (no data read)."""
        if q.path not in self._sample_steps:
            try:
                md = pq.ParquetFile(q.path).metadata
                idx = md.schema.to_arrow_schema().get_field_index("step")
                chunks = [md.row_group(i).column(idx) for i in range(md.num_row_groups)] if idx >= 0 else []
                # a chunk whose type disagrees with the schema's (a damaged footer) aborts the whole process
                # when its statistics are built (pyarrow 26 throws a C++ exception that nothing catches)
                typed = idx >= 0 and all(c.physical_type == md.schema.column(idx).physical_type for c in chunks)
                stats = [c.statistics for c in chunks] if typed else []
                ok = stats and all(s is not None and s.has_min_max for s in stats)
                self._sample_steps[q.path] = (int(min(s.min for s in stats)), int(max(s.max for s in stats))) \
                    if ok else None
            except (pa.ArrowException, OSError, IndexError, TypeError, ValueError):  # a damaged footer: read it all
                self._sample_steps[q.path] = None
        return self._sample_steps[q.path]

    def samples(self, step_min: int | None = None, step_max: int | None = None) -> pd.DataFrame:
        lo = -np.inf if step_min is None else step_min
        hi = np.inf if step_max is None else step_max
        for _ in range(RELIST_TRIES):
            tables, vanished = self._sample_tables(lo, hi)
            if not vanished:
                break
            self._refresh_sample_index()  # merged away since the last refresh: read the merge instead
        if not tables:
            return super().samples(step_min, step_max)
        frame = pa.concat_tables(tables, promote_options="permissive").to_pandas()
        frame = frame[(frame["step"] >= lo) & (frame["step"] <= hi)]
        frame = self._latest_session_only(frame)
        keys = [c for c in ("step", "group", "sample") if c in frame.columns]
        frame = frame.drop(columns=[SEQ_COLUMN]).sort_values(keys, kind="stable").reset_index(drop=True)
        cols = [c for c in SAMPLES if c in frame.columns] + sorted(c for c in frame.columns if c not in SAMPLES)
        return frame[cols]

    def _sample_tables(self, lo: float, hi: float) -> tuple[list[pa.Table], bool]:
        tables, vanished = [], False
        for q in self._sample_parts:
            rng = self._step_range(q)
            if rng is not None and (rng[1] < lo or rng[0] > hi):
                continue
            table = self._read_part("samples", q)
            if table is None:
                vanished = vanished or not q.path.exists()
                continue
            if SEQ_COLUMN not in table.column_names:
                table = table.append_column(SEQ_COLUMN, pa.array([q.lo] * table.num_rows, pa.int64()))
            tables.append(table)
        return tables, vanished

    def _latest_session_only(self, frame: pd.DataFrame) -> pd.DataFrame:
        """After a resume, a step's samples come from the newest session that logged that step."""
        bounds = sorted(r.get("samples_seq", 0) for r in self.meta.resumes)
        if not bounds or not len(frame):
            return frame
        session = np.searchsorted(np.asarray(bounds), frame[SEQ_COLUMN].to_numpy(), side="right")
        newest = pd.Series(session, index=frame.index).groupby(frame["step"]).transform("max")
        return frame[session == newest.to_numpy()]


def load_run(path: Path | str, stale_after_s: float = STALE_AFTER_S) -> NativeRun:
    """Open a run folder of our format. Raises RunError (naming the folder) when it is not a run."""
    return NativeRun(path, stale_after_s=stale_after_s)


def native_info(path: Path, stale_after_s: float = STALE_AFTER_S) -> RunInfo:
    try:
        meta = read_meta(path)
    except RunError as e:
        return RunInfo(path, path.name, "unknown", "unknown", None, _newest_mtime(path), str(e))
    return RunInfo(path, meta.name or path.name, meta.source, meta.effective_status(stale_after_s=stale_after_s),
                   meta.last_step, last_update_of(meta, path), meta.error,
                   meta.phase if meta.status == "running" else None)


def _newest_mtime(folder: Path) -> float | None:
    try:
        return max((e.stat().st_mtime for e in os.scandir(folder)), default=None)
    except OSError:
        return None
