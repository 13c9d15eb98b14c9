"""Generic one-row-per-step JSONL or CSV logs as a Run, with an optional `theirs=ours` key map.

A row needs a step column (`step`, `global_step`, `train/global_step` or `iteration`); every other
column is a metric, renamed by the user's map first, then by the TRL/verl/OpenRLHF maps, else kept as is.
Files are tailed from a byte offset, so a growing log refreshes by its new lines only.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from collectors.meta import RunMeta
from collectors.readers.keymap import map_row, step_chunks
from collectors.readers.linetail import LineTail
from collectors.run import Problem, Run
from collectors.sources import register_source

STEP_KEYS = ("step", "global_step", "train/global_step", "iteration")


def detect(target: str) -> bool:
    p = Path(target)
    if not (p.is_file() and p.suffix in (".jsonl", ".csv")):
        return False
    try:
        with p.open("rb") as f:
            head = f.readline(1 << 16).decode("utf-8", "replace")
    except OSError:
        return False
    if p.suffix == ".csv":
        return any(k in next(csv.reader([head]), []) for k in STEP_KEYS)
    return any(f'"{k}"' in head for k in STEP_KEYS)


class GenericRun(Run):
    nan_known = True  # JSON NaN / CSV "nan" is a logged NaN; a null or an empty cell is not logged

    def __init__(self, path: Path | str, mapping: Mapping[str, str] | None = None) -> None:
        path = Path(path)
        super().__init__(path, RunMeta(run_id=path.stem, name=path.stem, source="generic"))
        self.mapping = dict(mapping or {})
        self._tail = LineTail(path)
        self._header: list[str] | None = None
        self._seq = 0
        self.refresh()

    def _read_new(self) -> list[pd.DataFrame]:
        if not self.path.is_file():
            self._note(Problem(self.path.name, "no such file"))
            return []
        lines, rewritten, _ = self._tail.read()
        if rewritten:
            self._table.reset()
            self._header = None
            self._note(Problem(self.path.name, "file was rewritten; read again from the top"))
        rows = []
        for no, text in lines:
            if not text.strip():
                continue
            raw = self._parse(no, text)
            if raw is None:
                continue
            step_key = next((k for k in STEP_KEYS if k in raw), None)
            try:
                step = int(float(raw.pop(step_key))) if step_key else None
            except (TypeError, ValueError):
                step = None
            if step is None:
                self._note(Problem(self.path.name, f"line {no}: no integer step ({', '.join(STEP_KEYS)}); skipped"))
                continue
            row, bad = map_row({k: (None if v == "" else v) for k, v in raw.items()}, overrides=self.mapping)
            if bad:
                self._note(Problem(self.path.name, f"line {no}: non-numeric {', '.join(bad[:3])}; left null"))
            rows.append({"step": step, **row})
        if not rows:
            return []
        self._note_repeats(rows)
        out, self._seq = step_chunks(self._table.frame(), rows, self._seq)
        return out

    def _parse(self, no: int, text: str) -> dict[str, Any] | None:
        if self.path.suffix == ".csv":
            cells = next(csv.reader([text]))
            if self._header is None:
                self._header = cells
                return None
            if len(cells) != len(self._header):
                self._note(Problem(self.path.name, f"line {no}: {len(cells)} cells, header has "
                                                   f"{len(self._header)}; skipped"))
                return None
            return dict(zip(self._header, cells, strict=True))
        try:
            obj = json.loads(text)
        except json.JSONDecodeError as e:
            self._note(Problem(self.path.name, f"line {no}: not JSON ({e.msg}); skipped"))
            return None
        if not isinstance(obj, dict):
            self._note(Problem(self.path.name, f"line {no}: not a JSON object; skipped"))
            return None
        return obj

    def _note_repeats(self, rows: list[dict[str, Any]]) -> None:
        # one row per step: a step seen twice within a read is a restart or a duplicated log line
        steps = [r["step"] for r in rows]
        seen, dups = set(), []
        for s in steps:
            if s in seen:
                dups.append(s)
            seen.add(s)
        if dups:
            shown = ", ".join(map(str, sorted(set(dups))[:5]))
            self._note(Problem(self.path.name, f"{len(set(dups))} step(s) logged more than once ({shown}); "
                                               "the last write is kept"))

    def _note(self, problem: Problem) -> None:
        if problem not in self.problems:
            self.problems.append(problem)


@register_source("generic", detect=detect, priority=1, hints={
    "samples": "a one-row-per-step log holds metrics only; responses need a run folder (collectors.RunWriter).",
    "config": "a one-row-per-step log holds no config.",
})
def open_generic(target: str) -> GenericRun:
    return GenericRun(target)
