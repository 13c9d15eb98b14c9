"""wandb offline runs (`wandb/offline-run-*/run-*.wandb`) as a Run, read without wandb's service.

The file is a log of `wandb_internal_pb2.Record`s (`framing.RecordReader`): `history` records become metric
rows (`bulk`, else `history_row`, shared with the online reader), `config` and `run` records fill the
config, `exit` sets the status; the others (two summary updates per logged row, stats, output) are passed
over unread. The reader keeps its byte offset, so a refresh on a run that is still writing reads only new
chunks.
Completion tables logged with `wandb.Table` are media, not scalars: they are not read (no samples).

Folders: a run folder (`offline-run-*` or, of an online run, `run-*`: both keep the same `run-*.wandb`), or
a folder holding run folders (`wandb/`), whose run folders are runs of their own (`open_runs`, discovery).
A run whose .wandb holds no history at all (it stopped before wandb wrote any) is read from the console
output wandb keeps beside it, `files/output.log`, by whichever reader recognises that log (verl, TRL).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any

import pandas as pd

from collectors.extras import require
from collectors.meta import RunError, RunMeta, flatten_config
from collectors.readers import jsontext
from collectors.readers.columnar import OWN_COLUMNS, Points, new_chunk, own_column_tags
from collectors.readers.keymap import STEP_LIMIT, map_row
from collectors.readers.runfolders import RunFolders
from collectors.readers.text.rows import MAX_ROW_DEPTH
from collectors.readers.wandb.bulk import BulkHistory
from collectors.readers.wandb.framing import RecordReader
from collectors.readers.wandb.history import (
    HISTORY_FIELD,
    STEP_KEYS,
    HistoryBatch,
    column,
    light_history,
    light_record_class,
)
from collectors.run import Problem, Run
from collectors.sources import detect_source, open_run, register_source

_STEP_KEYS = STEP_KEYS


RUN_DIR_PREFIXES = ("offline-run-", "run-")  # wandb's run folders, offline and online
CONSOLE_LOG = Path("files") / "output.log"


def wandb_file(target: Path) -> Path | None:
    """The run file of a run folder (or the file itself); None for anything else."""
    if target.is_file():
        return target if target.suffix == ".wandb" else None
    files = sorted(p for p in target.glob("run-*.wandb") if p.is_file())  # not a pipe named like one
    return files[-1] if files else None


FOLDERS = RunFolders(RUN_DIR_PREFIXES, wandb_file, lambda p: p.suffix == ".wandb")
run_folders, detect, parts, list_launches = FOLDERS.run_folders, FOLDERS.detect, FOLDERS.parts, FOLDERS.list_launches


def _item_value(item) -> Any:
    kind = item.WhichOneof("value")
    if kind in ("number", "integer", "boolean"):
        return getattr(item, kind)
    if kind == "none":
        return None
    if kind == "text":
        return item.text
    raw = item.json if kind == "json" else item.value_json
    return _json_value(raw) if raw else None


def _json_value(raw: str) -> Any:
    """A logged value's JSON text as a value; text that cannot be read (no JSON, nested deeper than a row holds)
    stays text, which no metric is. A 5,000-digit integer is a signed infinity, a lone surrogate U+FFFD."""
    try:
        value, _ = jsontext.loads(raw)
    except jsontext.JsonProblem:
        return raw
    return value if jsontext.depth(value, MAX_ROW_DEPTH) <= MAX_ROW_DEPTH else raw


def _item_values(items) -> dict[str, Any]:
    """A record's items -> {name: value}. wandb writes every logged value as `value_json`, so a record whose
    items all have one is decoded with a single json.loads of the joined texts (2-3x faster on wide rows
    than one call per value); anything else goes item by item."""
    raws = [it.value_json for it in items]
    if raws and all(raws):
        try:
            decoded = json.loads("[" + ",".join(raws) + "]")
        except (ValueError, RecursionError):  # no JSON, a 5,000-digit integer, nesting past the limit
            decoded = None
        if decoded is not None and (jsontext.has_surrogate_escape("".join(raws)) or any(
                isinstance(v, (dict, list)) and jsontext.depth(v, MAX_ROW_DEPTH) > MAX_ROW_DEPTH for v in decoded)):
            decoded = None  # a lone surrogate escape, deep nesting: each value through _json_value
        if decoded is not None and len(decoded) == len(raws):
            return {_key(it): v for it, v in zip(items, decoded, strict=True)}
    return {_key(it): _item_value(it) for it in items}


def _key(item) -> str:
    # wandb-core names a nested metric by its path joined with "." (`log({"a": {"b": 1}})` is "a.b" on the
    # server; core/internal/runhistory/runhistory.go), so offline and online runs get the same column names
    return ".".join(item.nested_key) if item.nested_key else item.key


def _flatten(values: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """{"a": {"b": 1}} -> {"a.b": 1}, the way wandb-core flattens a logged dict."""
    flat: dict[str, Any] = {}
    for key, value in values.items():
        if isinstance(value, dict) and value:
            flat.update(_flatten(value, f"{prefix}{key}."))
        else:
            flat[f"{prefix}{key}"] = value
    return flat


def history_row(values: Mapping[str, Any]) -> dict[str, Any] | None:
    """One wandb history row -> {"step": int, canonical name: float, "wall_time": s}; None without a step,
    {} for a row of media only.

    `values` is a row as wandb holds it: metric name -> JSON value, with wandb's own `_step`, `_runtime`,
    `_timestamp`. The step is the trainer's `train/global_step` (TRL, OpenRLHF) or `eval/global_step`
    (OpenRLHF's eval rows) when present, else wandb's `_step`. Only numbers
    (and nulls) are metrics; a media object (a `wandb.Table` of completions, an image, a histogram: a dict
    with `_type`) is skipped whole, so its `nrows`/`ncols` never pose as metrics.
    """
    flat = _flatten(values) if any(isinstance(v, dict) for v in values.values()) else values
    step = next((flat[k] for k in _STEP_KEYS if _is_number(flat.get(k)) and math.isfinite(flat[k])
                 and abs(flat[k]) < STEP_LIMIT), None)  # 2**80 is no int64 step
    if step is None:
        return None
    data = {k: v for k, v in flat.items() if isinstance(v, (int, float, type(None))) and not k.startswith("_")}
    media = tuple(k[: -len("_type")] for k, v in flat.items() if isinstance(v, str) and k.endswith("._type"))
    if media:
        data = {k: v for k, v in data.items() if not k.startswith(media)}
        if not set(data) - set(_STEP_KEYS):
            return {}  # a row of media only (OpenRLHF's samples table): nothing to chart, skipped quietly
    row, _ = map_row(data)
    for own in OWN_COLUMNS:  # a key named like the step (`train/step`): the step is the one chosen above
        row.pop(own, None)
    if _is_number(flat.get("_timestamp")):
        row["wall_time"] = float(flat["_timestamp"])
    return {"step": int(step), **row}


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


@lru_cache(maxsize=1)
def _record_types(pb) -> tuple[frozenset[int], frozenset[int]]:
    """(field numbers of Record.record_type, those this reader reads: history, config, run, exit)."""
    fields = pb.Record.DESCRIPTOR.oneofs_by_name["record_type"].fields
    return (frozenset(f.number for f in fields),
            frozenset(f.number for f in fields if f.name in ("history", "config", "run", "exit")))


class WandbOfflineRun(Run):
    nan_known = True  # history rows hold NaN as NaN; a key not logged in a row is absent or null

    def __init__(self, path: Path | str) -> None:
        path = Path(path)
        super().__init__(path, RunMeta(run_id=path.name, name=path.name, source="wandb"))
        self._reader: RecordReader | None = None
        self._history_seen = False
        self._console: Run | None = None
        self._seq = 0
        self.refresh()

    def _read_new(self) -> list[pd.DataFrame]:
        pb = require("wandb.proto.wandb_internal_pb2", "wandb", "reading wandb run folders")
        from google.protobuf.message import DecodeError  # protobuf comes with wandb (and streamlit)

        f = wandb_file(self.path)
        if f is None:
            self._note(Problem(self.path.name, "no run-*.wandb file here"))
            return []
        if self._reader is None or self._reader.path != f:
            self._reader = RecordReader(f)
        points = Points()
        batch = HistoryBatch(points, lambda raw, order: self._slow_history(f, raw, points, order))
        light = light_record_class()

        def one_by_one(raw: bytes, order: int) -> None:  # a history record the bulk decoder left
            if (history := light_history(light, raw)) is not None:
                batch.add(history, raw, order)
                return
            try:
                rec = pb.Record.FromString(raw)
            except DecodeError:
                self._note(Problem(f.name, "a record that is not a wandb Record; skipped"))
                return
            self._slow_history(f, rec.history, points, order)

        bulk = BulkHistory(points, one_by_one)
        kinds, wanted = _record_types(pb)
        for kind_no, raw in self._reader.records(kinds, wanted):  # none that this reader has no use for
            if kind_no == HISTORY_FIELD:
                self._history_seen = True
                bulk.add(raw, points.next_event())
                continue
            try:
                rec = pb.Record.FromString(raw)
            except DecodeError:
                self._note(Problem(f.name, "a record that is not a wandb Record; skipped"))
                continue
            kind = rec.WhichOneof("record_type")
            if kind == "history":
                self._history_seen = True
                self._slow_history(f, rec.history, points, points.next_event())
            elif kind == "config":
                self._config(rec.config.update)
            elif kind == "run":
                self.meta.name = rec.run.display_name or self.meta.name
                self.meta.run_id = rec.run.run_id or self.meta.run_id
                self._config(rec.run.config.update)
                self.meta.status = "running"
            elif kind == "exit":
                self.meta.status = "finished" if rec.exit.exit_code == 0 else "failed"
        bulk.flush()
        batch.flush()
        for key in own_column_tags(points, column):
            if key in STEP_KEYS:
                continue  # the trainer's step itself (prime-rl's `step`), taken as the row's step
            self._note(Problem(f.name, f"history key {jsontext.shown(key)} is named like the step itself; left out "
                                       "(the step is the trainer's global step, else wandb's own)"))
        if self._reader.error:
            self._note(Problem(f.name, self._reader.error))
        if not self._history_seen:
            return self._console_rows(f)
        chunks, self._seq = new_chunk(points, self._table.frame(), self._seq, column)
        return chunks

    def _console_rows(self, f: Path) -> list[pd.DataFrame]:
        """The rows of files/output.log, for a run whose .wandb holds no history; only those at or after the
        last step read, so a refresh costs the console reader's own refresh."""
        if self._console is None:
            log = f.parent / CONSOLE_LOG
            self._console = _open_console(log) if log.is_file() else None
            if self._console is None:
                self._note(Problem(f.name, "holds no history records (no metric was synced)" +
                                   ("; files/output.log is no log a reader recognises" if log.is_file() else "")))
                return []
            self._note(Problem(f.name, f"holds no history records; metrics read from {CONSOLE_LOG} "
                                       f"({self._console.meta.source} console log)"))
        else:
            self._console.refresh()
        self.problems += [p for p in self._console.problems if p not in self.problems]
        self.nan_at = self._console.nan_at
        frame = self._console.metrics
        last = self.last_step
        new = frame if last is None else frame[frame["step"] >= last]
        if not len(new):
            return []
        new = new.assign(_seq=range(self._seq, self._seq + len(new)))
        self._seq += len(new)
        return [new]

    def _slow_history(self, f: Path, history, points: Points, order: int) -> None:
        """One history record read row by row (`history_row`); `history` may be the record's bytes."""
        if isinstance(history, bytes):
            from wandb.proto import wandb_internal_pb2 as pb

            history = pb.Record.FromString(history).history
        if row := self._history_row(f, history):
            step = row.pop("step")
            points.add(step, list(row), list(row.values()), order)

    def _history_row(self, f: Path, history) -> dict[str, Any] | None:
        values = _item_values(history.item)
        if "_step" not in values and history.HasField("step"):
            values["_step"] = history.step.num
        row = history_row(values)
        if row is None:
            self._note(Problem(f.name, "a history record without a step; skipped"))
        return row

    def _config(self, items) -> None:
        """Config items (key -> value_json): a value that cannot be kept (no JSON, a 5,000-digit number, nested
        past jsontext.MAX_CONFIG_DEPTH) is skipped with a note naming its key; the metrics never depend on it."""
        raw, notes, replaced = {}, [], 0
        for it in items:
            key = _key(it)
            if key.startswith("_"):
                continue  # wandb's own bookkeeping
            try:
                value, fixed = jsontext.loads(it.value_json, too_long="mark")
            except jsontext.JsonProblem as e:
                if "not valid JSON" in str(e):  # a plain text value, as an old client wrote it
                    value, fixed = jsontext.replace_surrogates(it.value_json)
                else:
                    notes.append(f"config key {jsontext.shown(key)}: {e}; skipped")
                    continue
            replaced += fixed
            if isinstance(value, dict) and set(value) == {"value"} | (set(value) & {"desc"}):
                value = value["value"]  # wandb stores config values as {"value": ...}
            raw[key] = value
        config, skipped = jsontext.config_values(raw)
        if replaced:
            notes.append(f"config: {replaced} lone surrogate(s) (\\u escapes of half a character, which no UTF-8 "
                         "text holds) replaced by U+FFFD")
        f = wandb_file(self.path)
        for note in notes + skipped:
            self._note(Problem(f.name if f is not None else self.path.name, note))
        self.meta.config.update(flatten_config(config))



# wandb history is scalars; both wandb readers share these words
SAMPLES_HINT = ("wandb history holds scalars only; completion tables logged with wandb.Table are not read. "
                "To see samples, TRL users can add collectors.trl.GrpoScopeCallback(\"runs/NAME\") to "
                "the trainer's callbacks: it writes a run folder with every completion.")


def _open_console(log: Path) -> Run | None:
    source = detect_source(log)
    if source in (None, "wandb"):
        return None
    try:
        return open_run(log, source)
    except RunError:
        return None


@register_source("wandb", detect=detect, priority=15, launches=list_launches, parts=parts, hints={
    "samples": SAMPLES_HINT,
    "config": "the run file holds no config record: wandb.init was called without config=...",
})
def open_wandb(target: str) -> WandbOfflineRun:
    return WandbOfflineRun(target)
