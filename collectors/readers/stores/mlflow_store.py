"""MLflow's local tracking stores as Runs, read without mlflow: the `mlflow.db` SQLite backend (MLflow 3's
default tracking URI, `sqlite:///mlflow.db`) and the older `mlruns/` file store.

`mlflow.db` (mlflow/store/tracking/dbmodels/models.py): `runs` (run_uuid, name, status, start_time, end_time
in ms, lifecycle_stage, experiment_id), `metrics` (key, value, timestamp, step, is_nan: a NaN is stored as
value 0 with is_nan set, +-inf as +-1.7976931348623157e308, SqlAlchemyStore.sanitize_metric_value),
`params` (key, value text), `tags` (mlflow.runName...), `experiments` (name). It is opened read-only.

`mlruns/` (mlflow/store/tracking/file_store.py): `<experiment id>/<run id>/` holding `meta.yaml` (run_name,
status 1-5, start/end ms, lifecycle_stage), `metrics/<key>` with a line `timestamp value step` per logged
point (2 fields before steps existed, 5 with a dataset), `params/<key>` holding the value, `tags/<key>`; a
key holding `/` is a sub-folder path.

transformers' MLflowCallback (integrations/integration_utils.py, `on_log`) logs the trainer's dict as it is
(no `train/` prefix; eval keys `eval_<name>`) at step=state.global_step, after replacing each character
outside `[0-9A-Za-z_-. :/]` with `_`; its `setup` logs TrainingArguments (and the model config) as params,
dropping values longer than MLflow's limit (250 characters, 6000 in recent versions). Params are text in
MLflow: "8" is read back as 8, "0.04" as 0.04, "True" as true, "None" as null.

Targets: `mlflow.db` (or a folder holding it), an `mlruns/` folder, one experiment folder in it, or a run
folder; each run a launch of its own (`mlflow.db#<run id>`, or the run folder). Deleted runs are left out.
"""

from __future__ import annotations

import math
import os
import sqlite3
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from collectors.meta import RunError, RunMeta
from collectors.readers.columnar import Points, column_of, new_chunk
from collectors.readers.keymap import STEP_LIMIT
from collectors.readers.stores import sqlite as sq
from collectors.run import Problem, Run
from collectors.sources import launch_target, register_source, split_launch

DB_NAME = "mlflow.db"
NEEDED = {"runs": ("run_uuid", "name", "status", "start_time", "end_time", "lifecycle_stage", "experiment_id"),
          "metrics": ("key", "value", "timestamp", "step", "is_nan", "run_uuid"),
          "params": ("key", "value", "run_uuid"), "experiments": ("experiment_id", "name")}
FLOAT_MAX = 1.7976931348623157e308  # what MLflow's SQL store writes for an infinity
STATUS = {"RUNNING": "running", "SCHEDULED": "unknown", "FINISHED": "finished", "FAILED": "failed",
          "KILLED": "stopped"}
FILE_STATUS = {1: "RUNNING", 2: "SCHEDULED", 3: "FINISHED", 4: "FAILED", 5: "KILLED"}  # entities/run_status.py
MAX_ENTRIES = 500  # sub-folders looked at when recognising an mlruns/ folder


# -- recognising the layouts ------------------------------------------------------------------------------
def _is_run_dir(p: Path) -> bool:
    return (p / "meta.yaml").is_file() and ((p / "metrics").is_dir() or (p / "params").is_dir()
                                            or (p / "tags").is_dir())


def _subdirs(p: Path) -> list[Path]:
    try:
        entries = sorted(os.scandir(p), key=lambda e: e.name)[:MAX_ENTRIES]
    except OSError:
        return []
    return [Path(e.path) for e in entries if not e.name.startswith(".") and e.is_dir(follow_symlinks=False)]


def _is_experiment_dir(p: Path) -> bool:
    return (p / "meta.yaml").is_file() and not _is_run_dir(p) and any(_is_run_dir(d) for d in _subdirs(p))


def _is_mlruns(p: Path) -> bool:
    return not (p / "meta.yaml").exists() and any((d / "meta.yaml").is_file() and not _is_run_dir(d)
                                                  for d in _subdirs(p)) and any(_is_experiment_dir(d)
                                                                                for d in _subdirs(p))


def detect(target: str) -> bool:
    p = Path(target)
    if p.is_file():
        return p.name == DB_NAME or (p.suffix in (".db", ".sqlite") and sq.has_tables(p, NEEDED) is True)
    if not p.is_dir():
        return False
    return (p / DB_NAME).is_file() or _is_run_dir(p) or _is_experiment_dir(p) or _is_mlruns(p)


def parts(target: str) -> tuple[str, ...]:
    """The sub-folders a target's runs are read from (Source.parts): all of an mlruns/ store, an experiment or
    a run folder; of a folder holding mlflow.db only its mlruns/ (the file store a project may also have used)
    and mlartifacts/ (the server's artifact root), so run folders beside a stray mlflow.db are still found."""
    p = Path(target)
    if p.is_file():
        return ()
    if (p / DB_NAME).is_file():
        return tuple(d.name for d in _subdirs(p) if d.name in ("mlruns", "mlartifacts"))
    return tuple(d.name for d in _subdirs(p))


# MLflow writes a few hundred bytes of fields in a meta.yaml; PyYAML's pure-Python loader takes seconds per MB, so a
# file this large is no meta.yaml of MLflow's (a damaged or preallocated file: fuzz case endless_line, 17 MB, 14 s).
META_MAX_BYTES = 1 << 20


def _yaml(path: Path) -> dict[str, Any]:
    import yaml  # a base dependency (verl's Hydra configs)

    try:
        if path.stat().st_size > META_MAX_BYTES:
            raise RunError(f"{path}: not MLflow's meta.yaml ({path.stat().st_size / 1e6:.0f} MB; MLflow writes a "
                           f"few hundred bytes)")
        data = yaml.safe_load(path.read_text(encoding="utf-8", errors="replace"))
    except OSError as e:
        raise RunError(f"{path}: not readable ({e.strerror or 'the file cannot be opened'})") from None
    except (yaml.YAMLError, ValueError, RecursionError):
        raise RunError(f"{path}: not MLflow's meta.yaml (no YAML, or YAML nested too deep)") from None
    if not isinstance(data, dict):
        raise RunError(f"{path}: not MLflow's meta.yaml (no mapping of fields)")
    return data


def _live_runs(folder: Path) -> list[Path]:
    """The run folders of an experiment folder that are not deleted, oldest first."""
    out = []
    for d in _subdirs(folder):
        if not _is_run_dir(d):
            continue
        try:
            meta = _yaml(d / "meta.yaml")
        except RunError:
            out.append((0, d))  # listed: opening it says what is wrong
            continue
        if meta.get("lifecycle_stage") != "deleted":
            out.append((meta.get("start_time") or 0, d))
    return [d for _, d in sorted(out, key=lambda x: (x[0] if isinstance(x[0], (int, float)) else 0, x[1].name))]


def _db_launches(db: Path) -> list[str]:
    conn = sq.connect(db)
    try:
        sq.check_tables(conn, db, NEEDED, "an MLflow tracking database")
        rows = sq.query(conn, db, "SELECT run_uuid FROM runs WHERE lifecycle_stage != 'deleted' "
                                  "ORDER BY start_time, run_uuid")
    finally:
        conn.close()
    return [launch_target(db, r[0]) for r in rows]


def list_launches(target: str) -> list[str]:
    """Every run a target holds: `mlflow.db#RUN_ID` of the database, the run folders of an mlruns/ store
    or one experiment folder; [] for a run folder."""
    p = Path(target)
    if p.is_file():
        return _db_launches(p)
    if _is_run_dir(p):
        return []
    out = _db_launches(p / DB_NAME) if (p / DB_NAME).is_file() else []
    if (p / DB_NAME).is_file() and _is_mlruns(p / "mlruns"):
        out += list_launches(str(p / "mlruns"))  # a project folder that used both backends
    if _is_experiment_dir(p):
        return out + [str(d) for d in _live_runs(p)]
    for exp in _subdirs(p):
        if _is_experiment_dir(exp):
            try:
                if _yaml(exp / "meta.yaml").get("lifecycle_stage") == "deleted":
                    continue
            except RunError:
                pass
            out += [str(d) for d in _live_runs(exp)]
    return out


# -- values ---------------------------------------------------------------------------------------------
def param_value(text: str) -> Any:
    """A param as MLflow keeps it (str(value)) -> the value: ints, floats, True/False, None; else the text."""
    t = text.strip()
    if t in ("True", "False"):
        return t == "True"
    if t == "None":
        return None
    try:
        return int(t)
    except ValueError:
        pass
    try:
        value = float(t)
    except ValueError:
        return text
    return value if math.isfinite(value) else text


def _unclamp(values: np.ndarray) -> np.ndarray:
    """MLflow's SQL store writes +-inf as +-float max: read back as the infinity that was logged."""
    values = values.copy()
    values[values >= FLOAT_MAX] = math.inf
    values[values <= -FLOAT_MAX] = -math.inf
    return values


class _MlflowRun(Run):
    nan_known = True  # a NaN is stored as such (is_nan / "nan"); an unlogged key has no point

    def _points_run(self, points: Points) -> list[pd.DataFrame]:
        chunks, self._seq = new_chunk(points, self._table.frame(), self._seq, column_of)
        return chunks

    def _set_status(self, status: str | None) -> None:
        self.meta.status = STATUS.get(str(status), "unknown")
        if status == "KILLED":
            self.meta.error = "MLflow status KILLED: the run was ended from outside (a user, a scheduler)"


class MlflowDbRun(_MlflowRun):
    """One run of an `mlflow.db`."""

    def __init__(self, db: Path, run_id: str | None) -> None:
        super().__init__(launch_target(db, run_id) if run_id else db,
                         RunMeta(run_id=run_id or "", name=run_id or db.name, source="mlflow"))
        self.db = db
        self._conn = sq.connect(db)
        try:
            sq.check_tables(self._conn, db, NEEDED, "an MLflow tracking database")
            self._run_id = run_id or self._only_run()
            self._read_meta()
        except RunError:
            self._conn.close()
            raise
        self._last_rowid = 0
        self._seq = 0
        self.refresh()

    def _only_run(self) -> str:
        rows = sq.query(self._conn, self.db, "SELECT run_uuid FROM runs WHERE lifecycle_stage != 'deleted'")
        if len(rows) != 1:
            raise RunError(f"{self.db}: holds {len(rows)} runs; name one as {self.db}#RUN_ID")
        self.path = Path(launch_target(self.db, rows[0][0]))
        return rows[0][0]

    def _read_meta(self) -> None:
        rows = sq.query(self._conn, self.db, "SELECT r.name, r.status, r.start_time, r.end_time, e.name "
                                             "FROM runs r LEFT JOIN experiments e ON r.experiment_id = "
                                             "e.experiment_id WHERE r.run_uuid = ?", (self._run_id,))
        if not rows:
            raise RunError(f"{self.db}: no run {self._run_id!r} in this MLflow database")
        name, status, start, end, experiment = rows[0]
        self.meta.run_id = self._run_id
        self.meta.name = name or self._run_id
        self._set_status(status)
        self.meta.start_time = start / 1000 if isinstance(start, (int, float)) else None
        self.meta.end_time = end / 1000 if isinstance(end, (int, float)) else None
        if experiment is not None:
            self.meta.info["mlflow_experiment"] = experiment
        params = sq.query(self._conn, self.db, "SELECT key, value FROM params WHERE run_uuid = ? ORDER BY key",
                          (self._run_id,))
        self.meta.config.update({k: param_value(v) for k, v in params if isinstance(v, str)})

    def _read_new(self) -> list[pd.DataFrame]:
        if self.meta.status == "running":  # status and end time move while the run lives
            rows = sq.query(self._conn, self.db, "SELECT status, end_time FROM runs WHERE run_uuid = ?",
                            (self._run_id,))
            if rows:
                self._set_status(rows[0][0])
                self.meta.end_time = rows[0][1] / 1000 if isinstance(rows[0][1], (int, float)) else None
        try:
            frame = pd.read_sql_query(
                "SELECT rowid AS r, key, value, step, is_nan, timestamp FROM metrics WHERE run_uuid = ? "
                "AND rowid > ? ORDER BY timestamp, rowid", self._conn, params=(self._run_id, self._last_rowid))
        except (sqlite3.Error, pd.errors.DatabaseError) as e:
            raise RunError(f"{self.db}: {sq._why(self.db, e)}") from None
        if not len(frame):
            return []
        self._last_rowid = int(frame["r"].max())
        points = Points()
        codes, keys = pd.factorize(frame["key"])
        for k in keys:
            points.code(str(k))
        values = _unclamp(frame["value"].to_numpy(dtype=np.float64))
        values[frame["is_nan"].to_numpy(dtype=bool)] = math.nan
        steps = frame["step"].to_numpy(dtype=np.int64)
        order = np.arange(len(frame), dtype=np.int64)
        points.add_arrays(steps, codes.astype(np.int64), values, order)
        wall = frame.groupby("step", sort=False)["timestamp"].max()  # the step's last write, ms
        points.add_arrays(wall.index.to_numpy(dtype=np.int64),
                          np.full(len(wall), points.code("wall_time"), dtype=np.int64),
                          wall.to_numpy(dtype=np.float64) / 1000, np.arange(len(frame), len(frame) + len(wall)))
        return self._points_run(points)

    @property
    def last_update(self) -> float | None:
        return sq.mtime(self.db)


class MlflowFileRun(_MlflowRun):
    """One run folder of an `mlruns/` file store."""

    def __init__(self, folder: Path) -> None:
        super().__init__(folder, RunMeta(run_id=folder.name, name=folder.name, source="mlflow"))
        if not _is_run_dir(folder):
            raise RunError(f"{folder}: not an MLflow run folder (no meta.yaml beside metrics/, params/)")
        self._offsets: dict[str, int] = {}
        self._seq = 0
        self._read_meta()
        self.refresh()

    def _read_meta(self) -> None:
        meta = _yaml(self.path / "meta.yaml")
        self.meta.run_id = str(meta.get("run_id") or meta.get("run_uuid") or self.path.name)
        self.meta.name = str(meta.get("run_name") or self._tag("mlflow.runName") or self.meta.run_id)
        status = meta.get("status")
        self._set_status(FILE_STATUS.get(status, status) if isinstance(status, int) else status)
        for field, attr in (("start_time", "start_time"), ("end_time", "end_time")):
            value = meta.get(field)
            setattr(self.meta, attr, value / 1000 if isinstance(value, (int, float)) else None)
        try:
            experiment = _yaml(self.path.parent / "meta.yaml").get("name")
        except RunError:
            experiment = None
        if experiment is not None:
            self.meta.info["mlflow_experiment"] = experiment
        for key, file in self._files("params"):
            try:
                self.meta.config[key] = param_value(file.read_text(encoding="utf-8", errors="replace"))
            except OSError as e:
                self.problems.append(Problem(f"params/{key}", f"not readable ({e.strerror}); skipped"))

    def _tag(self, key: str) -> str | None:
        try:
            return (self.path / "tags" / key).read_text(encoding="utf-8", errors="replace").strip() or None
        except OSError:
            return None

    def _files(self, kind: str) -> list[tuple[str, Path]]:
        """(key, file) under metrics/ or params/: a key holding `/` is a sub-folder path."""
        root = self.path / kind
        out = []
        for dirpath, _, names in os.walk(root):
            for n in names:
                f = Path(dirpath) / n
                out.append((f.relative_to(root).as_posix(), f))
        return sorted(out)

    def _read_new(self) -> list[pd.DataFrame]:
        if self.meta.status == "running":
            try:
                status = _yaml(self.path / "meta.yaml").get("status")
                self._set_status(FILE_STATUS.get(status, status) if isinstance(status, int) else status)
            except RunError:
                pass
        points = Points()
        wall: list[tuple[np.ndarray, np.ndarray]] = []  # (steps, timestamps in ms) of each file
        order = 0
        for key, f in self._files("metrics"):
            start = self._offsets.get(key, 0)
            try:
                with open(f, "rb") as fh:
                    fh.seek(start)
                    data = fh.read()
            except OSError as e:
                self._note(Problem(f"metrics/{key}", f"not readable ({e.strerror}); skipped"))
                continue
            end = data.rfind(b"\n") + 1  # a line still being written is read next time
            self._offsets[key] = start + end
            parsed = _three_fields(data[:end])
            if parsed is not None:  # the usual file: `timestamp value step` on every line, parsed by numpy
                order = self._add_points(points, key, *parsed, order, wall)
                continue
            steps, values, stamps, bad = [], [], [], 0
            for line in data[:end].decode("utf-8", errors="replace").splitlines():
                parts = line.split()
                if len(parts) not in (2, 3, 5):
                    bad += 1 if parts else 0
                    continue
                try:
                    stamp, value = int(parts[0]), float(parts[1])
                    step = int(parts[2]) if len(parts) >= 3 else 0
                except ValueError:
                    bad += 1
                    continue
                if not (-STEP_LIMIT <= step < STEP_LIMIT and -STEP_LIMIT <= stamp < STEP_LIMIT):
                    bad += 1  # no int64: no place on the step axis
                    continue
                steps.append(step)
                values.append(value)
                stamps.append(stamp)
            if bad:
                self._note(Problem(f"metrics/{key}", f"{bad} line(s) not `timestamp value step`; skipped"))
            if steps:
                order = self._add_points(points, key, np.asarray(stamps, dtype=np.int64),
                                         np.asarray(values, dtype=np.float64), np.asarray(steps, dtype=np.int64),
                                         order, wall)
        if wall:  # each step's last write, in seconds
            steps = np.concatenate([w[0] for w in wall])
            stamps = np.concatenate([w[1] for w in wall])
            frame = pd.Series(stamps).groupby(steps, sort=False).max()
            points.add_arrays(frame.index.to_numpy(dtype=np.int64),
                              np.full(len(frame), points.code("wall_time"), dtype=np.int64),
                              frame.to_numpy(dtype=np.float64) / 1000,
                              np.arange(order, order + len(frame), dtype=np.int64))
        return self._points_run(points)

    @staticmethod
    def _add_points(points: Points, key: str, stamps: np.ndarray, values: np.ndarray, steps: np.ndarray,
                    order: int, wall: list) -> int:
        n = len(steps)
        points.add_arrays(steps, np.full(n, points.code(key), dtype=np.int64), values,
                          np.arange(order, order + n, dtype=np.int64))
        wall.append((steps, stamps))
        return order + n



def _three_fields(data: bytes) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """(timestamps, values, steps) of whole lines that all hold three fields; None otherwise (older 2-field
    lines, 5 fields with a dataset, a damaged line: read line by line)."""
    lines = data.count(b"\n")
    tokens = data.split()
    if not tokens or len(tokens) != 3 * lines or data.count(b" ") != 2 * lines:  # MLflow writes "%s %s %s\n"
        return None
    try:
        return (np.array(tokens[0::3], dtype=np.int64), np.array(tokens[1::3], dtype=np.float64),
                np.array(tokens[2::3], dtype=np.int64))
    except (ValueError, OverflowError):
        return None


def open_mlflow(target: str) -> Run:
    base, launch = split_launch(target)
    p = Path(base)
    if p.is_dir() and (p / DB_NAME).is_file() and not _is_run_dir(p):
        p = p / DB_NAME
    if p.is_file():
        return MlflowDbRun(p, launch)
    if launch is not None:
        raise RunError(f"{target}: no such MLflow database or run folder")
    if _is_run_dir(p):
        return MlflowFileRun(p)
    runs = list_launches(str(p))
    if len(runs) != 1:
        raise RunError(f"{p}: holds {len(runs)} MLflow runs; open one of them")
    return open_mlflow(runs[0])


register_source("mlflow", detect=detect, priority=13, launches=list_launches, parts=parts, hints={
    "samples": "MLflow keeps scalars, params and artifacts: no completions are read. TRL users can add "
               "collectors.trl.GrpoScopeCallback(\"runs/NAME\") to the trainer's callbacks to keep them.",
    "config": "the run has no params: it was started without mlflow.log_params (TRL's callback logs the "
              "trainer's arguments unless they exceed MLflow's length limit)",
})(open_mlflow)
