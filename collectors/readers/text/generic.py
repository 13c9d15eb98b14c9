"""One row per step from any trainer: JSONL, CSV, or a JSON list of dicts (a `log_history` dump).

A table opens when it holds a step column or a column naming a reward, pass rate or loss. What it means is
guessed where nobody said (`guess`, each guess in a reader note with the `--map` that overrides it): the step
(a step name whose values count up, a column rising by a fixed stride, else the row order), which rows are eval
records (a `type`/`split`/... column, an `eval` flag: their metrics become `eval/<name>`), companion
`X_available`/`X_reason` columns (left out); a step that starts over starts a launch (`FILE#n`), and an eval
history file beside the log joins it as eval series. Every other column is a metric, named through `synonyms`
(the user's `--map`, the frameworks' maps, the synonym table) and `guess.refine_plan`, else kept as is. JSONL and CSV are parsed by pyarrow's native readers a block at a time (nested
JSON objects flattened to `a.b`), from a byte offset kept between refreshes, so a growing log costs its new
bytes only; a block pyarrow refuses (a broken line, a column changing type) is read line by line with
`json` so the bad lines can be named. A JSON list is read whole when the file changes.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.json as pajson

from collectors.meta import RunError, RunMeta
from collectors.readers import jsontext
from collectors.readers.folders import file_runs
from collectors.readers.keymap import TRAINER_SUMMARY_KEYS
from collectors.readers.launches import RowLaunches
from collectors.readers.synonyms import user_map
from collectors.readers.text.guess import (
    StepGuess,
    drop_companions,
    eval_rows,
    guess_kind,
    guess_step,
    looks_like_training,
)
from collectors.readers.text.linetail import LineTail
from collectors.readers.text.rows import MAX_ROW_DEPTH, TextRun, json_lines, shallow
from collectors.readers.text.tables import arrow_columns, records
from collectors.run import NAN_AT, Problem
from collectors.sources import launch_target, no_parts, register_source, split_launch

SUFFIXES = (".jsonl", ".csv", ".tsv", ".json")
STEP_KEYS = ("step", "global_step", "train/global_step", "iteration", "iter", "_step")


def step_column(columns) -> str | None:
    """The column that holds the step: a STEP_KEYS name as written, else one that differs only in case (`Step`,
    `Global_Step`: a CSV written by hand or by a spreadsheet); the first of STEP_KEYS' order wins."""
    names = [str(c) for c in columns]
    for k in STEP_KEYS:
        if k in names:
            return k
    lowered = {n.lower(): n for n in reversed(names)}
    return next((lowered[k] for k in STEP_KEYS if k in lowered), None)
_HEAD_BYTES = 1 << 16


def _head(p: Path) -> bytes:
    try:
        with p.open("rb") as f:
            return f.read(_HEAD_BYTES)
    except OSError:
        return b""


def detect(target: str) -> bool:
    """A table of training rows: a step column, or a column naming a reward, pass rate or loss (guess.
    looks_like_training), in a CSV header, a JSON list (or log_history) or the first JSON line."""
    p = Path(target)
    if not (p.is_file() and p.suffix in SUFFIXES):
        return False
    head = _head(p)
    first = head.lstrip().split(b"\n", 1)[0].decode("utf-8", "replace")
    if p.suffix in (".csv", ".tsv"):
        names = [c.strip().strip('"') for c in first.split("," if p.suffix == ".csv" else "\t")]
        return len(names) > 1 and (step_column(names) is not None or _training(names))
    if p.suffix == ".json" and not _json_lines(head):
        start = head.lstrip()[:1]
        text = head.decode("utf-8", "replace")
        keys = re.findall(r'"([^"\\]{1,200})"\s*:\s*[-0-9]', text)
        return (start == b"[" or '"log_history"' in text) and (any(f'"{k}"' in text for k in STEP_KEYS)
                                                              or _training(keys))
    if not first.startswith("{"):
        return False
    keys = re.findall(r'"([^"\\]{1,200})"\s*:\s*[-0-9]', first)
    return any(f'"{k}"' in first.lower() for k in STEP_KEYS) or _training(keys)


def _json_lines(head: bytes) -> bool:
    """A `.json` file holding JSON lines (one object a line, as many loggers write under that name)."""
    lines = head.lstrip().split(b"\n", 2)
    return len(lines) > 2 and lines[0].rstrip().endswith(b"}") and lines[1].lstrip().startswith(b"{")


def _training(names: list[str]) -> bool:
    """A name says training (guess.looks_like_training), or the user's --map names one of the columns."""
    mapped = user_map()
    return looks_like_training(names) or any(n in mapped for n in names)


class GenericRun(TextRun):
    """A one-row-per-step log (see the module docstring). `launch`: the 1-based launch to keep of a file holding
    several (None: every row)."""

    def __init__(self, path: Path | str, mapping: Mapping[str, str] | None = None, launch: int | None = None) -> None:
        path = Path(path)
        name = path.stem if launch is None else f"{path.stem}#{launch}"
        super().__init__(path, RunMeta(run_id=name, name=name, source="generic"), mapping)
        self._launch = launch
        self._launches = RowLaunches()
        self._step: StepGuess | None = None  # decided on the first rows, kept for the run
        self._kind: str | None = None
        self._kind_decided = False
        self._order = 0  # rows read so far: the step when no column is one
        self._evals = eval_files_of(path) if launch is None or launch == 1 else []
        self._eval_stamps: dict[Path, tuple] = {}
        self._tail = LineTail(path, note=lambda m: self._note(Problem(path.name, m)))
        self._header: list[str] | None = None  # a CSV's column names, from its first line
        self._json_state: tuple[int, float] | None = None
        self._read_side_config()
        self.refresh()

    def _read_new(self) -> list[pd.DataFrame]:
        return self._read_own() + self._read_evals()

    def _read_evals(self) -> list[pd.DataFrame]:
        """The eval history files beside the log (eval_files_of), read whole when they change: their metrics as
        eval/<name> columns at their steps (the reward eval/reward_mean, a pass rate eval/pass_rate)."""
        out = []
        for f in self._evals:
            try:
                st = f.stat()
            except OSError:
                continue
            if self._eval_stamps.get(f) == (st.st_size, st.st_mtime_ns):
                continue
            self._eval_stamps[f] = (st.st_size, st.st_mtime_ns)
            try:
                m = GenericRun(f, self.mapping).metrics
            except RunError:
                continue
            names = {c: _EVAL_NAMES.get(c, c if c.startswith("eval/") else f"eval/{c}")
                     for c in m.columns if c not in ("step", "_seq", "wall_time")}
            if not names or not len(m):
                continue
            chunk = m[["step", *names]].rename(columns=names).reset_index(drop=True)
            chunk = chunk.T.groupby(level=0, sort=False).first().T if chunk.columns.has_duplicates else chunk
            chunk["step"] = chunk["step"].astype(np.int64)
            chunk["_seq"] = np.arange(self._seq, self._seq + len(chunk), dtype=np.int64)
            self._seq += len(chunk)
            chunk.attrs[NAN_AT] = {}
            self._note(Problem(f.name, f"eval rows beside {self.path.name}: read as its eval/<name> series"))
            out.append(chunk)
        return out

    def _read_own(self) -> list[pd.DataFrame]:
        if not self.path.is_file():
            self._note(Problem(self.path.name, "no such file"))
            return []
        if self.path.suffix == ".json" and not _json_lines(_head(self.path)):
            return self._read_json_list()
        block, first, rewritten, _ = self._tail.read_bytes()
        if rewritten:
            self._header = None
            self._reset(self.path.name, "file was rewritten; read again from the top")
        if not block or block.isspace():
            return []
        tabular = self.path.suffix in (".csv", ".tsv")
        frame, nans, lines = self._csv(block, first) if tabular else self._jsonl(block, first)
        return self._rows(frame, nans, lines)

    def _rows(self, frame: pd.DataFrame, nans: dict[str, np.ndarray], lines: np.ndarray) -> list[pd.DataFrame]:
        if not len(frame):
            return []
        frame, gone = drop_companions(frame)
        if gone:
            self._note(Problem(self.path.name, f"companion columns, not metrics: {', '.join(gone[:5])}; left out (a "
                                               "metric whose _available is false is null on that row)"))
        frame = self._with_step(frame)
        frame = self._split_kinds(frame)
        ids = np.asarray(self._launches.assign(self._step_values(frame["step"]).tolist()), dtype=np.int64)
        if len(self._launches.first) > 1 and self._launch is None:
            self.meta.info["launches"] = len(self._launches.first)
        if self._launch is not None:
            keep = ids == self._launch
            frame, lines = frame[keep], lines[keep]
            nans = {c: m[keep] for c, m in nans.items()}
        others = [c for c in frame.columns if str(c).lower() in STEP_KEYS and c != "step"]
        frame = frame.drop(columns=others)
        if summary := [c for c in frame.columns if c in TRAINER_SUMMARY_KEYS]:
            # the Trainer's end-of-training summary (a log_history's last entry): not a step's metric
            last = frame[summary].dropna(how="all")
            if len(last):
                self.meta.info["train_summary"] = last.iloc[-1].dropna().to_dict()
            frame = frame.drop(columns=summary)
        self._note_repeats(frame)
        return self._emit(frame, self.path.name, lines, nans)

    # -- what the rows mean ---------------------------------------------------------------------------
    def _with_step(self, frame: pd.DataFrame) -> pd.DataFrame:
        """The frame with its step as `step`: the column guess_step finds on the first rows (kept for the run,
        said in a note when it is not plainly named), else the row order."""
        if self._step is None:
            self._step = guess_step(frame, self.mapping)
            # what a rule may ask before trusting "the first step": `order` when the steps are row positions
            self.meta.info["step_from"] = self._step.column or "order"
            if self._step.how:
                over = (f"--map {self._step.column}=OTHER if it is not the step" if self._step.column
                        else "--map COLUMN=step names one")
                self._note(Problem(self.path.name, f"guessed step: {self._step.how}; {over}"))
        col = self._step.column
        if col is not None and col in frame.columns:
            return frame.rename(columns={col: "step"}) if col != "step" else frame
        order = np.arange(self._order + 1, self._order + len(frame) + 1)
        self._order += len(frame)
        if col is not None:  # a later block without the step column: its rows are skipped, as before
            self._note(Problem(self.path.name, f"rows without `{col}`; skipped"))
            return frame.iloc[0:0].assign(step=[])
        return frame.assign(step=order)

    def _split_kinds(self, frame: pd.DataFrame) -> pd.DataFrame:
        """Eval records apart from train records: where a kind column (guess.guess_kind) marks a row as eval,
        its metrics become `eval/<name>` columns (eval/reward_mean, eval/pass_rate once named), so an eval row
        at a step no longer overwrites that step's train row."""
        if not self._kind_decided:
            self._kind, how = guess_kind(frame, self.mapping)
            self._kind_decided = self._kind is not None or len(frame) >= 50
            if self._kind is not None:
                self._note(Problem(self.path.name, f"guessed eval rows: {how}; their metrics read as eval/<name> "
                                                   f"(--map {self._kind}=OTHER if it is not the record kind)"))
        kind = self._kind
        if kind is None or kind not in frame.columns:
            return frame
        is_eval = eval_rows(frame, kind)
        frame = frame.drop(columns=[kind])
        if not is_eval.any():
            return frame
        out = {"step": frame["step"]}
        for c in frame.columns:
            if c == "step":
                continue
            col = frame[c]
            train, ev = col.where(~is_eval), col.where(is_eval)
            if train.notna().any():
                out[c] = train
            if ev.notna().any():
                out[f"eval/{c}"] = ev
        return pd.DataFrame(out, index=frame.index)

    @staticmethod
    def _step_values(steps: pd.Series) -> np.ndarray:
        v = pd.to_numeric(steps, errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan)
        return np.where(np.isfinite(v) & (np.abs(v) < 2**62), v, np.nan)

    # -- formats ---------------------------------------------------------------------------------
    def _csv(self, block: bytes, first: int) -> tuple[pd.DataFrame, dict, np.ndarray]:
        block = self._utf8(block, first)
        skipped: list[str] = []

        def bad_row(row) -> str:
            skipped.append(f"{row.actual_columns} cells, header has {row.expected_columns}")
            return "skip"

        def parse(block_size: int | None) -> pa.Table:
            # after the first block the header is given by name, so a new block is parsed as it lies (no copy)
            opts = pacsv.ReadOptions(column_names=self._header, block_size=block_size or 1 << 20)
            return pacsv.read_csv(pa.BufferReader(block), read_options=opts,
                                  parse_options=pacsv.ParseOptions(invalid_row_handler=bad_row, delimiter=(
                                      "\t" if self.path.suffix == ".tsv" else ",")),
                                  convert_options=pacsv.ConvertOptions(null_values=[""], strings_can_be_null=True))

        try:
            table = parse(None)
        except pa.ArrowInvalid:
            # pyarrow cuts the text into 1 MiB pieces and cannot parse a row longer than one (a cell holding a
            # long text, a line of garbage): parsed again as one piece, such a row is read or skipped as ragged
            skipped.clear()
            try:
                table = parse(len(block) + 1)
            except pa.ArrowInvalid as e:
                raise RunError(f"{self.path}: not a readable CSV ({' '.join(str(e).split())[:200]})") from None
        try:
            table.column_names  # noqa: B018 - decoded on access: a header that is no UTF-8 fails here
        except UnicodeDecodeError:
            raise RunError(f"{self.path}: the header is not UTF-8 text") from None
        if self._header is None:
            self._header, first = table.column_names, first + 1
        if skipped:
            self._note(Problem(self.path.name, f"{len(skipped)} row(s) with {skipped[0]}; skipped"))
        frame, nans = arrow_columns(table)
        return frame, nans, np.arange(first, first + len(frame))

    def _utf8(self, block: bytes, first: int) -> bytes:
        """The block as valid UTF-8: bytes that are not become U+FFFD, and a note names the first line holding
        one. pyarrow decodes a ragged row's text for the invalid-row handler before calling it, and a
        decoding error there is printed as an ignored exception, not raised: so none may reach it."""
        if block.isascii():
            return block
        try:
            block.decode("utf-8")
        except UnicodeDecodeError as e:
            line = first + block.count(b"\n", 0, e.start)
            if self._header is None and line == first:
                raise RunError(f"{self.path}: the header is not UTF-8 text") from None
            self._note(Problem(self.path.name, f"line {line}: bytes that are not UTF-8; replaced, so cells "
                                               "holding them are text"))
            return block.decode("utf-8", "replace").encode("utf-8")
        return block

    def _jsonl(self, block: bytes, first: int) -> tuple[pd.DataFrame, dict, np.ndarray]:
        try:
            if jsontext.too_deep_for_arrow(block):  # it would crash the process: line by line below
                raise pa.ArrowInvalid("nested too deep")
            table = pajson.read_json(pa.BufferReader(block))
            frame, nans = arrow_columns(table)
            if len(frame) == block.count(b"\n") - block.count(b"\n\n"):  # no blank line shifts the numbering
                return frame, nans, np.arange(first, first + len(frame))
            return frame, nans, np.full(len(frame), first)
        except (pa.ArrowException, UnicodeDecodeError):  # text that is no UTF-8 fails on access
            pass  # a broken line or a column changing type: read line by line to name what is wrong
        rows, lines = [], []
        for no, obj in json_lines(block, first, self._bad_line, self._repaired):
            if not isinstance(obj, dict):
                self._note(Problem(self.path.name, f"line {no}: not a JSON object; skipped"))
                continue
            rows.append(obj)
            lines.append(no)
        frame, nans = records(rows)
        return frame, nans, np.asarray(lines, dtype=np.int64)

    def _bad_line(self, no: int, why: str) -> None:
        self._note(Problem(self.path.name, f"line {no}: {why}; skipped"))

    def _repaired(self, what: str) -> None:
        self._note(Problem(self.path.name, what))

    def _read_json_list(self) -> list[pd.DataFrame]:
        st = self.path.stat()
        if self._json_state == (st.st_size, st.st_mtime):
            return []
        if self._json_state is not None:
            self._reset(self.path.name, "file was rewritten; read again")
        self._json_state = (st.st_size, st.st_mtime)
        try:
            obj, replaced = jsontext.loads(self.path.read_bytes())
        except jsontext.JsonProblem as e:
            self._note(Problem(self.path.name, f"{e}; nothing read"))
            return []
        if replaced:
            self._note(Problem(self.path.name, f"{replaced} lone surrogate(s) (\\u escapes of half a character, "
                                               "which no UTF-8 text holds) replaced by U+FFFD"))
        if isinstance(obj, dict):
            obj = obj.get("log_history")
        if not isinstance(obj, list):
            self._note(Problem(self.path.name, "expected a list of objects (or a log_history list); nothing read"))
            return []
        rows = [r for r in obj if isinstance(r, dict)]
        if len(rows) < len(obj):
            self._note(Problem(self.path.name, f"{len(obj) - len(rows)} item(s) are not objects; skipped"))
        for i, row in enumerate(rows):
            if jsontext.depth(row, MAX_ROW_DEPTH) > MAX_ROW_DEPTH:
                rows[i], gone = shallow(row)
                self._note(Problem(self.path.name, f"item {i + 1}: {', '.join(map(jsontext.shown, gone[:3]))} "
                                                   f"nested more than {MAX_ROW_DEPTH} levels deep; left out"))
        return self._rows(*records(rows), np.arange(1, len(rows) + 1))

    def _note_repeats(self, frame: pd.DataFrame) -> None:
        """Note the steps where one key was logged twice (the last write is kept); a step whose keys come on
        several lines (train metrics, then eval metrics at the same step) is one step in parts, not a repeat."""
        try:
            steps = pd.to_numeric(frame["step"], errors="coerce")
        except (OverflowError, TypeError, ValueError):  # an int of 400 digits among the steps: not checked
            return
        keep = np.isfinite(steps) & (steps.abs() < 2**63)  # 1e400 is no step
        steps = steps[keep].astype(np.int64)
        repeated = steps.duplicated(keep=False)
        if not repeated.any() or self.path.suffix == ".json":  # a log_history repeats a step for its eval rows
            return
        values = frame.loc[keep].loc[repeated.to_numpy()].drop(columns=["step"])
        # a key given twice with one value (a counter on a step's train and summary rows) is no second write
        twice = values.groupby(steps[repeated].to_numpy()).nunique()
        dup = sorted(twice.index[(twice > 1).any(axis=1)].tolist())
        if dup:
            shown = ", ".join(map(str, dup[:5]))
            self._note(Problem(self.path.name, f"{len(dup)} step(s) logged more than once ({shown}); "
                                               "the last write is kept"))


detect_any, _file_launches = file_runs(detect, SUFFIXES)

# A file named as an eval history (`eval_history.json`, `val_metrics.csv`) beside exactly one other training log
# holds that log's eval rows: read into it as eval/<name> series, not opened as a run of its own.
EVAL_FILE_RE = re.compile(r"^(?:eval|evaluation|val|valid|validation|test)(?:[_\-.]|$)", re.IGNORECASE)
_EVAL_NAMES = {"reward/mean": "eval/reward_mean", "reward/pass_rate": "eval/pass_rate"}


def _is_eval_file(path: Path) -> bool:
    return bool(EVAL_FILE_RE.match(path.stem))


def _folder_logs(folder: Path) -> tuple[list[Path], list[Path]]:
    """(training logs, eval history files) among a folder's files the generic reader recognises."""
    files = [Path(f) for f in _file_launches(str(folder))]
    return [f for f in files if not _is_eval_file(f)], [f for f in files if _is_eval_file(f)]


def eval_files_of(path: Path) -> list[Path]:
    """The eval history files whose rows belong to `path` (see EVAL_FILE_RE)."""
    if _is_eval_file(path) or not path.is_file():
        return []
    logs, evals = _folder_logs(path.parent)
    return evals if logs == [path] else []


_READ: dict[str, tuple[tuple[int, int], GenericRun]] = {}  # the run launch_count read, handed to the open after it


@lru_cache(maxsize=256)
def _launch_count(path: str, size: int, mtime_ns: int) -> int:
    try:
        run = GenericRun(path)
    except RunError:
        return 1
    n = int(run.meta.info.get("launches", 1))
    if n == 1:  # open_runs asks for the launches, then opens the file: one read, not two
        _READ.clear()
        _READ[path] = ((size, mtime_ns), run)
    return n


def launch_count(path: str) -> int:
    """How many launches one file holds (RowLaunches over its steps), read once per file state."""
    try:
        st = os.stat(path)
    except OSError:
        return 1
    return _launch_count(path, st.st_size, st.st_mtime_ns)


def launches(target: str) -> list[str]:
    """The runs a target holds: a folder's logs, and a file holding several launches as `FILE#n` each."""
    if split_launch(target)[1] is not None:
        return []
    files = _file_launches(target) if Path(target).is_dir() else [target]
    if Path(target).is_dir():
        logs, evals = _folder_logs(Path(target))
        if len(logs) == 1:  # the eval files are read into the one training log
            files = [f for f in files if Path(f) not in evals]
    out = []
    for f in files:
        n = launch_count(f)
        out += [launch_target(f, str(i)) for i in range(1, n + 1)] if n > 1 else ([f] if f != target else [])
    return out


@register_source("generic", detect=detect_any, launches=launches, parts=no_parts, priority=1, hints={
    "samples": "a one-row-per-step log holds metrics only; responses need a run folder (collectors.RunWriter).",
    "config": "a one-row-per-step log holds no config; put the config the run used beside it as config*.yaml "
              "(or .json) and it is read.",
})
def open_generic(target: str) -> GenericRun:
    base, launch = split_launch(target)
    if launch is None:
        read = _READ.pop(str(target), None)
        try:
            st = os.stat(target)
        except OSError:
            st = None
        if read is not None and st is not None and read[0] == (st.st_size, st.st_mtime_ns):
            return read[1]
        return GenericRun(target)
    if not launch.isdigit() or not 1 <= int(launch) <= launch_count(base):
        raise RunError(f"{target}: {Path(base).name} holds no launch {launch!r} (launches 1 .. {launch_count(base)})")
    return GenericRun(base, launch=int(launch))
