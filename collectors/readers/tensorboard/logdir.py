"""TensorBoard event files as runs: every scalar point kept, tags mapped through the TRL/verl/OpenRLHF maps.

Each event file is read from a kept byte offset (`tfrecord.RecordReader`, native CRC32C), so a live
`refresh()` reads only what was appended; records become a metrics chunk in `events` with numpy.
EventAccumulator is not used: its default size_guidance silently keeps 10,000 points per tag.
The config is the JSON text summary `args` that transformers' TensorBoardCallback writes (TRL runs).

A logdir that several launches wrote into (a sweep run again and again into one `logging_dir`) holds
several runs: each event file is one writer process, and files are grouped into launches by their first
step (`launches.group_launches`). Such a folder opens as one run per launch, `FOLDER#LAUNCH`, where LAUNCH
is the launch's first file name without `events.out.tfevents.`; no value of one launch reaches another.
"""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd

from collectors.meta import RunError, RunMeta, flatten_config
from collectors.readers.columnar import Points, column_of, new_chunk, own_column_tags
from collectors.readers.jsontext import read_config
from collectors.readers.launches import FileStart, Launch, group_launches
from collectors.readers.tensorboard.events import decode
from collectors.readers.tensorboard.tfrecord import RecordReader
from collectors.run import RESUMED_AT, Problem, Run
from collectors.sources import launch_target, no_parts, register_source, split_launch

PREFIX = "events.out.tfevents."
EVENT_GLOB = PREFIX + "*"
# events.out.tfevents.{unix seconds}.{host}.{pid}.{counter}[suffix] (tensorboard's EventFileWriter)
_NAME_RE = re.compile(r"^events\.out\.tfevents\.(\d+)\.(.+)\.(\d+)\.(\d+)")
_PEEK_RECORDS = 64


def event_files(target: Path) -> list[Path]:
    """The event files of a target: the file itself, or those directly in the folder, in creation order."""
    if target.is_file():
        return [target]
    return sorted((p for p in target.glob(EVENT_GLOB) if p.is_file()), key=_creation_key)


def _creation_key(path: Path) -> tuple[int, str, int, int, str]:
    """Creation order: the second, then within one process the writer's counter as a number (the 10th writer of
    a process, `.10`, comes after its 9th, which a string order puts first)."""
    m = _NAME_RE.match(path.name)
    return (int(m[1]), m[2], int(m[3]), int(m[4]), path.name) if m else (0, "", 0, 0, path.name)


def launch_id(path: Path) -> str:
    return path.name.removeprefix(PREFIX)


def _process(path: Path) -> str:
    m = _NAME_RE.match(path.name)
    return f"{m[2]}.{m[3]}" if m else ""


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def detect(target: str) -> bool:
    p = Path(target)
    if p.is_file():
        return p.name.startswith(PREFIX)
    return p.is_dir() and any(f.is_file() for f in p.glob(EVENT_GLOB))  # not a pipe named like one


class _Peek:
    """A file's first logged step, read from its start in small batches (a launch needs only that)."""

    def __init__(self, path: Path) -> None:
        self.reader = RecordReader(path)
        self.first_step: int | None = _first_steps.get(_file_id(path))

    def step(self) -> int | None:
        while self.first_step is None and not self.reader.error:
            records = self.reader.read(limit=_PEEK_RECORDS)
            if not records:
                break
            extent = decode(records).step_extent()
            self.first_step = extent[0] if extent else None
            if self.first_step is not None and (key := _file_id(self.reader.path)) is not None:
                _first_steps[key] = self.first_step
        return self.first_step


# An event file only grows, so its first step never changes once seen: discovery, which lists a folder's
# launches every few seconds, peeks each file once per process.
_first_steps: dict[tuple[str, int, int], int] = {}


def _file_id(path: Path) -> tuple[str, int, int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return str(path), st.st_dev, st.st_ino


class LogdirIndex:
    """Which files of a folder make which launch; kept across refreshes, each file peeked once it has a step."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._peeks: dict[Path, _Peek] = {}

    def starts(self, files: list[Path], known: dict[Path, tuple[int, int]]) -> list[FileStart]:
        """FileStart per file; `known` gives (first, last) steps of files already read in full."""
        out = []
        for f in files:  # the first step always from the peek, so the grouping never depends on who asks
            first = self._peeks.setdefault(f, _Peek(f)).step()
            out.append(FileStart(f.name, _process(f), first, known[f][1] if f in known else None))
        return out

    def with_steps(self) -> set[Path]:
        return {f for f, p in self._peeks.items() if p.first_step is not None}

    def launches(self, files: list[Path], known: dict[Path, tuple[int, int]] | None = None
                 ) -> tuple[list[Launch], list[tuple[str, str]]]:
        return group_launches(self.starts(files, known or {}))


def launch_ids(folder: Path) -> list[str]:
    """The launch ids of a logdir: one per group of event files, in creation order."""
    if folder.is_file():
        return []
    launches, _ = LogdirIndex(folder).launches(event_files(folder))
    return [launch_id(Path(x.id)) for x in launches]


def list_launches(target: str) -> list[str]:
    """`FOLDER#LAUNCH` per launch of a logdir holding several; [] for one (the folder is that run)."""
    ids = launch_ids(Path(target))
    return [launch_target(target, i) for i in ids] if len(ids) > 1 else []


class TensorBoardRun(Run):
    nan_known = True  # an event holds only the tags logged at its step, and a NaN scalar as NaN

    def __init__(self, path: Path | str, launch: str | None = None) -> None:
        path = Path(path)
        name = path.name if launch is None else f"{path.name}#{launch}"
        super().__init__(path, RunMeta(run_id=name, name=name, source="tensorboard"))
        self.launch = launch
        self._index = LogdirIndex(path)
        self._readers: dict[Path, RecordReader] = {}
        self._spans: dict[Path, tuple[int, int]] = {}  # first and last step each file has held so far
        self._files: list[Path] = []
        self._seq = 0
        self.refresh()

    def _read_new(self) -> list[pd.DataFrame]:
        files = event_files(self.path)
        if not files:
            self._note(Problem(self.path.name, "no TensorBoard event files here"))
            return []
        self._files = self._my_files(files)
        points = Points()
        for f in self._files or [f for f in files if f not in self._index.with_steps()]:
            self._read_file(f, points)  # a folder with no step yet: its files, for the config and problems
        self._note_grouping(files)
        for tag, text in points.texts:
            self._config(tag, text)
        for tag in own_column_tags(points, column_of):
            self._note(Problem(tag, "a scalar named like the step itself; left out (each event's own step is used)"))
        chunks, self._seq = new_chunk(points, self._table.frame(), self._seq)
        return chunks

    def _my_files(self, files: list[Path]) -> list[Path]:
        """The files of this run's launch. A folder opened without a launch id holds one launch (else
        RunError, naming them); if another launch starts there later, this run stays with the first."""
        if self.path.is_file():
            return files
        launches, _ = self._index.launches(files, self._spans)
        if not launches:
            return []
        ids = [launch_id(Path(x.id)) for x in launches]
        if self.launch is None and len(ids) > 1 and self._seq == 0 and not self._spans:
            raise RunError(f"{self.path}: holds {len(ids)} separate launches ({', '.join(ids[:3])}"
                           f"{', ...' if len(ids) > 3 else ''}); open one as {self.path}#{ids[0]}")
        wanted = self.launch or ids[0]
        if wanted not in ids:
            raise RunError(f"{self.path}: no launch {wanted!r} here; launches: {', '.join(ids)}")
        by_name = {f.name: f for f in files}
        return [by_name[n] for n in launches[ids.index(wanted)].files]

    def _read_file(self, f: Path, points: Points) -> None:
        try:
            size = f.stat().st_size
        except OSError:  # rotated away between the listing and now
            return
        if size == 0:
            self._note(Problem(f.name, "empty event file"))
            return
        reader = self._readers.setdefault(f, RecordReader(f))
        before = points.mark()
        decode(reader.read(), points)
        if reader.error:
            self._note(Problem(f.name, reader.error))
        if points.undecodable:
            self._note(Problem(f.name, "a record that is not an Event; skipped"))
        if new := points.step_extent(before):
            lo, hi = self._spans.get(f, new)
            self._spans[f] = (min(lo, new[0]), max(hi, new[1]))

    def _note_grouping(self, files: list[Path]) -> None:
        """Notes on the resumed files of this launch, on files without steps written after it (before the
        next launch), and, when the folder holds several launches, which one this run is."""
        if self.path.is_file() or not self._files:
            return
        launches, notes = self._index.launches(files, self._spans)
        order = {f.name: i for i, f in enumerate(files)}
        mine = {f.name for f in self._files}
        first = order[self._files[0].name]
        after = [order[x.files[0]] for x in launches if order[x.files[0]] > first]
        upto = min(after, default=len(files))
        for name, message in notes:
            if name in mine or (first < order[name] < upto) or (order[name] < first and first == min(
                    order[x.files[0]] for x in launches)):
                empty = name not in mine and _size(files[order[name]]) == 0
                self._note(Problem(name, "empty event file" if empty else message))
        own = next((x for x in launches if x.files[0] == self._files[0].name), None)
        if own is not None and own.resumed_at:
            self.meta.info[RESUMED_AT] = list(own.resumed_at)  # the steps where a joined file takes over (Run.resumed_at)
        if len(launches) > 1:
            note = (f"one of {len(launches)} separate launches in {self.path.name} (its files: "
                    f"{', '.join(f.name for f in self._files)}); the others are runs of their own")
            self.meta.notes = [n for n in self.meta.notes if "separate launches" not in n] + [note]
            self.meta.info.update(parent=self.path.name, launch=launch_id(self._files[0]),
                                  launches=len(launches))

    def _config(self, tag: str, text: str) -> None:
        """The `args` text summary as the config. What cannot be kept (a number of 5,000 digits, nesting past
        MAX_CONFIG_DEPTH) is skipped, key by key, each with a note; the metrics never depend on it."""
        config, notes = read_config(text)
        for note in notes:
            self._note(Problem(tag, note + ("; config not read" if config is None else "")))
        if config:
            self.meta.config.update(flatten_config(config))

    @property
    def last_update(self) -> float | None:
        """The newest modification time of this launch's own files (the folder's when it has none yet)."""
        times = []
        for f in self._files:
            try:
                times.append(f.stat().st_mtime)
            except OSError:
                continue
        return max(times) if times else super().last_update



@register_source("tensorboard", detect=detect, priority=10, launches=list_launches, parts=no_parts, hints={
    "samples": "TensorBoard event files hold the trainer's scalars, not its responses; log responses with "
               "the framework's own dump (TRL log_completions, verl rollout_data_dir) and open that instead.",
    "config": "only runs logged by transformers' TensorBoardCallback (TRL) carry their config, as the `args` "
              "text summary; these event files have none.",
})
def open_tensorboard(target: str) -> TensorBoardRun:
    return TensorBoardRun(*split_launch(target))
