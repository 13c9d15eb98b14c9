"""SwanLab runs (`swanlog/run-*/run-<id>.swanlab`) as Runs, read without swanlab installed.

SwanLab 0.8 on (read in swanlab 0.10.3: swanlab/sdk/internal/core_python/store, swanlab/proto/swanlab/record/v1)
keeps each run in one record file, whatever its mode (local, offline, cloud): the LevelDB-log framing wandb uses
(wandb/framing.py) under the header `:SWL`, magic 0xE1D6, version 2, each record a protobuf `Record` message:
`num` (1), a timestamp (2), then one of start (10: project 1, name 4, description 5, id 10, started_at 12),
finish (11: state 1, error 2, finished_at 3), column (12), scalar (13: key 1, step 2, timestamp 4, value 5 ->
number 1, a double), media (14: key 1, step 2, items in value 5), console log (16), save (20). proto3 leaves
zeros out: a scalar without step is at step 0, one without number is 0.0. The config is `files/config.yaml`,
each key as {value, desc, sort}. Local mode (`swanlab.init(mode="local")`, verl's `trainer.logger=['swanlab']`
with SWANLAB_MODE=local) adds `logs/<n>/` and `media/` for its dashboard; the record file holds the same.

Text media are read as samples where they hold verl's validation generations (swanlab_media.py): under an eval
key (`val/generations`) as `eval_samples()`, under another as `samples()`; images and other media are not read.
Targets: a run folder, a `.swanlab` file, or a folder of run
folders (`swanlog/`), whose run folders are runs of their own.
"""

from __future__ import annotations

import math
import struct
from pathlib import Path
from typing import Any

import pandas as pd

from collectors.meta import RunError, RunMeta, flatten_config
from collectors.readers.columnar import WALL, Points, column_of, new_chunk
from collectors.readers.protowire import fields
from collectors.readers.runfolders import RunFolders
from collectors.readers.stores import swanlab_media as media
from collectors.readers.text.guess import EVAL_PREFIXES
from collectors.readers.verl.console import dump_samples
from collectors.readers.wandb.framing import RecordReader
from collectors.run import Problem, Run
from collectors.sources import register_source

HEADER = struct.pack("<4sHB", b":SWL", 0xE1D6, 2)  # swanlab's store: LEVELDBLOG_HEADER_IDENT, _MAGIC, _VERSION
SUFFIX = ".swanlab"
RUN_PREFIX = "run-"
CONFIG = Path("files") / "config.yaml"
START, FINISH, SCALAR = 10, 11, 13  # Record's oneof fields
# FinishRecord.state (swanlab.run.v1.RunState): RUNNING 0, FINISHED 1, CRASHED 2, ABORTED 3
STATES = {0: "running", 1: "finished", 2: "failed", 3: "failed"}


def is_record_file(path: Path) -> bool:
    """A `.swanlab` file that starts as a record file does (local mode's dashboard keeps an SQLite database,
    `swanlog/runs.swanlab`, under the same suffix)."""
    try:
        with path.open("rb") as fh:
            return path.suffix == SUFFIX and fh.read(4) == HEADER[:4]
    except OSError:
        return False


def record_file(target: Path) -> Path | None:
    """The record file of a run folder (or the file itself); None for anything else."""
    if target.is_file():
        return target if is_record_file(target) else None
    try:
        files = sorted(p for p in target.glob(f"{RUN_PREFIX}*{SUFFIX}") if p.is_file())
    except OSError:
        return None
    return files[-1] if files else None


FOLDERS = RunFolders((RUN_PREFIX,), record_file, is_record_file)
run_folders, detect, parts, list_launches = FOLDERS.run_folders, FOLDERS.detect, FOLDERS.parts, FOLDERS.list_launches


def _text(msg: dict[int, list], field: int) -> str:
    raw = msg.get(field, [b""])[-1]
    return raw.decode("utf-8", "replace") if isinstance(raw, bytes) else ""


def _seconds(msg: dict[int, list], field: int) -> float | None:
    """A google.protobuf.Timestamp field as Unix seconds (seconds 1, nanos 2)."""
    if field not in msg or not isinstance(msg[field][-1], bytes):
        return None
    stamp = fields(msg[field][-1])
    return float(stamp.get(1, [0])[-1]) + float(stamp.get(2, [0])[-1]) / 1e9


def scalar_point(body: bytes) -> tuple[str, int, float, float | None]:
    """A ScalarRecord's (key, step, value, Unix seconds); ValueError when it is none."""
    msg = fields(body)
    key = _text(msg, 1)
    step = msg.get(2, [0])[-1]
    if not key or not isinstance(step, int):
        raise ValueError("a scalar without a key")
    value = 0.0
    if 5 in msg and isinstance(msg[5][-1], bytes):
        number = fields(msg[5][-1]).get(1, [b"\0" * 8])[-1]
        value = struct.unpack("<d", number)[0] if isinstance(number, bytes) and len(number) == 8 else math.nan
    if step >= 1 << 63:  # int64 on the wire: a negative step is a ten-byte varint
        step -= 1 << 64
    return key, step, value, _seconds(msg, 4)


class SwanLabRun(Run):
    nan_known = True  # a scalar record holds its value, NaN included; a key not logged at a step has no record

    def __init__(self, path: Path | str) -> None:
        path = Path(path)
        super().__init__(path, RunMeta(run_id=path.name, name=path.name, source="swanlab"))
        self.folder = path.parent if path.is_file() else path
        self._reader: RecordReader | None = None
        self._seq = 0
        self._generations: dict[bool, dict[int, list[media.Record]]] = {False: {}, True: {}}  # eval? -> step ->
        self._unread_texts = 0
        self._media_read = False  # a media record came since the samples frames were last built
        self._config()
        self.refresh()

    def _read_new(self) -> list[pd.DataFrame]:
        f = record_file(self.path)
        if f is None:
            self._note(Problem(self.path.name, f"no {RUN_PREFIX}*{SUFFIX} file here"))
            return []
        if self._reader is None or self._reader.path != f:
            self._reader = RecordReader(f, HEADER, "SwanLab record file")
        points, bad = Points(), 0
        for raw in self._reader.read():
            try:
                record = fields(raw)
                if SCALAR in record:
                    key, step, value, wall = scalar_point(record[SCALAR][-1])
                    points.add(step, [key, WALL] if wall is not None else [key],
                               [value, wall] if wall is not None else [value])
                elif START in record:
                    self._start(fields(record[START][-1]))
                elif FINISH in record:
                    self._finish(fields(record[FINISH][-1]))
                elif media.MEDIA in record:
                    self._media(media.media_items(fields(record[media.MEDIA][-1])))
            except ValueError:
                bad += 1
        self._samples_of_media()
        if bad:
            self._note(Problem(f.name, f"{bad} record(s) that are no SwanLab record; skipped"))
        if self._reader.error:
            self._note(Problem(f.name, self._reader.error))
        chunks, self._seq = new_chunk(points, self._table.frame(), self._seq, column_of)
        return chunks

    def _media(self, record: tuple[str, int, int, list]) -> None:
        """A text or echarts media record's verl generations, kept by step under eval or training."""
        key, step, kind, items = record
        if kind not in media.MEDIUM:
            return
        found: list[tuple[int | None, media.Record]] = []
        for name, payload in items:
            text = media.item_content(self.folder, kind, name, payload)
            if text is None:
                continue
            got = [(None, r)] if kind == media.TEXT and (r := media.text_record(text)) else (
                media.table_records(text) if kind == media.ECHARTS else [])
            self._unread_texts += not got and kind == media.TEXT
            found += got
        is_eval = key.lower().startswith(EVAL_PREFIXES)
        self._media_read = True
        for at, rec in found:
            self._generations[is_eval].setdefault(step if at is None else at, []).append(rec)

    def _samples_of_media(self) -> None:
        """The generations read so far as the samples frames (verl's (input, output, score) -> one group a prompt),
        rebuilt only after a refresh that read a media record."""
        if not self._media_read:
            return
        self._media_read = False
        for is_eval, by_step in self._generations.items():
            if not by_step:
                continue
            frame = pd.concat([dump_samples(step, recs)[0] for step, recs in sorted(by_step.items())],
                              ignore_index=True)
            if is_eval:
                self._eval_samples = frame
            else:
                self._samples = frame
        self.problems = [p for p in self.problems if p.file != "media"]  # the count so far, said once
        if self._unread_texts:
            self._note(Problem("media", f"{self._unread_texts} text item(s) not in verl's input/output/score "
                                        "form; not read as samples"))

    def _start(self, msg: dict[int, list]) -> None:
        self.meta.name = _text(msg, 4) or self.meta.name
        self.meta.run_id = _text(msg, 10) or self.meta.run_id
        self.meta.start_time = _seconds(msg, 12)
        if project := _text(msg, 1):
            self.meta.info["swanlab_project"] = project
        self.meta.status = "running"

    def _finish(self, msg: dict[int, list]) -> None:
        state = msg.get(1, [1])[-1]
        self.meta.status = STATES.get(state, "unknown") if isinstance(state, int) else "unknown"
        self.meta.end_time = _seconds(msg, 3)
        if error := _text(msg, 2):
            self.meta.error = error

    def _config(self) -> None:
        """files/config.yaml: each key's `value` (swanlab keeps {value, desc, sort} per key)."""
        import yaml

        path = self.folder / CONFIG
        if not path.is_file():
            return
        try:
            raw = yaml.safe_load(path.read_text(encoding="utf-8", errors="replace"))
        except (yaml.YAMLError, OSError, RecursionError, ValueError) as e:
            self._note(Problem(str(CONFIG), f"{_yaml_trouble(e)}; the config is not read"))
            return
        if not isinstance(raw, dict):
            return
        config: dict[str, Any] = {str(k): v.get("value") if isinstance(v, dict) and "value" in v else v
                                  for k, v in raw.items()}
        self.meta.config.update(flatten_config(config))



def _yaml_trouble(e: Exception) -> str:
    """Why config.yaml could not be read, in words (a reader's notes name no Python exception)."""
    if isinstance(e, RecursionError):
        return "nested too deep to read"
    if isinstance(e, OSError):
        return f"cannot be read ({e.strerror or 'an I/O error'})"
    mark = getattr(e, "problem_mark", None)
    if mark is not None:
        return f"not valid YAML at line {mark.line + 1}"
    return "not valid YAML" if e.__class__.__module__.startswith("yaml") else "a value too long to read as a number"


@register_source("swanlab", detect=detect, priority=15, launches=list_launches, parts=parts, hints={
    "samples": "SwanLab text media are read as samples only in the form verl's validation logger writes them "
               "(input/output/score); none here. TRL users can add collectors.trl.GrpoScopeCallback(\"runs/NAME\") "
               "to the trainer's callbacks to keep them.",
    "config": "the run has no files/config.yaml: swanlab.init was called without config=...",
})
def open_swanlab(target: str) -> SwanLabRun:
    p = Path(target)
    if p.is_dir() and record_file(p) is None:
        folders = run_folders(p)
        if len(folders) != 1:
            raise RunError(f"{p}: holds {len(folders)} SwanLab runs; open one of them (a run-* folder)")
        p = folders[0]
    return SwanLabRun(p)
