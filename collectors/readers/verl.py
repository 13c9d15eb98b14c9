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
(collectors.readers.verl_config).
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from collectors.meta import RunError, RunMeta
from collectors.readers.keymap import (
    VERL,
    canonical_name,
    chunk,
    fill_from,
    map_row,
    merge_by_step,
    to_number,
    unscale,
)
from collectors.readers.linetail import LineTail
from collectors.readers.verl_config import read_config
from collectors.run import Problem, Run
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


def _is_console(path: Path) -> bool:
    try:
        with path.open("rb") as f:
            head = f.read(1 << 16).decode("utf-8", "replace")
    except OSError:
        return False
    return any(_CONSOLE_RE.search(line) for line in _ANSI_RE.sub("", head).splitlines())


def _dump_dir(folder: Path) -> Path | None:
    """The folder holding `{step}.jsonl` dumps: the target itself or one of its direct subfolders."""
    for d in [folder, *sorted(p for p in folder.iterdir() if p.is_dir())]:
        if any(_DUMP_RE.match(p.name) for p in d.glob("*.jsonl")):
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
    jsonl = [p for p in sorted(target.glob("*.jsonl")) if not _DUMP_RE.match(p.name) and _is_verl_jsonl(p)]
    logs = [p for p in sorted(target.glob("*.log")) + sorted(target.glob("*.txt")) if _is_console(p)]
    return jsonl, logs, _dump_dir(target)


def detect(target: str) -> bool:
    p = Path(target)
    if p.is_file():
        return (p.suffix == ".jsonl" and _is_verl_jsonl(p)) or (p.suffix in (".log", ".txt") and _is_console(p))
    if not p.is_dir():
        return False
    jsonl, logs, dumps = _layout(p)
    return bool(jsonl or logs or dumps)


@lru_cache(maxsize=1 << 14)
def _verl_name(key: str) -> str:
    return canonical_name(key, [VERL])


def verl_row(data: dict[str, Any]) -> tuple[dict[str, float], list[str]]:
    """One step's verl metrics -> canonical row; scaled keys fixed, validation scores as eval/reward_mean."""
    fixed: dict[str, Any] = {}
    for key, value in data.items():
        number = to_number(value)
        if number is not None:
            key, value = unscale(key, number)
        else:
            key, _ = unscale(key, 1.0)
        fixed[key] = value
    row, bad = map_row(fixed, _verl_name)
    for key, value in fixed.items():
        if key.startswith(_EVAL_PREFIXES) and "eval/reward_mean" not in row and key in row:
            row["eval/reward_mean"] = row[key]
    return row, bad


class VerlRun(Run):
    def __init__(self, path: Path | str) -> None:
        path = Path(path)
        super().__init__(path, RunMeta(run_id=path.stem, name=path.stem if path.is_file() else path.name,
                                       source="verl"))
        self._tails: dict[Path, LineTail] = {}
        self._dumps_read: dict[Path, int] = {}  # dump file -> size read (a dump is written once per step)
        self._group_stats: dict[int, dict[str, float]] = {}
        self._seq = 0
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
        rows: list[dict[str, Any]] = []
        for f in jsonl:
            rows += self._read_file(f, self._jsonl_row)
        for f in logs:
            rows += self._read_file(f, self._console_row)
        if dumps is not None:
            rows += self._read_dumps(dumps)
        if not rows:
            return []
        rows = merge_by_step(rows)
        for row in rows:  # group stats from dumps belong with the step's metrics, whichever came first
            row.update(self._group_stats.get(int(row["step"]), {}))
        rows = fill_from(self._table.frame(), rows)
        frame = chunk(rows, self._seq)
        self._seq += len(rows)
        return [frame]

    def _read_file(self, path: Path, parse) -> list[dict[str, Any]]:
        tail = self._tails.setdefault(path, LineTail(path))
        lines, rewritten, waiting = tail.read()
        if rewritten:
            # a restart rewrote the file: what it said before no longer describes this run
            self._table.reset()
            self._note(Problem(path.name, "file was rewritten (a restart?); read again from the top"))
        rows = []
        for no, text in lines:
            if text.strip():
                row = parse(path, no, text)
                if row is not None:
                    rows.append(row)
        if waiting:
            self.problems.append(Problem(path.name, f"line {tail.line_no + 1} is incomplete; waiting for the rest"))
        return rows

    def _jsonl_row(self, path: Path, no: int, text: str) -> dict[str, Any] | None:
        try:
            obj = json.loads(text)
        except json.JSONDecodeError as e:
            self._note(Problem(path.name, f"line {no}: not JSON ({e.msg}); skipped"))
            return None
        if not isinstance(obj, dict) or not isinstance(obj.get("step"), int) or not isinstance(obj.get("data"), dict):
            self._note(Problem(path.name, f"line {no}: expected {{\"step\": int, \"data\": {{...}}}}; skipped"))
            return None
        return self._row(path, no, obj["step"], obj["data"])

    def _console_row(self, path: Path, no: int, text: str) -> dict[str, Any] | None:
        m = _CONSOLE_RE.search(_ANSI_RE.sub("", text).rstrip())
        if not m:
            return None  # other console output
        data: dict[str, Any] = {}
        for part in m[2].split(" - "):
            key, sep, value = part.rpartition(":")
            if sep and key:
                data[key.strip()] = value.strip()
        return self._row(path, no, int(m[1]), data)

    def _row(self, path: Path, no: int, step: int, data: dict[str, Any]) -> dict[str, Any]:
        row, bad = verl_row(data)
        if bad:
            self._note(Problem(path.name, f"line {no}: non-numeric value for {', '.join(bad[:3])}; left null"))
        return {"step": step, **row}

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
    def _read_dumps(self, folder: Path) -> list[dict[str, Any]]:
        rows = []
        new_samples = []
        for f in sorted((p for p in folder.glob("*.jsonl") if _DUMP_RE.match(p.name)), key=lambda p: int(p.stem)):
            size = f.stat().st_size
            if self._dumps_read.get(f) == size or size == 0:
                continue
            self._dumps_read[f] = size
            step = int(f.stem)
            samples, stats = self._parse_dump(f, step)
            if samples is None:
                continue
            self._group_stats[step] = stats
            new_samples.append(samples)
            rows.append({"step": step, **stats})
        if new_samples:
            old = self._samples
            steps = {int(s["step"].iloc[0]) for s in new_samples if len(s)}
            keep = old[~old["step"].isin(steps)] if len(old) else old
            self._samples = pd.concat([keep, *new_samples], ignore_index=True).sort_values(
                ["step", "group", "sample"], kind="stable").reset_index(drop=True)
        return rows

    def _parse_dump(self, f: Path, step: int) -> tuple[pd.DataFrame | None, dict[str, float]]:
        records = []
        with f.open("rb") as fh:
            data = fh.read()
        for no, raw in enumerate(data.split(b"\n"), 1):
            if not raw.strip():
                continue
            try:
                obj = json.loads(raw)
                score = float(obj["score"])
                records.append((str(obj.get("input", "")), obj.get("output"), score))
            except (json.JSONDecodeError, KeyError, TypeError, ValueError):
                self._note(Problem(f.name, f"line {no}: expected JSON with input, output and a numeric score; skipped"))
        if not records:
            return None, {}
        return dump_samples(step, records)

    def _note(self, problem: Problem) -> None:
        if problem not in self.problems:
            self.problems.append(problem)


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
        out.append({"step": step, "prompt_id": hashlib.sha1(prompt.encode()).hexdigest()[:12], "group": g,
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


@register_source("verl", detect=detect, priority=20, hints={
    "samples": "verl dumps responses only with `trainer.rollout_data_dir=DIR` ({step}.jsonl per step); "
               "put that folder inside the run folder (or open it) to get samples and zero-variance groups.",
    "config": "verl's file logger writes no config; grposcope reads it from Hydra's .hydra/config.yaml in "
              "the run folder (outputs/<date>/<time>/) or from the config main_ppo prints in its console log; "
              "neither is here.",
})
def open_verl(target: str) -> VerlRun:
    return VerlRun(target)
