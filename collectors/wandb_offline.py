"""wandb offline runs (`wandb/offline-run-*/run-*.wandb`) as a Run, read without wandb's service.

The file: a 7-byte header (`:W&B`, magic 0xBEE1, version 0), then LevelDB-log framing in 32 KiB blocks:
each chunk is crc32 (uint32, over the type byte and the data), length (uint16), type (FULL, FIRST, MIDDLE,
LAST), data; a block's last < 7 bytes are padding. Joined chunks are `wandb_internal_pb2.Record`s:
`history` records become metric rows (step = the record's step; over wandb, TRL's trainer step is
`train/global_step`, used when present), `config` and `run` records fill the config, `exit` sets the status.
The reader keeps its byte offset, so a refresh on a run that is still writing reads only new chunks.
"""

from __future__ import annotations

import json
import struct
import zlib
from pathlib import Path
from typing import Any

import pandas as pd

from collectors.keymap import map_row, step_chunks
from collectors.meta import RunMeta, flatten_config
from collectors.run import Problem, Run
from collectors.sources import register_source

BLOCK = 32 * 1024
HEADER = struct.pack("<4sHB", b":W&B", 0xBEE1, 0)
FULL, FIRST, MIDDLE, LAST = 1, 2, 3, 4
_STEP_KEYS = ("train/global_step", "_step")


def wandb_file(target: Path) -> Path | None:
    if target.is_file():
        return target if target.suffix == ".wandb" else None
    # one offline-run-* folder is one run; its parent `wandb/` holds several and is walked, not opened
    files = sorted(target.glob("run-*.wandb"))
    return files[-1] if files else None


def detect(target: str) -> bool:
    p = Path(target)
    return (p.is_file() and p.suffix == ".wandb") or (p.is_dir() and wandb_file(p) is not None)


class RecordReader:
    """Yields the serialized records appended since the last call; stops at a partial chunk (still writing)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.offset = 0
        self.pending = b""  # data of a FIRST/MIDDLE chunk waiting for its LAST
        self.error: str | None = None

    def read(self):
        if self.error:
            return
        try:
            f = self.path.open("rb")
        except OSError as e:
            self.error = f"cannot read ({e.strerror})"
            return
        with f:
            if self.offset == 0:
                head = f.read(7)
                if len(head) < 7:
                    return
                if head != HEADER:
                    self.error = "not a wandb run file of a known version (bad header)"
                    return
                self.offset = 7
            f.seek(self.offset)
            data = f.read()
        pos = 0
        while True:
            left = BLOCK - (self.offset + pos) % BLOCK
            if left < 7:  # block trailer padding
                if len(data) - pos < left:
                    break
                pos += left
                continue
            if len(data) - pos < 7:
                break
            crc, length, kind = struct.unpack_from("<IHB", data, pos)
            if length == 0 and kind == 0 and crc == 0:  # zero fill at the end of a block
                pos += left
                continue
            if len(data) - pos < 7 + length:
                break
            body = data[pos + 7 : pos + 7 + length]
            if zlib.crc32(body, zlib.crc32(bytes([kind]))) != crc:
                self.error = f"corrupt chunk at byte {self.offset + pos} (CRC mismatch); later records skipped"
                break
            pos += 7 + length
            if kind == FULL:
                yield body
            elif kind == FIRST:
                self.pending = body
            elif kind == MIDDLE:
                self.pending += body
            elif kind == LAST:
                yield self.pending + body
                self.pending = b""
            else:
                self.error = f"unknown chunk type {kind} at byte {self.offset + pos}; later records skipped"
                break
        self.offset += pos


def _item_value(item) -> Any:
    kind = item.WhichOneof("value")
    if kind in ("number", "integer", "boolean"):
        return getattr(item, kind)
    if kind == "none":
        return None
    if kind == "text":
        return item.text
    raw = item.json if kind == "json" else item.value_json
    try:
        return json.loads(raw) if raw else None
    except json.JSONDecodeError:
        return raw


def _key(item) -> str:
    return "/".join(item.nested_key) if item.nested_key else item.key


class WandbOfflineRun(Run):
    def __init__(self, path: Path | str) -> None:
        path = Path(path)
        super().__init__(path, RunMeta(run_id=path.name, name=path.name, source="wandb"))
        self._reader: RecordReader | None = None
        self._seq = 0
        self.refresh()

    def _read_new(self) -> list[pd.DataFrame]:
        from google.protobuf.message import DecodeError
        from wandb.proto import wandb_internal_pb2 as pb

        f = wandb_file(self.path)
        if f is None:
            self._note(Problem(self.path.name, "no run-*.wandb file here"))
            return []
        if self._reader is None or self._reader.path != f:
            self._reader = RecordReader(f)
        rows = []
        for raw in self._reader.read():
            rec = pb.Record()
            try:
                rec.ParseFromString(raw)
            except DecodeError:
                self._note(Problem(f.name, "a record that is not a wandb Record; skipped"))
                continue
            kind = rec.WhichOneof("record_type")
            if kind == "history":
                row = self._history_row(f, rec.history)
                if row is not None:
                    rows.append(row)
            elif kind == "config":
                self._config(rec.config.update)
            elif kind == "run":
                self.meta.name = rec.run.display_name or self.meta.name
                self.meta.run_id = rec.run.run_id or self.meta.run_id
                self._config(rec.run.config.update)
                self.meta.status = "running"
            elif kind == "exit":
                self.meta.status = "finished" if rec.exit.exit_code == 0 else "failed"
        if self._reader.error:
            self._note(Problem(f.name, self._reader.error))
        if not rows:
            return []
        out, self._seq = step_chunks(self._table.frame(), rows, self._seq)
        return out

    def _history_row(self, f: Path, history) -> dict[str, Any] | None:
        values = {_key(it): _item_value(it) for it in history.item}
        step = next((values[k] for k in _STEP_KEYS if isinstance(values.get(k), (int, float))), None)
        if step is None and history.HasField("step"):
            step = history.step.num
        if step is None:
            self._note(Problem(f.name, "a history record without a step; skipped"))
            return None
        data = {k: v for k, v in values.items() if not k.startswith("_") and isinstance(v, (int, float, type(None)))}
        row, _ = map_row(data)
        if "_timestamp" in values:
            row["wall_time"] = values["_timestamp"]
        return {"step": int(step), **row}

    def _config(self, items) -> None:
        raw = {}
        for it in items:
            key = _key(it)
            if key.startswith("_"):
                continue  # wandb's own bookkeeping
            try:
                value = json.loads(it.value_json)
            except json.JSONDecodeError:
                value = it.value_json
            if isinstance(value, dict) and set(value) == {"value"} | (set(value) & {"desc"}):
                value = value["value"]  # wandb stores config values as {"value": ...}
            raw[key] = value
        self.meta.config.update(flatten_config(raw))

    def _note(self, problem: Problem) -> None:
        if problem not in self.problems:
            self.problems.append(problem)


@register_source("wandb", detect=detect, priority=15)
def open_wandb(target: str) -> WandbOfflineRun:
    return WandbOfflineRun(target)
