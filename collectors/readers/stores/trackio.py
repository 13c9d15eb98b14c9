"""trackio projects (HF's tracker; TRL's `report_to="trackio"`) as Runs, read with sqlite3 without trackio.

trackio keeps one SQLite file per project, `<project>.db`, in `TRACKIO_DIR` (default `$HF_HOME/trackio`,
i.e. `~/.cache/huggingface/trackio`; trackio/utils.py `_get_trackio_dir`). Its `metrics` table holds one row
per `trackio.log` call: `run_name`, `run_id` (trackio 0.2x on; older files have only the name), trackio's own
`step` (0, 1, 2... per run when the caller gives none), an ISO `timestamp` and the logged dict as JSON
(`metrics`), where a NaN or infinity is the string "NaN" / "Infinity" / "-Infinity" (trackio/utils.py
`serialize_values`). `configs` holds one JSON config per run (trackio's own keys start with `_`).

transformers' TrackioCallback (integrations/integration_utils.py, `on_log`) logs the trainer's dict through
`rewrite_logs` (`train/<key>`, `eval/<key>`) plus `train/global_step`, and no step of its own, so the step
here is `train/global_step` (or `eval/global_step`) where a row has it, else trackio's `step`. Keys map through
the TRL/verl/OpenRLHF key maps after the `train/` prefix is dropped (collectors.readers.columnar.column_of).

Targets: a project file (`<project>.db`), a folder of them (TRACKIO_DIR); each run is a launch of its own,
`<project>.db#<run_id>` (or the run's name, %-quoted, in files without run ids).
"""

from __future__ import annotations

import json
import math
import sqlite3
from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote

import numpy as np
import pandas as pd

from collectors.meta import RunError, RunMeta, flatten_config
from collectors.readers.columnar import WALL, Points, column_of, new_chunk
from collectors.readers.keymap import STEP_LIMIT
from collectors.readers.stores import sqlite as sq
from collectors.run import Problem, Run
from collectors.sources import launch_target, no_parts, register_source, split_launch

SUFFIX = ".db"
NEEDED = {"metrics": ("run_name", "step", "metrics", "timestamp"), "configs": ("run_name", "config")}
STEP_KEYS = ("train/global_step", "eval/global_step")  # transformers' TrackioCallback adds the trainer step
SPECIAL = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}  # serialize_values' strings
NUMBER_TYPES = {float, int}
MAX_FILES = 200  # project files looked at in a folder (detection stays cheap)


def _candidates(folder: Path) -> list[Path]:
    try:
        files = sorted(p for p in folder.glob(f"*{SUFFIX}") if p.is_file())
    except OSError:
        return []
    return [p for p in files[:MAX_FILES] if p.name != "mlflow.db"]


def is_project(path: Path) -> bool:
    return sq.has_tables(path, NEEDED) is True


def project_files(folder: Path) -> list[Path]:
    """The trackio project files directly in a folder."""
    return [p for p in _candidates(folder) if is_project(p)]


def detect(target: str) -> bool:
    p = Path(target)
    if p.is_file():
        # a project file, or a damaged one (SQLite that cannot be read, or anything beside trackio's
        # `<project>.lock`), which the reader then names; never MLflow's `mlflow.db`
        if p.suffix != SUFFIX or p.name == "mlflow.db":
            return False
        state = sq.has_tables(p, NEEDED)
        return state is not False or p.with_suffix(".lock").exists()
    return p.is_dir() and bool(project_files(p))


def _run_ids(conn: sqlite3.Connection, path: Path, have: dict[str, set[str]] | None = None) -> list[tuple[str, str]]:
    """(launch name, run name) of every run of a project, in the order they first logged."""
    have = have or sq.tables(conn)
    if "run_id" in have["metrics"]:
        rows = sq.query(conn, path, "SELECT run_id, run_name, min(rowid) FROM metrics GROUP BY run_id "
                                    "UNION ALL SELECT run_id, run_name, NULL FROM configs "
                                    "WHERE run_id NOT IN (SELECT DISTINCT run_id FROM metrics)") \
            if "run_id" in have["configs"] else \
            sq.query(conn, path, "SELECT run_id, run_name, min(rowid) FROM metrics GROUP BY run_id")
    else:
        rows = sq.query(conn, path, "SELECT run_name, run_name, min(rowid) FROM metrics GROUP BY run_name")
    rows = sorted(rows, key=lambda r: (r[2] is None, r[2] or 0))
    return [(quote(str(rid), safe=""), str(name)) for rid, name, _ in rows]


def list_launches(target: str) -> list[str]:
    """Every run of a project file, or of each project in a folder: `FILE#RUN`."""
    p = Path(target)
    files = [p] if p.is_file() else project_files(p)
    out = []
    for f in files:
        try:
            conn = sq.connect(f)
        except RunError:
            if p.is_file():
                raise
            continue
        try:
            have = sq.check_tables(conn, f, NEEDED, "a trackio project")
            out += [launch_target(f, rid) for rid, _ in _run_ids(conn, f, have)]
        finally:
            conn.close()
    return out


def _number(value: Any) -> float | None | bool:
    """A logged value as a metric: numbers and booleans as floats, trackio's "NaN"/"Infinity" strings as
    such, None as a null; False for anything else (text, media, lists: not a metric)."""
    if value is None:
        return None
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, (int, float)):
        try:
            return float(value)
        except OverflowError:
            return math.inf if value > 0 else -math.inf
    if isinstance(value, str) and value in SPECIAL:
        return SPECIAL[value]
    return False


def _flat(values: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in values.items():
        if isinstance(v, dict):
            if "_type" not in v:  # a media object (trackio.Image, Table, Histogram) is no metric
                out.update(_flat(v, f"{prefix}{k}/"))
        else:
            out[f"{prefix}{k}"] = v
    return out


def _iso(text: Any) -> float | None:
    try:
        return datetime.fromisoformat(str(text)).timestamp()
    except (TypeError, ValueError):
        return None


class _Block:
    """Consecutive rows of numbers logged under the same keys (a trainer logs the same dict every step),
    gathered into one numpy block of Points (`add_block`) instead of a list append per value."""

    def __init__(self, points: Points) -> None:
        self.points = points
        self.keys: tuple[str, ...] | None = None
        self.steps: list[int] = []
        self.orders: list[int] = []
        self.rows: list[list] = []

    def add(self, step: int, order: int, values: dict[str, Any], wall: float) -> None:
        keys = tuple(values)
        if keys != self.keys:
            self.flush()
            self.keys = keys
        self.steps.append(step)
        self.orders.append(order)
        self.rows.append([*values.values(), wall])

    def flush(self) -> None:
        if not self.rows:
            return
        tags = [*self.keys, WALL]
        try:
            values = np.array(self.rows, dtype=np.float64)
        except OverflowError:  # an integer past float (10**400): row by row, as a signed infinity
            for step, order, row in zip(self.steps, self.orders, self.rows, strict=True):
                self.points.add(step, tags, row, order)
        else:
            self.points.add_block(np.array(self.steps, dtype=np.int64), np.array(self.orders, dtype=np.int64),
                                  tags, values)
        self.steps, self.orders, self.rows = [], [], []


class TrackioRun(Run):
    nan_known = True  # "NaN" is written as such; a key absent from a row was not logged

    def __init__(self, db: Path | str, launch: str | None) -> None:
        db = Path(db)
        super().__init__(launch_target(db, launch) if launch else db,
                         RunMeta(run_id=unquote(launch or db.stem), name=unquote(launch or db.stem), source="trackio"))
        self.db, self.launch = db, launch
        self.meta.info["trackio_project"] = db.stem
        self._conn = sq.connect(db)
        try:
            self._have = sq.check_tables(self._conn, db, NEEDED, "a trackio project")
            self._by_id = "run_id" in self._have["metrics"]
            self._key = self._pick_run()
            self._config()
        except RunError:
            self._conn.close()
            raise
        self._last_rowid = 0
        self._seq = 0
        self.refresh()

    def _pick_run(self) -> str:
        """The run_id (or name) this Run reads: the launch named, else the project's only run."""
        runs = _run_ids(self._conn, self.db, self._have)
        if self.launch is None:
            if len(runs) > 1:
                raise RunError(f"{self.db}: holds {len(runs)} runs; name one as {self.db}#RUN")
            if not runs:
                self.problems.append(Problem(self.db.name, "the project holds no run yet"))
                return ""
            self.launch = runs[0][0]
            self.path = Path(launch_target(self.db, self.launch))
        key = unquote(self.launch)
        names = dict(runs)
        if self.launch not in names:
            shown = ", ".join(r for r, _ in runs[:3]) or "none"
            raise RunError(f"{self.db}: no run {key!r} in this trackio project (runs: {shown})")
        self.meta.name = names[self.launch]
        self.meta.run_id = key
        return key

    @property
    def _col(self) -> str:
        return "run_id" if self._by_id else "run_name"

    def _config(self) -> None:
        col = "run_id" if "run_id" in self._have["configs"] else "run_name"
        key = self._key if col == "run_id" or not self._by_id else self.meta.name
        rows = sq.query(self._conn, self.db, f"SELECT config FROM configs WHERE {col} = ? ORDER BY rowid",
                        (key,))
        if not rows:
            return
        try:
            config = json.loads(rows[-1][0])
        except (ValueError, RecursionError, TypeError):
            self.problems.append(Problem(self.db.name, "the run's config is no JSON (or nested too deep); not read"))
            return
        if not isinstance(config, dict):
            return
        self.meta.start_time = _iso(config.get("_Created"))
        config = {k: v for k, v in config.items() if not str(k).startswith("_")}  # trackio's _Username, _Created
        self.meta.config.update(flatten_config({k: SPECIAL.get(v, v) if isinstance(v, str) else v
                                                for k, v in config.items()}))

    def _read_new(self) -> list[pd.DataFrame]:
        if not self._key:
            return []
        rows = sq.query(self._conn, self.db,
                        f"SELECT rowid, step, metrics, timestamp FROM metrics WHERE {self._col} = ? AND rowid > ? "
                        "ORDER BY rowid", (self._key, self._last_rowid))
        if not rows:
            return []
        self._last_rowid = rows[-1][0]
        # orjson's bytes (a BLOB) in trackio's own files, text where another writer stored str
        texts = [r[2].decode("utf-8", "replace") if isinstance(r[2], bytes) else str(r[2]) for r in rows]
        try:  # one parse for the whole batch: the texts joined as one JSON array
            decoded = json.loads("[" + ",".join(texts) + "]")
            if len(decoded) != len(rows):
                raise ValueError("a row held more than one value")
        except (ValueError, RecursionError):
            decoded = [self._one(t) for t in texts]
        points = Points()
        block = _Block(points)
        bad = 0
        plain = (float, int)
        for (_, step, _, stamp), values in zip(rows, decoded, strict=True):
            if not isinstance(values, dict):
                bad += 1
                continue
            types = set(map(type, values.values()))
            if dict in types:
                values = _flat(values)
                types = set(map(type, values.values()))
            g = values.pop(STEP_KEYS[0], None)  # the step itself is no metric
            g2 = values.pop(STEP_KEYS[1], None)
            g = g if g is not None else g2
            at = int(g) if type(g) in plain and math.isfinite(g) and g == int(g) and abs(g) < STEP_LIMIT else step
            wall = _iso(stamp)
            if types <= NUMBER_TYPES and wall is not None:  # the usual row: numbers only, a block of its kind
                block.add(at, points.next_event(), values, wall)
                continue
            block.flush()
            tags, nums = [], []
            for k, v in values.items():
                if (n := _number(v)) is not False:
                    tags.append(k)
                    nums.append(n)
            if wall is not None:
                tags.append(WALL)
                nums.append(wall)
            points.add(at, tags, nums)
            continue
        block.flush()
        if bad:
            self._note(Problem(self.db.name, f"{bad} metrics row(s) that are no JSON object; skipped"))
        chunks, self._seq = new_chunk(points, self._table.frame(), self._seq, column_of)
        return chunks

    def _one(self, text: str) -> Any:
        try:
            return json.loads(text)
        except (ValueError, RecursionError, TypeError):
            return None


    @property
    def last_update(self) -> float | None:
        return sq.mtime(self.db)


def open_trackio(target: str) -> TrackioRun:
    base, launch = split_launch(target)
    p = Path(base)
    if p.is_dir():
        files = project_files(p)
        if len(files) != 1:
            raise RunError(f"{p}: holds {len(files)} trackio projects; open one of them (PROJECT.db)")
        p = files[0]
    return TrackioRun(p, launch)


register_source("trackio", detect=detect, priority=12, launches=list_launches, parts=no_parts, hints={
    "samples": "trackio keeps scalars (and media, which are not read): no completions. TRL users can add "
               "collectors.trl.GrpoScopeCallback(\"runs/NAME\") to the trainer's callbacks to keep them.",
    "config": "trackio.init was called without config=... (TRL's callback always passes the trainer's arguments)",
})(open_trackio)
