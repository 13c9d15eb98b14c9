"""RunWriter: append a run's steps and samples to a run folder, safely, from a training loop.

Buffered: a flush happens when `flush_every` steps are buffered or `flush_interval_s` has passed since
the first buffered row, whichever comes first (a background thread watches the clock, so a step logged
just before a long pause still reaches a live reader), on `flush()`, on close, on an exception inside
`with`, and on SIGTERM/SIGINT. Each flush writes one Parquet part per folder atomically; small parts are
merged in tiers so a long run keeps a few dozen files.
"""

from __future__ import annotations

import atexit
import math
import re
import signal
import threading
import time
import traceback
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from collectors.meta import (
    HEARTBEAT_INTERVAL_S,
    RUN_JSON,
    RunError,
    RunMeta,
    flatten_config,
    read_meta,
    write_meta,
)
from collectors.schema import SAMPLE_REQUIRED, SAMPLES
from collectors.store.atomic import write_parquet_atomic
from collectors.store.parts import SEQ_COLUMN, list_parts, next_seq, part_name, plan_merge

FLUSH_EVERY = 200  # steps; 10 ms steps then write ~one part per 2 s, not one per step
FLUSH_INTERVAL_S = 1.0  # a live reader polling every second sees a step within ~2 s
MERGE_FANOUT = 8  # parts per level before a merge: <= 7 files per level, levels = log8(flushes)

_ARROW_TYPES = {"int64": pa.int64(), "float64": pa.float64(), "bool": pa.bool_(), "string": pa.string()}


class Interrupted(KeyboardInterrupt):
    """Raised in the main thread by SIGTERM/SIGINT so that `with RunWriter(...)` closes the run."""


def _to_float(key: str, step: int, value: Any) -> float | None:
    if value is None:
        return None  # null: the metric was not measured this step
    if isinstance(value, str):
        raise ValueError(f"metric {key!r} at step {step}: expected a number, got the string {value!r}")  # noqa: TRY004 - callers catch ValueError for every bad value
    try:
        return float(value)
    except (TypeError, ValueError):
        raise ValueError(f"metric {key!r} at step {step}: expected a number, got {type(value).__name__}") from None


class _Folder:
    """One append-only folder of parts (metrics/ or samples/): sequence numbers and tiered merges."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.mkdir(parents=True, exist_ok=True)
        for tmp in path.glob(".*.tmp"):  # leftovers of a write that a crash interrupted
            tmp.unlink(missing_ok=True)
        self.seq = next_seq(list_parts(path)[0])

    def write(self, table: pa.Table) -> int:
        seq = self.seq
        table = table.append_column(SEQ_COLUMN, pa.array([seq] * table.num_rows, pa.int64()))
        write_parquet_atomic(self.path / part_name(seq), table)
        self.seq += 1
        self._compact()
        return seq

    def _compact(self) -> None:
        try:
            while (group := plan_merge(list_parts(self.path)[0], MERGE_FANOUT)) is not None:
                merged = pa.concat_tables([pq.read_table(q.path) for q in group], promote_options="permissive")
                target = self.path / part_name(group[0].lo, group[-1].hi, group[0].level + 1)
                write_parquet_atomic(target, merged)  # readers now see the merge and skip the parts it covers
                for q in group:
                    q.path.unlink(missing_ok=True)
        except OSError:
            pass  # a merge only saves files; its inputs are intact and the next flush tries again


class RunWriter:
    """Write a run folder in the grposcope run format (docs/run-format.md).

    Opening a folder that already holds a run resumes it: sequence numbers continue, a note and a resume
    record go into run.json, and steps logged again replace the older rows when read.
    """

    def __init__(self, path: Path | str, name: str | None = None, config: Mapping[str, Any] | None = None,
                 source: str = "grpo_core", flush_every: int = FLUSH_EVERY,
                 flush_interval_s: float = FLUSH_INTERVAL_S, handle_signals: bool = True) -> None:
        self.path = Path(path)
        self.flush_every = max(1, int(flush_every))
        self.flush_interval_s = float(flush_interval_s)
        self._lock = threading.RLock()
        self._steps: list[dict[str, Any]] = []
        self._samples: list[pd.DataFrame | list[dict[str, Any]]] = []
        self._oldest: float | None = None  # time the oldest buffered row was logged
        self._closed = False
        self._error: str | None = None  # why the last write failed (a full disk); raised at the next call
        self._relogged_noted = False
        self.meta, self._max_step_before = self._open(name, config, source)
        self._metrics = _Folder(self.path / "metrics")
        self._sample_parts = _Folder(self.path / "samples")
        if self._max_step_before is not None:
            self.meta.resumes.append({"time": time.time(), "metrics_seq": self._metrics.seq,
                                      "samples_seq": self._sample_parts.seq})
        self._last_beat = 0.0
        self._beat()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch_clock, name="grposcope-writer", daemon=True)
        self._thread.start()
        self._old_handlers: dict[int, Any] = {}
        if handle_signals:
            self._install_signal_handlers()
        atexit.register(self._at_exit)

    # -- opening ----------------------------------------------------------------------------
    def _open(self, name, config, source) -> tuple[RunMeta, int | None]:
        if self.path.exists() and not self.path.is_dir():
            raise RunError(f"{self.path}: exists and is not a folder")
        if (self.path / RUN_JSON).exists():
            meta = read_meta(self.path)
            max_step = self._max_logged_step()
            meta.notes.append(f"resumed at {time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())}"
                              + (f" after step {max_step}" if max_step is not None else ""))
            if config is not None and flatten_config(dict(config)) != meta.config:
                meta.notes.append("config changed on resume; run.json holds the new one")
                meta.config = flatten_config(dict(config))
            meta.status, meta.error, meta.end_time, meta.phase = "running", None, None, None
            return meta, max_step
        if self.path.is_dir() and any(p for p in self.path.iterdir() if not p.name.startswith(".")):
            raise RunError(f"{self.path}: folder is not empty and holds no run.json; refusing to write a run into it")
        self.path.mkdir(parents=True, exist_ok=True)
        meta = RunMeta(name=name or self.path.name, source=source, config=flatten_config(dict(config or {})),
                       start_time=time.time(), status="running")
        return meta, None

    def _max_logged_step(self) -> int | None:
        best = None
        for q in list_parts(self.path / "metrics")[0]:
            try:
                col = pq.read_table(q.path, columns=["step"]).column("step")
            except (pa.ArrowInvalid, OSError):
                continue  # a corrupt part; the reader reports it
            if len(col):
                m = pc.max(col).as_py()
                best = m if best is None else max(best, m)
        return best

    # -- logging ----------------------------------------------------------------------------
    def log_step(self, step: int, metrics: Mapping[str, Any]) -> None:
        """Buffer one step's metrics. Values must be numbers (bool and int become float64) or None."""
        step = int(step)
        row: dict[str, Any] = {"step": step}
        for key, value in metrics.items():
            if key == "step":
                continue
            row[str(key)] = _to_float(str(key), step, value)
        row.setdefault("wall_time", time.time())
        with self._lock:
            self._check_open()
            if self._max_step_before is not None and step <= self._max_step_before and not self._relogged_noted:
                self.meta.notes.append(f"steps from {step} re-logged after the resume; the newer rows replace the older")
                self._relogged_noted = True
            self._steps.append(row)
            self.meta.phase = None  # steps now say what the run does; written with the next heartbeat or flush
            self.meta.last_step = step if self.meta.last_step is None else max(self.meta.last_step, step)
            self._touch()
            if len(self._steps) >= self.flush_every or self._due():
                self._flush_locked()

    def log_samples(self, rows: Iterable[Mapping[str, Any]] | pd.DataFrame) -> None:
        """Buffer sample rows (one per response); columns of schema.SAMPLES, texts optional.

        Rows given as dicts are kept as dicts (copied) and become one frame per flush: a frame per call costs
        more than the rest of a small trainer's logging of the step."""
        if isinstance(rows, pd.DataFrame):
            part: pd.DataFrame | list[dict[str, Any]] = rows.copy()
            columns = set(part.columns)
        else:
            part = [dict(row) for row in rows]
            columns = set().union(*part)
        if not len(part):
            return
        missing = [c for c in SAMPLE_REQUIRED if c not in columns]
        if missing:
            raise ValueError(f"log_samples: missing required column(s) {', '.join(missing)}")
        with self._lock:
            self._check_open()
            self._samples.append(part)
            self._touch()
            if self._due():
                self._flush_locked()

    def update_meta(self, **info: Any) -> None:
        """Record producer facts (e.g. the warm start's pass rate) under run.json's `info`."""
        with self._lock:
            self.meta.info.update(flatten_config(info))
            write_meta(self.path, self.meta)

    def set_phase(self, name: str | None, done: int | None = None, total: int | None = None,
                  **detail: Any) -> None:
        """Say in run.json what the run does before its first step (name, e.g. "warm_start", with its progress
        done of total and facts in detail); None clears it. The first logged step clears it too."""
        with self._lock:
            self._check_open()
            self.meta.phase = None if name is None else {
                "name": str(name), "done": None if done is None else int(done),
                "total": None if total is None else int(total), "detail": flatten_config(detail)}
            write_meta(self.path, self.meta)

    def flush(self) -> None:
        with self._lock:
            self._flush_locked()

    def close(self, status: str = "finished", error: str | None = None, ended_at: float | None = None) -> None:
        """Flush, then record the end in run.json. When the flush fails (a full disk) the run is recorded
        `failed` with that error; when even run.json cannot be written, RunError says so in one line.
        ended_at: when the run itself ended (unix s; grpo-import: the source's last logged time), else now."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            try:
                self._flush_locked()
            except RunError as e:
                status, error = "failed", "; ".join(x for x in (error, str(e)) if x)
            self.meta.status, self.meta.error = status, error
            self.meta.end_time = ended_at if ended_at is not None else time.time()
            self.meta.heartbeat, self.meta.phase = self.meta.end_time, None
            try:
                write_meta(self.path, self.meta)
            except OSError as e:
                raise RunError(f"{self.path}: cannot record the end of the run in run.json ({e.strerror or e})"
                               ) from None
            finally:
                self._stop.set()
                self._restore_signal_handlers()
                atexit.unregister(self._at_exit)

    # -- internals --------------------------------------------------------------------------
    def _check_open(self) -> None:
        if self._closed:
            raise RunError(f"{self.path}: the writer is closed")
        if self._error:
            raise RunError(self._error)

    def _touch(self) -> None:
        if self._oldest is None:
            self._oldest = time.monotonic()

    def _due(self) -> bool:
        return self._oldest is not None and time.monotonic() - self._oldest >= self.flush_interval_s

    def _flush_locked(self) -> None:
        """Write the buffers; on an OSError (a full disk) keep them, remember why, and raise RunError."""
        try:
            if self._steps:
                self._metrics.write(_metrics_table(self._steps))
                self._steps = []
            if self._samples:
                self._sample_parts.write(_samples_table(_one_frame(self._samples)))
                self._samples = []
            self._oldest = None
            self._beat(force=True)
        except OSError as e:
            self._error = (f"{self.path}: cannot write the run ({e.strerror or e}); the parts written before "
                           "are intact")
            raise RunError(self._error) from None
        self._error = None

    def _beat(self, force: bool = False) -> None:
        now = time.time()
        if force or now - self._last_beat >= HEARTBEAT_INTERVAL_S:
            self.meta.heartbeat = now
            write_meta(self.path, self.meta)
            self._last_beat = now

    def _watch_clock(self) -> None:
        while not self._stop.wait(min(0.25, self.flush_interval_s / 4)):
            with self._lock:
                if self._closed or self._error:
                    return  # the error surfaces in the caller's thread, at its next call or at close
                try:
                    if self._due():
                        self._flush_locked()
                    else:
                        self._beat()
                except (RunError, OSError) as e:
                    self._error = self._error or f"{self.path}: cannot write the run ({e})"
                    return

    def _install_signal_handlers(self) -> None:
        if threading.current_thread() is not threading.main_thread():
            return
        for sig in (signal.SIGTERM, signal.SIGINT):
            current = signal.getsignal(sig)
            if current in (signal.SIG_DFL, signal.default_int_handler):  # never override a user's handler
                self._old_handlers[sig] = current
                signal.signal(sig, self._on_signal)

    def _restore_signal_handlers(self) -> None:
        if threading.current_thread() is not threading.main_thread():
            return
        for sig, handler in self._old_handlers.items():
            signal.signal(sig, handler)
        self._old_handlers = {}

    def _on_signal(self, signum, frame) -> None:
        # Raise in the main thread: the with-block (or the caller) unwinds and close() records the stop.
        raise Interrupted(f"interrupted by {signal.Signals(signum).name}")

    def _at_exit(self) -> None:
        if not self._closed:
            try:
                self.close(status="failed", error="the process exited without closing the run")
            except (OSError, RunError):
                pass  # the run folder is gone (a temporary run); there is nothing left to record

    def __enter__(self) -> RunWriter:  # noqa: PYI034
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc is None:
            self.close("finished")
        else:
            text = "".join(traceback.format_exception_only(exc_type, exc)).strip()
            self.close("failed", error=text)


def _metrics_table(rows: list[dict[str, Any]]) -> pa.Table:
    """Rows of {name: float|None} -> a table with `step` int64 and every other column float64.

    Columns are the union of the rows' keys (a key first logged mid-run is kept; earlier rows get null).
    """
    names = list(dict.fromkeys(k for row in rows for k in row))
    arrays = [pa.array([row["step"] for row in rows], pa.int64())]
    arrays += [pa.array([row.get(k) for row in rows], pa.float64()) for k in names if k != "step"]
    return pa.table(arrays, names=["step"] + [k for k in names if k != "step"])


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def _no_surrogates(v: Any) -> Any:
    """A text with each lone surrogate (no UTF-8: bytes decoded with `surrogateescape`) as U+FFFD."""
    return _LONE_SURROGATE.sub("\ufffd", v) if isinstance(v, str) else v


def _one_frame(parts: list[pd.DataFrame | list[dict[str, Any]]]) -> pd.DataFrame:
    """The buffered sample parts as one frame, in order; consecutive dict rows become one frame at once."""
    frames: list[pd.DataFrame] = []
    rows: list[dict[str, Any]] = []
    for part in [*parts, None]:
        if isinstance(part, list):
            rows.extend(part)
            continue
        if rows:
            try:
                frames.append(pd.DataFrame(rows))
            except UnicodeEncodeError:  # pandas' Arrow-backed strings refuse lone surrogates too
                frames.append(pd.DataFrame([{k: _no_surrogates(v) for k, v in row.items()} for row in rows]))
            rows = []
        if part is not None:
            frames.append(part)
    return frames[0] if len(frames) == 1 else pd.concat(frames, ignore_index=True, sort=False)


def _samples_table(frame: pd.DataFrame) -> pa.Table:
    """Cast the known sample columns to their schema types; keep extra columns as they come."""
    for col, (kind, _) in SAMPLES.items():
        if col not in frame.columns:
            frame[col] = None
    arrays, names = [], []
    for col in frame.columns:
        kind = SAMPLES.get(col, (None, ""))[0]
        values = frame[col]
        if kind == "string":
            texts = [None if (v is None or (isinstance(v, float) and math.isnan(v))) else str(v) for v in values]
            try:
                arr = pa.array(texts, pa.string())
            except UnicodeEncodeError:  # a lone surrogate (bytes decoded with surrogateescape) is no UTF-8
                arr = pa.array([None if t is None else _no_surrogates(t) for t in texts], pa.string())
        elif kind is not None:
            try:
                arr = pa.array(values, _ARROW_TYPES[kind], from_pandas=True)
            except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, ValueError) as e:
                raise ValueError(f"log_samples: column {col!r} must be {kind}: {e}") from None
        else:
            try:
                arr = pa.array(values, from_pandas=True)
            except UnicodeEncodeError:
                arr = pa.array([_no_surrogates(v) for v in values], from_pandas=True)
        arrays.append(arr)
        names.append(col)
    return pa.table(arrays, names=names)
