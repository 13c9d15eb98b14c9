"""TensorBoard event files as a Run: every scalar point kept, tags mapped through the TRL/verl/OpenRLHF maps.

Records are read with TensorBoard's own TFRecord iterator (no TensorFlow needed), one per event file, kept
open between refreshes: the iterator holds its byte offset, so a live `refresh()` reads only what was
appended. EventAccumulator is not used: its default size_guidance silently keeps 10,000 points per tag.
The config is the JSON text summary `args` that transformers' TensorBoardCallback writes (TRL runs).
"""

from __future__ import annotations

import itertools
import json
import math
from pathlib import Path
from typing import Any

import pandas as pd

from collectors.meta import RunMeta, flatten_config
from collectors.readers.keymap import chunk, family_name, fill_from
from collectors.run import Problem, Run
from collectors.sources import register_source

EVENT_GLOB = "events.out.tfevents.*"
# transformers' TensorBoardCallback writes TrainingArguments (TRL: the GRPOConfig) as JSON text under "args"
CONFIG_TAGS = ("args/text_summary", "args")


def event_files(target: Path) -> list[Path]:
    """The event files of a target: the file itself, or those directly in the folder, oldest name first."""
    if target.is_file():
        return [target]
    return sorted(p for p in target.glob(EVENT_GLOB) if p.is_file())


def detect(target: str) -> bool:
    p = Path(target)
    if p.is_file():
        return p.name.startswith("events.out.tfevents.")
    return p.is_dir() and any(p.glob(EVENT_GLOB))


class _EventFile:
    """One event file's iterator, opened lazily; `read()` yields (step, wall_time, tag, value) per new scalar."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.iterator = None
        self.dead = False  # a corrupt record: nothing past it can be trusted

    def read(self, problems: list[Problem]):
        from google.protobuf.message import DecodeError
        from tensorboard.backend.event_processing.event_file_loader import _make_tf_record_iterator
        from tensorboard.compat.proto import event_pb2
        from tensorboard.compat.tensorflow_stub import errors

        if self.dead:
            return
        if self.iterator is None:
            self.iterator = _make_tf_record_iterator(str(self.path))
        while True:
            try:
                record = next(self.iterator)
            except StopIteration:
                return
            except errors.DataLossError as e:
                if "crc" in str(e):
                    self.dead = True
                    problems.append(Problem(self.path.name, "corrupt record (CRC mismatch); later events skipped"))
                # a truncated tail is a writer mid-record: the iterator keeps its offset and retries next time
                return
            event = event_pb2.Event()
            try:
                event.ParseFromString(record)
            except DecodeError:
                problems.append(Problem(self.path.name, "record is not an Event; skipped"))
                continue
            if not event.HasField("summary"):
                continue
            for value in event.summary.value:
                number = _scalar(value)
                if number is not None:
                    yield event.step, event.wall_time, value.tag, number
                elif value.tag in CONFIG_TAGS and (text := _text(value)) is not None:
                    yield event.step, event.wall_time, value.tag, text


def _scalar(value: Any) -> float | None:
    """A summary value's scalar: `simple_value`, or a one-element tensor (tf2 / new-style summaries)."""
    kind = value.WhichOneof("value")
    if kind == "simple_value":
        return float(value.simple_value)
    if kind == "tensor":
        from tensorboard.util import tensor_util

        try:
            arr = tensor_util.make_ndarray(value.tensor)
        except (TypeError, ValueError):
            return None
        if arr.size == 1 and arr.dtype.kind in "fiub":
            return float(arr.reshape(-1)[0])
    return None


def _text(value: Any) -> str | None:
    """A text summary's string (one DT_STRING element), or None."""
    if value.WhichOneof("value") != "tensor" or len(value.tensor.string_val) != 1:
        return None
    return value.tensor.string_val[0].decode("utf-8", "replace")


class TensorBoardRun(Run):
    nan_known = True  # an event holds only the tags logged at its step, and a NaN scalar as NaN

    def __init__(self, path: Path | str) -> None:
        path = Path(path)
        super().__init__(path, RunMeta(run_id=path.name, name=path.name, source="tensorboard"))
        self._files: dict[Path, _EventFile] = {}
        self._spans: dict[Path, tuple[int, int]] = {}  # first and last step each file has held so far
        self._seq = 0
        self.refresh()

    def _read_new(self) -> list[pd.DataFrame]:
        files = event_files(self.path)
        if not files:
            self._note(Problem(self.path.name, "no TensorBoard event files here"))
            return []
        rows: dict[int, dict[str, float]] = {}
        order: list[int] = []
        for f in files:
            reader = self._files.setdefault(f, _EventFile(f))
            try:
                size = f.stat().st_size
            except OSError:  # rotated away between the listing and now
                continue
            if size == 0:
                self._note(Problem(f.name, "empty event file"))
                continue
            for step, wall, tag, value in reader.read(self.problems):
                if isinstance(value, str):
                    self._config(f, value)
                    continue
                lo, hi = self._spans.get(f, (step, step))
                self._spans[f] = (min(lo, step), max(hi, step))
                row = rows.get(step)
                if row is None:
                    row = rows[step] = {"step": step}
                    order.append(step)
                row[family_name(tag)] = value
                if not math.isnan(wall):
                    row["wall_time"] = wall
        self._note_restarts(files)
        if not order:
            return []
        # a step whose tags arrived over two refreshes: the table replaces whole rows, so send it complete
        out = fill_from(self._table.frame(), [rows[s] for s in order])
        frame = chunk(out, self._seq)
        self._seq += len(out)
        return [frame]

    def _config(self, f: Path, text: str) -> None:
        try:
            config = json.loads(text)
        except json.JSONDecodeError:
            self._note(Problem(f.name, "the `args` text summary is not JSON; config not read"))
            return
        if isinstance(config, dict):
            self.meta.config.update(flatten_config(config))

    def _note_restarts(self, files: list[Path]) -> None:
        """A later event file whose steps reach back into an earlier one's: the run was restarted."""
        spans = [(f, self._spans[f]) for f in files if f in self._spans]
        for (before, (_, end)), (after, (start, _)) in itertools.pairwise(spans):
            if start <= end:
                self._note(Problem(after.name, f"starts at step {start}, within {before.name} (up to step {end}): "
                                               "a restarted run; for steps in both, this later file's values win"))

    def _note(self, problem: Problem) -> None:
        if problem not in self.problems:
            self.problems.append(problem)


@register_source("tensorboard", detect=detect, priority=10, hints={
    "samples": "TensorBoard event files hold the trainer's scalars, not its responses; log responses with "
               "the framework's own dump (TRL log_completions, verl rollout_data_dir) and open that instead.",
    "config": "only runs logged by transformers' TensorBoardCallback (TRL) carry their config, as the `args` "
              "text summary; these event files have none.",
})
def open_tensorboard(target: str) -> TensorBoardRun:
    return TensorBoardRun(target)
