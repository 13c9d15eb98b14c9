"""TRL / transformers Trainer console logs: the log dicts the Trainer prints, with tqdm bars and other output
between them (`python train.py > train.log 2>&1`).

What the console holds: each logging step, transformers' ProgressCallback writes `str(logs)` with
`tqdm.write` (PrinterCallback `print`s it when tqdm is off): `{'loss': 0.016, 'grad_norm': ..., 'reward': ...}`;
older TRL versions print the values as strings. Eval dicts carry `eval_*` keys; the last dict is the train
summary (`train_runtime`, `train_loss`), kept in `meta.info["train_summary"]`, not as a row. The dicts hold
no step, so it comes from what the log says, first that applies (and a reader note says which):
  1. tqdm's own trace of each write: `tqdm.write` clears the bars (a run of spaces) and redraws the
     training bar at its current `N/M` counter, on stderr, in time; the dict goes to stdout, which a file
     redirect may buffer, so the dicts can arrive in blocks, later. The k-th write belongs to the k-th dict
     and its step is the count of the redraw: the count drawn before the clear may be stale, because tqdm
     skips redraws within `mininterval` (0.1 s) of the last. A clear that ends by moving the cursor up is a
     nested (eval) bar closing, not a write;
  2. `logging_steps` from a printed config (TrainingArguments / GRPOConfig repr, a Namespace, a dict):
     the k-th training dict is step k * logging_steps;
  3. a finished bar's total M over the n training dicts, when n divides M (logging every M / n steps);
  4. else the dict's position (1, 2, ...), said to be an assumption.
An eval dict without its own write takes the step of the training dict before it.

Whose dicts: transformers' Trainer prints them for any trainer built on it, and a custom trainer may print its
own the same way. The run is TRL's (source `trl-console`, whose conventions the diagnosis then assumes: one
update per rollout unless the config says otherwise) only once a dict carries a key TRL's GRPOTrainer alone
writes (`TRL_OWN`); until then it is `trainer-console`, a Trainer-style console whose trainer is not known.
"""

from __future__ import annotations

import ast
import re
from itertools import pairwise
from pathlib import Path
from typing import Any

import pandas as pd

from collectors.meta import RunMeta
from collectors.readers.folders import file_runs, head_of
from collectors.readers.jsontext import replace_surrogates
from collectors.readers.keymap import TRAINER_SUMMARY_KEYS
from collectors.readers.text.linetail import LineTail
from collectors.readers.text.rows import TextRun
from collectors.readers.trl.printed_args import printed_args
from collectors.run import Problem
from collectors.schema import METRICS
from collectors.sources import no_parts, register_source

DETECT_BYTES = 2 << 20
SUFFIXES = (".log", ".txt", ".out", ".md")  # .md: a console pasted into a Markdown file
_SEG_RE = re.compile(rb"[\r\n]")
_ANSI_RE = re.compile(rb"\x1b\[[0-9;]*[A-Za-z]")  # colours, and the cursor moves of nested bars
# the Trainer's bar has no description; a count of more than 18 digits is no bar's (and int() fails past 4,300)
_BAR_RE = re.compile(rb"^\s*\d+%\|[^|]*\|\s*(\d{1,18})/(\d{1,18}) \[")
# a dict may be indented or quoted (`> `) where a console was pasted into Markdown or a notebook cell
_DICT_RE = re.compile(rb"^[ \t>]*\{'[^']+': ")
_LOGGING_STEPS_RE = re.compile(rb"""logging_steps['"]?\s*[=:]\s*['"]?(\d{1,18})(?!\d)""")
_TRAIN_KEYS = ("loss", "reward", "learning_rate", "grad_norm", "kl", "completion_length", "completions/mean_length")
# keys of TRL's GRPOTrainer log that neither transformers' Trainer (loss, grad_norm, learning_rate, epoch) nor
# custom trainers commonly print (reward, kl, entropy): the group statistics and TRL's namespaces, from its
# `_metrics` (0.14's `completion_length` and `rewards/<fn>`, 0.16 on `completions/*`, `clip_ratio/*`). A
# canonical name (`completions/len_mean`) is ours, written by anyone: it says nothing of the trainer.
TRL_OWN = frozenset({"reward_std", "frac_reward_zero_std", "completion_length"})
TRL_OWN_PREFIXES = ("rewards/", "completions/", "clip_ratio/", "sampling/")
TRL_SOURCE, TRAINER_SOURCE = "trl-console", "trainer-console"


def is_trl_dict(items: dict[str, Any]) -> bool:
    """Whether one printed log dict holds a key only TRL's GRPOTrainer writes (see TRL_OWN)."""
    return any(k not in METRICS and (k in TRL_OWN or k.startswith(TRL_OWN_PREFIXES)) for k in items)


def detect(target: str) -> bool:
    """A text log holding at least one Trainer log dict (a dict line with a known training key)."""
    if (head := head_of(target, SUFFIXES, DETECT_BYTES)) is None:
        return False
    for m in re.finditer(rb"(?:^|[\r\n])[ \t>]*(\{'[^\r\n]*\})", head):
        if any(f"'{k}': ".encode() in m[1] for k in (*_TRAIN_KEYS, *TRAINER_SUMMARY_KEYS)):
            return True
    return False


# Python prints a NaN or infinite float as a bare `nan` / `inf`, which literal_eval refuses (a name, not a
# value): quoted, it is text the row readers take as a logged NaN or an infinity (a beta = 0 run's `kl`)
_BARE_FLOAT_RE = re.compile(r"(?<=: )(-?(?:nan|inf))(?=[,}])")


def parse_dict(seg: bytes) -> dict[str, Any] | None:
    """One printed log dict -> its items (literal_eval: no code runs); None when it is not one."""
    text = seg.decode("utf-8", "replace").strip()
    try:
        obj = ast.literal_eval(text)
    except ValueError:
        try:
            obj = ast.literal_eval(_BARE_FLOAT_RE.sub(r"'\1'", text)) if "nan" in text or "inf" in text else None
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            return None
    except (SyntaxError, MemoryError, RecursionError):
        return None
    return obj if isinstance(obj, dict) and all(isinstance(k, str) for k in obj) else None


def why_not_a_dict(seg: bytes) -> str:
    """Why `parse_dict` refused a line that looks like a log dict, in words."""
    try:
        ast.literal_eval(seg.decode("utf-8", "replace").strip())
    except ValueError as e:
        if "digits" in str(e):
            return "a log dict holding a number of more than 4,300 digits"
        return "a log dict holding an expression, not values"
    except (MemoryError, RecursionError):
        return "a log dict nested too deep to read"
    except SyntaxError:
        return "a log dict that does not parse (cut short?)"
    return "not a dict of named values"


def kind(d: dict[str, Any]) -> str:
    if any(k in d for k in TRAINER_SUMMARY_KEYS):
        return "summary"
    if any(k.startswith("eval_") for k in d) and not any(k in d for k in ("loss", "reward")):
        return "eval"
    return "train"


class TrlConsoleRun(TextRun):
    def __init__(self, path: Path | str, mapping=None) -> None:
        path = Path(path)
        super().__init__(path, RunMeta(run_id=path.stem, name=path.stem, source=TRAINER_SOURCE), mapping)
        self._tail = LineTail(path, carriage_return_ends=True,
                              note=lambda m: self._note(Problem(path.name, m)))
        self._start()
        self.refresh()

    def _start(self) -> None:
        self.meta.source = TRAINER_SOURCE  # until a dict of TRL's own (module docstring)
        self._bar: tuple[int, int] | None = None  # (N, M) of the training bar as last drawn
        self._total: int | None = None  # M of the training bar (an eval bar has its own)
        self._dirty = True  # something was drawn or printed since the last clear
        self._writes: list[int] = []  # bar counter at each tqdm.write
        self._pending: int | None = None  # a clear not yet followed by the bar's redraw: the count before it
        self._dicts: list[tuple[int, str, dict[str, Any]]] = []  # (line, kind, items)
        self._logging_steps: int | None = None
        self._line = 1
        self._emitted = 0
        self._numbered: list[int] = []  # the steps the emitted dicts were given
        self._how: str | None = None

    def _read_new(self) -> list[pd.DataFrame]:
        block, first, rewritten, _ = self._tail.read_bytes()
        if rewritten:
            self._start()
            self._reset(self.path.name, "file was rewritten; read again from the top")
        self._line = first
        self._scan(block)
        how, steps = self._steps()
        if self._emitted and (how != self._how or steps[:self._emitted] != self._numbered):
            # the evidence changed (the run finished, a clear turned out to close an eval bar): renumber
            self._table.reset()
            self._emitted = 0
        self._say(how)
        new = range(self._emitted, len(self._dicts))
        rows, lines = [], []
        for i in new:
            line, k, items = self._dicts[i]
            if k == "summary":
                self.meta.info["train_summary"] = items
                continue
            rows.append({"step": steps[i], **{key: v for key, v in items.items() if not isinstance(v, (dict, list))}})
            lines.append(line)
        self._emitted, self._numbered = len(self._dicts), steps
        if any(k == "summary" for _, k, _ in self._dicts):
            self.meta.status = "finished"
        return self._emit(pd.DataFrame.from_records(rows), self.path.name, lines) if rows else []

    def _scan(self, block: bytes) -> None:
        """Bars, clears (a tqdm.write), dicts and a printed logging_steps, in the order they were written."""
        if self._logging_steps is None and (m := _LOGGING_STEPS_RE.search(block)):
            self._logging_steps = int(m[1]) or None
        for key, value in printed_args(block).items():  # the length cap, G, beta ... of a printed GRPOConfig
            self.meta.config.setdefault(key, value)
        pos, data = 0, block if block.endswith((b"\n", b"\r")) else block + b"\n"
        for m in _SEG_RE.finditer(data):
            seg, line = data[pos:m.start()], self._line
            if m.group() == b"\n":
                self._line += 1
            pos = m.end()
            closes = seg.endswith(b"\x1b[A") and not seg.strip(b" \x1b[A")  # a nested bar's `leave=False` close
            if b"\x1b" in seg:
                seg = _ANSI_RE.sub(b"", seg)
            if not seg:
                continue
            if bar := _BAR_RE.match(seg):
                n, total = int(bar[1]), int(bar[2])
                if self._total is None:
                    self._total = total  # the first bar without a description is the Trainer's
                if total == self._total:
                    if self._pending is not None and n >= self._pending:
                        self._writes.append(n)  # cleared and redrawn: a tqdm.write, at the redraw's count
                    self._pending = None
                    self._bar = (n, total)
                self._dirty = True
            elif not seg.strip(b" "):  # tqdm clears the bars with spaces before a write (or closing a bar)
                if not closes and self._dirty and self._bar is not None and self._pending is None:
                    self._pending = self._bar[0]
                self._dirty = False
            elif _DICT_RE.match(seg):
                seg = seg.lstrip(b" \t>")
                if (items := parse_dict(seg)) is not None:
                    if b"\\u" in seg or b"\\U" in seg:  # an escape of half a character no UTF-8 text holds
                        items, replaced = replace_surrogates(items)
                        if replaced:
                            self._note(Problem(self.path.name, f"line {line}: lone surrogates (\\u escapes of "
                                                               "half a character) replaced by U+FFFD"))
                    self._dicts.append((line, kind(items), items))
                    if self.meta.source != TRL_SOURCE and is_trl_dict(items):
                        self.meta.source = TRL_SOURCE
                else:
                    self._note(Problem(self.path.name, f"line {line}: {why_not_a_dict(seg)}; skipped"))
                self._dirty = True
            else:
                self._dirty = True

    def _steps(self) -> tuple[str, list[int]]:
        """(how the steps were found, the step of every dict so far); see the module docstring."""
        n = len(self._dicts)
        finished = any(k == "summary" for _, k, _ in self._dicts) or (self._bar and self._bar[0] == self._bar[1])
        writes = self._writes + ([self._pending] if self._pending is not None else [])
        if n and len(writes) >= n and (not finished or len(writes) == n):
            steps = writes[:n]
            if all(b >= a for a, b in pairwise(steps)):
                return "tqdm", steps
        n_train = sum(k == "train" for _, k, _ in self._dicts)
        if self._logging_steps:
            return f"logging_steps={self._logging_steps}", self._every(self._logging_steps)
        if finished and self._bar and n_train and self._bar[1] % n_train == 0:
            return f"total={self._bar[1]}", self._every(self._bar[1] // n_train)
        return "order", self._every(1)

    def _every(self, k: int) -> list[int]:
        out, step = [], 0
        for _, kd, _ in self._dicts:
            if kd == "train":
                step += k
            out.append(max(step, k) if kd != "train" else step)
        return out

    def _say(self, how: str) -> None:
        if how == self._how or not self._dicts:
            return
        self._how = how
        # as the rows readers say it (text/generic.py): `order` when the steps are the dicts' positions
        self.meta.info["step_from"] = how
        self.problems = [p for p in self.problems if not p.message.startswith("step ")]
        if how == "tqdm":
            text = "step taken from the progress bar's N/M counter at each printed dict"
        elif how.startswith("logging_steps"):
            text = f"step assumed from the printed {how}: the k-th training dict is step k x {how.split('=')[1]}"
        elif how.startswith("total"):
            m = int(how.split("=")[1])
            text = (f"step assumed from the finished bar's total {m} over the training dicts: logging every "
                    f"{m // max(1, sum(k == 'train' for _, k, _ in self._dicts))} steps")
        else:
            text = "step assumed: the log gives neither bar counters nor logging_steps; dicts numbered 1, 2, ..."
        self._note(Problem(self.path.name, text))


detect_any, launches = file_runs(detect, SUFFIXES)


@register_source("trl-console", detect=detect_any, launches=launches, parts=no_parts, priority=14, hints={
    "samples": "a console log holds the printed metrics only; for completions use TRL's `log_completions=True` "
               "and open the output folder, or add collectors.trl.GrpoScopeCallback.",
    "config": "a console log holds no config grposcope reads; open the TRL output folder (training_args.bin) "
              "for it.",
})
def open_trl_console(target: str) -> TrlConsoleRun:
    return TrlConsoleRun(target)
