"""verl runs as a Run: file-logger JSONL, console logs, and rollout dumps (samples, zero-variance groups).

- File logger (`trainer.logger=file`): one JSON line per step, `{"step": N, "data": {key: value}}`; NaN is
  written as null. A restarted run rewrites the file from the top, so a file that shrank resets the table.
- Console: `step:N - key:value - ...`, possibly after a Ray prefix such as `(TaskRunner pid=123)` and ANSI
  colour codes; the validation line of a step (`test_score/...`) and its training line are merged.
- Rollout dumps (`trainer.rollout_data_dir`): `{step}.jsonl`, one line per response with `input`, `output`,
  `score`. Groups are rebuilt from identical `input`s. verl logs no zero-variance fraction itself, so
  `groups/zero_std_frac` exists only where dumps exist; elsewhere it is absent, never zero.

Files are read from a byte offset kept between refreshes; a line without its newline waits for the rest.
The config comes from `.hydra/config.yaml` beside the logs or the console log's printed dict
(collectors.readers.verl.config).
"""

from __future__ import annotations

import hashlib
import math
import re
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.json as pajson

from collectors.meta import RunError, RunMeta
from collectors.readers import jsontext
from collectors.readers.folders import by_file_state
from collectors.readers.keymap import unscale
from collectors.readers.text.generic import arrow_columns
from collectors.readers.text.linetail import LineTail
from collectors.readers.text.rows import TextRun, json_lines
from collectors.readers.verl.config import read_config
from collectors.run import Problem
from collectors.schema import SAMPLES
from collectors.sources import register_source

_ANSI_RE = re.compile(r"\x1b\[[0-9;]*m")
_CONSOLE_RE = re.compile(r"(?:^|\s)step:(\d+) - (.*)$")
_DUMP_RE = re.compile(r"^\d+\.jsonl$")
_EVAL_PREFIXES = ("test_score/", "val/test_score/", "val-core/")


def _is_verl_jsonl(path: Path) -> bool:
    try:
        with path.open("rb") as f:
            head = f.read(200).lstrip()
    except OSError:
        return False
    return head.startswith(b'{"step"') and b'"data"' in head


SCAN_BYTES = 4 << 20  # a first step line may follow megabytes of Ray start-up output
_STEP_BYTES_RE = re.compile(rb"(?:^|\s)step:\d+ - [^\s:]+:", re.MULTILINE)


_KNOWN_CONSOLES: set[Path] = set()  # recognised once, a log stays a verl log: a live refresh does not rescan


def _is_console(path: Path) -> bool:
    """A verl console log: a `step:N - key:value` line within the first SCAN_BYTES (read 1 MiB at a time,
    searched as bytes, so a log whose first step comes after 200 KB of Ray output is found quickly)."""
    if path in _KNOWN_CONSOLES:
        return True
    found = _scan_by_state(str(path))
    if found and len(_KNOWN_CONSOLES) < 10_000:
        _KNOWN_CONSOLES.add(path)
    return found


def _scan_for_step(path: str) -> bool:
    try:
        with open(path, "rb") as f:
            tail = b""
            for _ in range(SCAN_BYTES >> 20):
                block = f.read(1 << 20)
                if not block:
                    return False
                if _STEP_BYTES_RE.search(tail + block):
                    return True
                tail = block[-256:]  # a line split across two reads
    except OSError:
        return False
    return False


_scan_by_state = by_file_state(_scan_for_step)  # a log that did not change is not searched again


def _dump_dir(folder: Path) -> Path | None:
    """The folder holding `{step}.jsonl` dumps: the target itself or one of its direct subfolders."""
    for d in [folder, *sorted(p for p in folder.iterdir() if p.is_dir() and not p.is_symlink())]:
        if any(_DUMP_RE.match(p.name) and p.is_file() for p in d.glob("*.jsonl")):  # not a pipe named 0.jsonl
            return d
    return None


def _layout(target: Path) -> tuple[list[Path], list[Path], Path | None]:
    """(file-logger JSONL files, console logs, dump folder) of a target file or folder."""
    if target.is_file():
        if _is_verl_jsonl(target):
            return [target], [], None
        return [], [target], None
    if not target.is_dir():
        return [], [], None
    # is_file: a named pipe called `x.log` would block the read forever
    jsonl = [p for p in sorted(target.glob("*.jsonl")) if not _DUMP_RE.match(p.name) and p.is_file()
             and _is_verl_jsonl(p)]
    logs = [p for p in sorted(target.glob("*.log")) + sorted(target.glob("*.txt")) if p.is_file() and _is_console(p)]
    return jsonl, logs, _dump_dir(target)


def parts(target: str) -> list[str]:
    """The sub-folders a verl run reads: the dump folder (when not the folder itself) and Hydra's .hydra/."""
    p = Path(target)
    try:
        dumps = _dump_dir(p)
    except OSError:
        dumps = None
    return [".hydra"] + ([dumps.name] if dumps is not None and dumps != p else [])


def detect(target: str) -> bool:
    p = Path(target)
    if p.is_file():
        return (p.suffix == ".jsonl" and _is_verl_jsonl(p)) or (p.suffix in (".log", ".txt") and _is_console(p))
    if not p.is_dir():
        return False
    jsonl, logs, dumps = _layout(p)
    # dumps in a subfolder make a run only beside its metrics: a stray `data/0.jsonl` under a root of runs
    # must not turn the whole root into one verl run and hide the runs in it
    return bool(jsonl or logs or dumps == p)


def unscale_columns(frame: pd.DataFrame) -> pd.DataFrame:
    """Older verl logs `actor/lr(1e-4): 0.010`, meaning 0.010 x 1e-4: such a column becomes `actor/lr`, scaled."""
    renames = {}
    for col in frame.columns:
        name, scale = unscale(col, 1.0)
        if name != col:
            frame[col] = pd.to_numeric(frame[col], errors="coerce") * scale
            renames[col] = name
    return frame.rename(columns=renames) if renames else frame


def eval_column(chunk: pd.DataFrame) -> None:
    """verl names its validation score per data source (`val-core/openai/gsm8k/reward/mean@1`, older
    `test_score/...`): the first such column of a step is its eval/reward_mean."""
    cols = [c for c in chunk.columns if c.startswith(_EVAL_PREFIXES)]
    if cols and "eval/reward_mean" not in chunk:
        chunk["eval/reward_mean"] = chunk[cols].bfill(axis=1).iloc[:, 0]


class VerlRun(TextRun):
    def __init__(self, path: Path | str, mapping=None) -> None:
        path = Path(path)
        super().__init__(path, RunMeta(run_id=path.stem, name=path.stem if path.is_file() else path.name,
                                       source="verl"), mapping)
        self._tails: dict[Path, LineTail] = {}
        self._dumps_read: dict[Path, int] = {}  # dump file -> size read (a dump is written once per step)
        self.refresh()

    # -- metrics -----------------------------------------------------------------------------
    def _read_new(self) -> list[pd.DataFrame]:
        jsonl, logs, dumps = _layout(self.path)
        self.problems = [p for p in self.problems if "waiting for the rest" not in p.message]
        if not (jsonl or logs or dumps):
            self._note(Problem(self.path.name, "no verl JSONL, console log or rollout dumps here"))
            return []
        if not self.meta.config and self.last_step is None:
            self._read_config(logs)  # printed before the first step: once steps arrive, it is not coming
        parts = [self._read_file(f, self._jsonl_block) for f in jsonl]
        parts += [self._read_file(f, self._console_block) for f in logs]
        if dumps is not None:
            parts.append(self._read_dumps(dumps))
        parts = [p for p in parts if p is not None and len(p[0])]
        if not parts:
            return []
        frame = pd.concat([p[0] for p in parts], ignore_index=True, sort=False) if len(parts) > 1 else parts[0][0]
        lines = np.concatenate([p[1] for p in parts])
        nans = {}  # the file logger writes NaN as null; a console "nan" is found by the shared conversion
        names = ", ".join(dict.fromkeys(p[2] for p in parts))
        out = self._emit(unscale_columns(frame), names, lines, nans)
        for c in out:
            eval_column(c)
        return out

    def _read_file(self, path: Path, parse) -> tuple[pd.DataFrame, np.ndarray, str] | None:
        if path not in self._tails:
            self._tails[path] = LineTail(path, note=lambda m: self._note(Problem(path.name, m)))
        tail = self._tails[path]
        block, first, rewritten, waiting = tail.read_bytes()
        if rewritten:
            # a restart rewrote the file: what it said before no longer describes this run
            self._reset(path.name, "file was rewritten (a restart?); read again from the top")
        if waiting:
            self.problems.append(Problem(path.name, f"line {tail.line_no + 1} is incomplete; waiting for the rest"))
        if not block or block.isspace():
            return None
        frame, lines = parse(path, block, first)
        return frame, lines, path.name

    def _jsonl_block(self, path: Path, block: bytes, first: int) -> tuple[pd.DataFrame, np.ndarray]:
        """File-logger lines -> (frame of step + data keys, line numbers); pyarrow first, `json` to name bad lines."""
        try:
            if jsontext.too_deep_for_arrow(block):  # it would crash the process: line by line below
                raise pa.ArrowInvalid("nested too deep")
            table = pajson.read_json(pa.BufferReader(block))
            if "data" in table.column_names and "step" in table.column_names and block.count(b"\n") == table.num_rows:
                data = table.column("data")
                if pa.types.is_struct(data.type) and pa.types.is_integer(table.column("step").type) \
                        and data.null_count == 0 and table.column("step").null_count == 0:
                    flat = pa.Table.from_arrays(data.combine_chunks().flatten(),
                                                names=[f.name for f in data.type])
                    frame, _ = arrow_columns(flat)
                    # a `step` inside data as well: both kept here, the line's own first (TextRun._emit keeps it)
                    frame.insert(0, "step", table.column("step").to_numpy(), allow_duplicates=True)
                    return frame, np.arange(first, first + len(frame))
        except (pa.ArrowInvalid, pa.ArrowTypeError, UnicodeDecodeError):  # a key that is no UTF-8 fails on its name
            pass  # a broken line, a value changing type: line by line below
        rows, lines, twice = [], [], []
        for no, obj in json_lines(block, first, lambda no, why: self._note(Problem(path.name, f"line {no}: {why}; skipped")),
                                  lambda what: self._note(Problem(path.name, what))):
            if not isinstance(obj, dict) or not isinstance(obj.get("step"), int) or not isinstance(obj.get("data"), dict):
                self._note(Problem(path.name, f"line {no}: expected {{\"step\": int, \"data\": {{...}}}}; skipped"))
                continue
            if "step" in obj["data"]:
                twice.append(no)
            rows.append({**obj["data"], "step": obj["step"]})  # the line's own step, as the block parser keeps it
            lines.append(no)
        if twice:
            self._note(Problem(path.name, f"line {', '.join(map(str, twice[:3]))}: step logged twice in one row (in "
                                          "`data` as well); the line's own step kept"))
        return pd.DataFrame.from_records(rows), np.asarray(lines, dtype=np.int64)

    def _console_block(self, path: Path, block: bytes, first: int) -> tuple[pd.DataFrame, np.ndarray]:
        rows, lines = [], []
        for no, raw in enumerate(block.split(b"\n"), first):
            if b"step:" not in raw:
                continue  # other console output
            m = _CONSOLE_RE.search(_ANSI_RE.sub("", raw.decode("utf-8", "replace")).rstrip())
            if not m:
                continue
            if len(m[1]) > 18:  # no int64, and int() refuses past 4,300 digits
                self._note(Problem(path.name, f"line {no}: a step of {len(m[1]):,} digits; skipped"))
                continue
            data: dict[str, Any] = {"step": int(m[1])}
            for part in m[2].split(" - "):
                key, sep, value = part.rpartition(":")
                if sep and key:
                    data[key.strip()] = value.strip()
            rows.append(data)
            lines.append(no)
        return pd.DataFrame.from_records(rows), np.asarray(lines, dtype=np.int64)

    def _read_config(self, logs: list[Path]) -> None:
        folder = self.path if self.path.is_dir() else self.path.parent
        try:
            config, where = read_config(folder, logs)
        except RunError as e:
            self._note(Problem(".hydra/config.yaml", str(e).split(": ", 1)[-1]))
            return
        if config:
            self.meta.config = config
            self.meta.info["config_source"] = where

    # -- rollout dumps -----------------------------------------------------------------------
    def _read_dumps(self, folder: Path) -> tuple[pd.DataFrame, np.ndarray, str] | None:
        rows = []
        new_samples = []
        for f in sorted((p for p in folder.glob("*.jsonl") if _DUMP_RE.match(p.name) and p.is_file()),
                       key=lambda p: int(p.stem)):
            size = f.stat().st_size
            if self._dumps_read.get(f) == size or size == 0:
                continue
            self._dumps_read[f] = size
            step = int(f.stem)
            samples, stats = self._parse_dump(f, step)
            if samples is None:
                continue
            new_samples.append(samples)
            rows.append({"step": step, **stats})
        if new_samples:
            old = self._samples
            steps = {int(s["step"].iloc[0]) for s in new_samples if len(s)}
            keep = old[~old["step"].isin(steps)] if len(old) else old
            self._samples = pd.concat([keep, *new_samples], ignore_index=True).sort_values(
                ["step", "group", "sample"], kind="stable").reset_index(drop=True)
        if not rows:
            return None
        return pd.DataFrame.from_records(rows), np.zeros(len(rows), dtype=np.int64), folder.name

    def _parse_dump(self, f: Path, step: int) -> tuple[pd.DataFrame | None, dict[str, float]]:
        records, fixed = [], []
        with f.open("rb") as fh:
            data = fh.read()
        for no, raw in enumerate(data.split(b"\n"), 1):
            if not raw.strip():
                continue
            try:
                obj, replaced = jsontext.loads(raw)
            except jsontext.JsonProblem as e:
                self._note(Problem(f.name, f"line {no}: {e}; skipped"))
                continue
            fixed += [no] if replaced else []
            try:
                score = float(obj["score"])
                records.append((str(obj.get("input", "")), obj.get("output"), score))
            except (KeyError, TypeError, ValueError, RecursionError, OverflowError):  # a score of 10**400
                self._note(Problem(f.name, f"line {no}: expected JSON with input, output and a numeric score; skipped"))
        if fixed:
            self._note(Problem(f.name, f"line {', '.join(map(str, fixed[:3]))}: lone surrogates (\\u escapes of half "
                                       "a character, which no UTF-8 text holds) replaced by U+FFFD"))
        if not records:
            return None, {}
        return dump_samples(step, records)


def dump_samples(step: int, records: list[tuple[str, Any, float]]) -> tuple[pd.DataFrame, dict[str, float]]:
    """(input, output, score) per response -> (samples frame, group stats of the step).

    Groups are the distinct inputs in first-appearance order; a group of one response carries no
    variance information and is left out of the stats. Stats: zero_std_frac, reward_std_mean.
    """
    group_of: dict[str, int] = {}
    counts: dict[int, int] = {}
    out = []
    for prompt, output, score in records:
        g = group_of.setdefault(prompt, len(group_of))
        s = counts.get(g, 0)
        counts[g] = s + 1
        out.append({"step": step, "prompt_id": hashlib.sha1(prompt.encode(errors="surrogatepass")).hexdigest()[:12], "group": g,
                    "sample": s, "reward": score, "passed": None, "advantage": math.nan, "num_tokens": None,
                    "truncated": None, "prompt": prompt, "completion": None if output is None else str(output)})
    frame = pd.DataFrame(out, columns=list(SAMPLES))
    by_group = frame.groupby("group")["reward"]
    stds = by_group.std(ddof=0)[by_group.size() > 1]
    stats = {}
    if len(stds):
        stats = {"groups/zero_std_frac": float(np.mean(stds.to_numpy() < 1e-8)),
                 "groups/reward_std_mean": float(stds.mean())}
    return frame, stats


@register_source("verl", detect=detect, priority=20, parts=parts, hints={
    "samples": "verl dumps responses only with `trainer.rollout_data_dir=DIR` ({step}.jsonl per step); "
               "put that folder inside the run folder (or open it) to get samples and zero-variance groups.",
    "config": "verl's file logger writes no config; grposcope reads it from Hydra's .hydra/config.yaml in "
              "the run folder (outputs/<date>/<time>/) or from the config main_ppo prints in its console log; "
              "neither is here.",
})
def open_verl(target: str) -> VerlRun:
    return VerlRun(target)
