"""Key-value text logs of custom trainers: one line per step with repeated `Name: number` pairs.

    Epoch:[1/1](1/9751), Reward: -2.3041, KL_ref: -0.0010, Adv Std: 0.9258, Avg Response Len: 271.38
    step=10 loss=0.41 reward=0.25 kl=0.002

A line with at least MIN_PAIRS pairs (`Name: number` or `name=number`) is a row; every other line (prints,
progress bars, debug dumps) is skipped. Names go through the synonym table and `--map` (`Avg Response Len`
is `completions/len_mean`). The step is, first found: a pair named step / global_step / iter / iteration,
or such a word followed by a number (`Step 10/1000 |`, `iter 7 -`); a `(i/N)` counter on the line (after an
`[e/E]` epoch counter, the step counts on across epochs: (e - 1) * N + i); else the row's position in the
file, which a reader note says was assumed.

Detection reads the first DETECT_BYTES of a `.log`/`.txt`/`.out` file and wants two such lines naming the
same keys; verl's `step:N - key:value` lines and Python dict lines (TRL) never qualify, and those readers are
asked first anyway.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pandas as pd

from collectors.meta import RunMeta
from collectors.readers.folders import file_runs, head_of
from collectors.readers.text.linetail import LineTail
from collectors.readers.text.rows import TextRun
from collectors.run import Problem
from collectors.sources import no_parts, register_source

MIN_PAIRS = 3
DETECT_BYTES = 1 << 20
SUFFIXES = (".log", ".txt", ".out")
# possessive: a number of 5,000 digits followed by no separator fails at once, not after trying every split
# `k/n` (a count of n, `correct=1/4`) first: text.responses reads it as the fraction k/n
_NUM = r"\d{1,9}/\d{1,9}|[-+]?(?:\d++(?:\.\d*+)?|\.\d++)(?:[eE][-+]?\d++)?|[-+]?(?:nan|inf)"
# a name starts after a separator (never inside a quoted dict key), may hold a few words, ends at : or =
_PAIR_RE = re.compile(rf"(?:^|(?<=[\s,;|(\[]))([A-Za-z_][\w./]*(?: [A-Za-z][\w./]*){{0,4}})\s*[:=]\s*({_NUM})"
                      rf"(?=$|[\s,;|)\]])", re.IGNORECASE)
_COUNTER_RE = re.compile(r"([\[(])\s*(\d+)\s*/\s*(\d+)\s*[\])]")
_STEP_WORD_RE = re.compile(r"\b(?:global[ _]step|step|iter(?:ation)?)\s*[:=#]?\s*(\d+)(?:\s*/\s*\d+)?\b", re.IGNORECASE)
_VERL_RE = re.compile(r"(?:^|\s)step:\d+ - ")
_STEP_NAMES = ("step", "global_step", "global step", "iter", "iteration", "steps")


def pairs(line: str) -> list[tuple[str, str]]:
    """[(name, number text)] of one line, in order."""
    return _PAIR_RE.findall(line)


def detect(target: str) -> bool:
    if (raw := head_of(target, SUFFIXES, DETECT_BYTES)) is None:
        return False
    head = raw.decode("utf-8", "replace")
    if _VERL_RE.search(head):
        return False
    keys = []
    for line in head.splitlines():
        if line.count(":") + line.count("=") < MIN_PAIRS or line.lstrip().startswith("{"):
            continue
        found = pairs(line)
        if len(found) >= MIN_PAIRS:
            names = tuple(n for n, _ in found)
            if names in keys:
                return True
            keys.append(names)
    return False


def row_keys(found: list[list[tuple[str, str]]]) -> set[str] | None:
    """The names of a row: those of the first line whose exact names a later line repeats."""
    seen: set[tuple[str, ...]] = set()
    for pairs_ in found:
        names = tuple(n for n, _ in pairs_)
        if names in seen:
            return set(names)
        seen.add(names)
    return None


def _count(text: str) -> int | None:
    """A step or counter printed as digits; None past int64 (a 5,000-digit number is no step, and int() of it
    fails)."""
    text = text.strip().lstrip("+")
    return int(text) if len(text.lstrip("-")) <= 18 else None


def step_of(line: str, found: list[tuple[str, str]]) -> tuple[int | float | None, str]:
    """(step, how it was found) for one row line; (None, "order") when the line names none."""
    for name, value in found:
        if name.lower() in _STEP_NAMES:
            try:
                number = float(value)
                # past int64 (1e400, a 5,000-digit number) the row is left out, counted, as in every text reader
                return (int(number) if abs(number) < 2**63 else math.inf), f"the `{name}` value"
            except ValueError:  # nan
                break
    if (m := _STEP_WORD_RE.search(line)) and (step := _count(m[1])) is not None:  # `Step 10/1000 |`, `iter 7 -`
        return step, "the step the line prints"
    counters = [(br, _count(i), _count(n)) for br, i, n in _COUNTER_RE.findall(line)]
    counters = [(br, i, n) for br, i, n in counters if i is not None and n is not None]
    inner = [(i, n) for br, i, n in counters if br == "("]
    outer = [(i, n) for br, i, n in counters if br == "["]
    if inner:
        i, n = inner[0]
        if outer and outer[0][1] > 1:
            return (outer[0][0] - 1) * n + i, "the `[epoch/E](i/N)` counters, as (epoch - 1) * N + i"
        return i, "the `(i/N)` counter"
    return None, "order"


class KvTextRun(TextRun):
    def __init__(self, path: Path | str, mapping=None) -> None:
        path = Path(path)
        super().__init__(path, RunMeta(run_id=path.stem, name=path.stem, source="kvtext"), mapping)
        self._tail = LineTail(path, note=lambda m: self._note(Problem(path.name, m)))
        self._rows_read = 0
        self._how: str | None = None
        self._keys: set[str] | None = None  # the names of a row line, from the first two that agree
        self._said_empty = False
        self._read_side_config()
        self.refresh()

    def _read_new(self) -> list[pd.DataFrame]:
        block, first, rewritten, _ = self._tail.read_bytes()
        if rewritten:
            self._rows_read, self._how, self._keys = 0, None, None
            self._reset(self.path.name, "file was rewritten; read again from the top")
        found_lines = []
        for no, line in enumerate(block.decode("utf-8", "replace").split("\n"), first):
            if line.count(":") + line.count("=") >= MIN_PAIRS and len(found := pairs(line)) >= MIN_PAIRS:
                found_lines.append((no, line, found))
        if self._keys is None:
            self._keys = row_keys([f for _, _, f in found_lines])
            if self._keys is None:
                if block.strip() and not self._said_empty:  # say it once: a live log may still get its rows
                    self._said_empty = True
                    self._note(Problem(self.path.name, f"no two lines with {MIN_PAIRS} or more `Name: number` "
                                       "pairs under the same names yet: no row read (is this a key-value log?)"))
                return []
        rows, lines = [], []
        for no, line, found in found_lines:
            if len(self._keys.intersection(n for n, _ in found)) < min(MIN_PAIRS, len(self._keys)):
                continue  # a printed sample or a stray line that happens to hold pairs
            step, how = step_of(line, found)
            self._rows_read += 1
            self._say_how(how)
            rows.append({"step": self._rows_read if step is None else step,
                         **{name: value for name, value in found if name.lower() not in _STEP_NAMES}})
            lines.append(no)
        if not rows:
            return []
        return self._emit(pd.DataFrame.from_records(rows), self.path.name, np.asarray(lines))

    def _say_how(self, how: str) -> None:
        if how == self._how or (self._how or "").startswith("mixed"):
            return
        self.problems = [p for p in self.problems if not p.message.startswith("step taken from")]
        if self._how is not None:
            how = "mixed sources (a counter on some lines, none on others); check the steps"
        self._how = how
        text = ("the row's position among the key-value lines (the lines name no step): an assumption"
                if how == "order" else how)
        self._note(Problem(self.path.name, f"step taken from {text}"))


detect_any, launches = file_runs(detect, SUFFIXES)


@register_source("kvtext", detect=detect_any, launches=launches, parts=no_parts, priority=2, hints={
    "samples": "a key-value text log holds per-step numbers only; responses need a run folder (collectors.RunWriter).",
    "config": "a key-value text log holds no config; put the config the run used beside it as config*.yaml "
              "(or .json) and it is read.",
})
def open_kvtext(target: str) -> KvTextRun:
    return KvTextRun(target)
