"""OpenRLHF console logs: the `✨ Global step N: {...}` line its trainer writes after every step, amid whatever
else a SLURM or Ray log holds (vLLM and NCCL output, weight syncs, progress bars), however much of it.

What OpenRLHF writes (read in OpenRLHF/OpenRLHF; versions are the first tag holding the change):
- 0.8.1 on (commit 14fe44c6): after each global step (one rollout batch and the optimizer steps taken on it)
  `PPOTrainer.fit` calls `logger.info(f"✨ Global step {global_step}: {log_status}")`
  (openrlhf/trainer/ppo_trainer.py). The logger (openrlhf/utils/logging_utils.py) writes
  `"%(levelname)s %(asctime)s %(filename)s:%(lineno)d] %(message)s"` with the date as `"%m-%d %H:%M:%S"` to
  stdout; the trainer is a Ray actor, so Ray puts `(PPOTrainer pid=...)` before the line (in colour on a
  terminal). `log_status` is the step's status dict printed by `str()`: a Python dict repr, quoted keys, floats,
  NaN and infinity as the bare words `nan` / `inf`. It is read with `json` when it is plain (no quotes inside
  values) and with `ast.literal_eval` otherwise, never `eval`.
- Evaluation (same versions): `✨ Evaluation completed in T, global_step N, eval_metrics: {...}`, keys
  `eval_<datasource>_pass1`, `..._pass<n>`, `eval_response_length_mean` ...
- The arguments: `strategy.print(args)` at start (openrlhf/cli/train_ppo_ray.py) prints the argparse
  `Namespace(...)`, or from 0.10 the nested `namespace(actor=namespace(...), ...)`. Read as the run's config
  (dotted keys, `actor.eps_clip_low_high`), parsed as a Python expression tree, never run.
- Before 0.8.1 the console holds only tqdm bars (the `Train epoch` bar's short names per micro-batch, the
  `Episode` bar's full status). Such a log is recognised by the PPO bar (so that no reader of key-value lines
  takes one micro-batch's values for a step) and opens with no rows and a note that says why: its wandb or
  TensorBoard logs carry the step metrics (see docs/importing.md).

Status keys and what they mean are in collectors/readers/keymap.py (OPENRLHF). The reader adds what a key map
cannot: `dynamic_filtering_pass_rate` is logged in percent of the prompts consumed and becomes
`groups/dropped_frac` = 1 - rate / 100 (0.11 on logs it as kept samples per prompt, up to
n_samples_per_prompt x 100: divided by n_samples_per_prompt from the config, else left as logged); an eval
line's `eval_<datasource>_pass1` is `eval/reward_mean` (OpenRLHF's own best-checkpoint metric: the first
`_pass1` key in sorted order); where two keys mean the same (`truncated`, `rollout/truncated_rate`,
`response_clip_ratio`) the faithful one wins.

Launches: one file may hold several (a SLURM job that trains twice, a requeued job appending to its .out). The
step lines are cut into stretches of rising steps; a stretch starting at or below the first step of the launch
before it starts a new launch, one starting above it is that launch resumed (its values win for steps logged
twice), as for TensorBoard files (`launches.group_launches`). A file holding several opens as `FILE#1`,
`FILE#2`, ...; no value of one launch reaches another.
"""

from __future__ import annotations

import ast
import json
import math
import os
import re
import stat
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from collectors.levels import PASS_RATE, dropped_frac, n_samples_per_prompt
from collectors.meta import RunError, RunMeta, flatten_config
from collectors.readers.keymap import to_number
from collectors.readers.synonyms import rename_plan, user_map
from collectors.readers.text.linetail import LineTail
from collectors.readers.text.rows import TextRun
from collectors.run import Problem
from collectors.sources import launch_target, no_parts, register_source, split_launch

SUFFIXES = (".log", ".out", ".txt", ".err")
MAX_FILES = 20  # a folder: the first files by name that are looked at (folders.file_runs does the same)
DETECT_BYTES = 8 << 20  # the first step follows model loading and vLLM start-up: megabytes in a big job
_KNOWN: set[str] = set()  # recognised once, a log stays an OpenRLHF log: a growing file is not searched again
STEP_MARK = b"Global step "
SPARKLE = "\u2728".encode()  # the sparkle both of OpenRLHF's lines start their message with
EVAL_MARK = b"eval_metrics: {"
ARGS_MARK = b"amespace("  # Namespace( (argparse) and namespace( (SimpleNamespace, 0.10 on)
# a dict cut short is a step line that does not parse; so is a step of more than 18 digits (no int64, and int()
# refuses past 4,300 digits)
_STEP_RE = re.compile(rb"Global step (\d{1,18}): (\{.*)$")
_EVAL_RE = re.compile(rb"global_step (\d{1,18}), eval_metrics: (\{.*)$")
_ARGS_RE = re.compile(rb"^(?:\x1b\[[0-9;]*m)*(?:\([^()]*\)\s*)?(?:\x1b\[[0-9;]*m)*\s*([Nn]amespace\(.*\))\s*$")
_PID_RE = re.compile(rb"^(?:\x1b\[[0-9;]*m)*\(([A-Za-z_][\w.]*) pid=(\d+)")
# A plain status dict (keys and values without quotes or escapes inside) is JSON once its quotes are swapped
# and Python's bare words are JSON's; only at value positions (after ": " or inside a list).
_WORDS = {b"nan": b"NaN", b"inf": b"Infinity", b"-inf": b"-Infinity", b"True": b"true", b"False": b"false",
          b"None": b"null"}
_WORD_RE = re.compile(rb"(?:(?<=[:,] )|(?<=\[))(-?inf|nan|True|False|None)(?=[,}\]])")
_PY_WORD_RE = re.compile(r"(?:(?<=[:,] )|(?<=[\[(]))(-?inf|nan)(?=[,}\])])")
_WRAPPED_RE = re.compile(r"\b(?:np|numpy|torch)?\.?(?:float\d*|int\d*|tensor)\(([-+0-9.eE]+|-?inf|nan)(?:,[^()]*)?\)")
_SENTINEL = "\x00grposcope:"
# eval keys: `eval_<datasource>_pass1`; the mean eval reward (a pass rate only when rewards are 0/1)
_PASS1_RE = re.compile(r"^eval_(.+)_pass1$")
# Where two keys mean the same, the first listed wins (a frame's first column wins in synonyms.to_canonical):
# `truncated` is vLLM's finish_reason == "length"; `response_clip_ratio` counts prompt + response reaching the
# context window (newer versions) and is only the stand-in where `truncated` is not logged.
PREFERRED = ("truncated", "rollout/truncated_rate", "response_clip_ratio")
STEP_LIMIT = 2**63  # steps are int64 in every table
MAX_LITERAL = 1 << 20  # a status dict is a few KB; one wider than this is not handed to Python's parser
MAX_KEY = 1000  # characters of a metric name; a longer key is no metric (and would be copied into every note)
NO_STEP_LINE = "no '\u2728 Global step N: {...}' line"
# argparse names (and 0.10's dotted ones) only OpenRLHF's printed args hold: a vLLM or other Namespace is not its
_OPENRLHF_ARGS = ("n_samples_per_prompt", "advantage_estimator", "actor_learning_rate", "rollout_batch_size",
                  "micro_train_batch_size", "init_kl_coef", "eps_clip", "estimator")


# -- parsing one line ------------------------------------------------------------------------------------------
def parse_status(text: bytes) -> dict[str, Any] | None:
    """A printed status dict -> {key: value}; None when it is not one (cut short, not a dict of str keys).

    Fast path: json on the text with quotes swapped and bare words translated, for a dict whose text holds no
    double quote and no backslash (so every string is `'...'` with nothing to escape inside, and the swap is
    exact). Otherwise `ast.literal_eval`, with `nan`/`inf` and numpy or torch scalars (`np.float64(0.5)`,
    `tensor(0.5, device='cuda:0')`) turned into numbers first.
    """
    if b'"' not in text and b"\\" not in text:
        swapped = text.replace(b"'", b'"')
        if b"nan" in swapped or b"inf" in swapped or b"True" in swapped or b"False" in swapped or b"None" in swapped:
            swapped = _WORD_RE.sub(lambda m: _WORDS[m[1]], swapped)
        try:
            obj = json.loads(swapped)
        except (ValueError, RecursionError):
            obj = None
        if isinstance(obj, dict):
            return obj
    if len(text) > MAX_LITERAL:
        return None  # Python's parser takes about a hundred times a text's size in memory
    return _literal(text.decode("utf-8", "replace"))


def _literal(text: str) -> dict[str, Any] | None:
    for attempt in (text, _WRAPPED_RE.sub(r"\1", text)):
        marked = _PY_WORD_RE.sub(lambda m: repr(_SENTINEL + m[1]), attempt)
        try:
            obj = ast.literal_eval(marked)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            continue
        if isinstance(obj, dict) and all(isinstance(k, str) for k in obj):
            return {k: _unmark(v) for k, v in obj.items()}
        return None
    return None


def _unmark(v: Any) -> Any:
    if isinstance(v, str) and v.startswith(_SENTINEL):
        return float(v[len(_SENTINEL):])
    if isinstance(v, list):
        return [_unmark(x) for x in v]
    return v


def printed_args(text: str) -> dict[str, Any] | None:
    """`Namespace(a=1, b=namespace(c=[0.3, 0.36]))` -> {"a": 1, "b.c": [0.3, 0.36]}; None when the text is no
    such expression. Read from its syntax tree: calls of Namespace / namespace become dicts, literals stay,
    `inf`/`nan` become floats, anything else (an enum's repr) its source text. Nothing is run."""
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None
    try:
        obj = _node(tree.body, 0)
    except RecursionError:
        return None
    return flatten_config(obj) if isinstance(obj, dict) else None


def _node(node: ast.AST, depth: int) -> Any:
    if depth > 20:
        return "..."
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("Namespace", "namespace") \
            and not node.args:
        return {k.arg: _node(k.value, depth + 1) for k in node.keywords if k.arg is not None}
    if isinstance(node, ast.Constant):
        return node.value if isinstance(node.value, (str, int, float, bool)) or node.value is None else repr(node.value)
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        return [_node(e, depth + 1) for e in node.elts]
    if isinstance(node, ast.Dict):
        return {str(_node(k, depth + 1)): _node(v, depth + 1) for k, v in zip(node.keys, node.values, strict=True)
                if k is not None}
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        inner = _node(node.operand, depth + 1)
        if isinstance(inner, (int, float)) and not isinstance(inner, bool):
            return -inner if isinstance(node.op, ast.USub) else inner
    if isinstance(node, ast.Name) and node.id in ("inf", "nan"):
        return float(node.id)
    try:
        return ast.unparse(node)
    except (ValueError, RecursionError):
        return "?"


def _is_openrlhf_args(config: dict[str, Any]) -> bool:
    return any(k == name or k.endswith("." + name) for k in config for name in _OPENRLHF_ARGS)


# -- scanning a block of the log -------------------------------------------------------------------------------
@dataclass
class Entry:
    """One recognised line: a step's status (`kind` "step"), an evaluation ("eval") or printed args ("args")."""

    kind: str
    pos: int  # offset of the line in the file
    step: int | None
    process: str  # Ray's `Actor pid=N` prefix, "" without one
    items: dict[str, Any] | None  # None: the line looked like one but its dict does not parse
    config: dict[str, Any] | None = None


def _hits(block: bytes, marks: tuple[bytes, ...], start: int = 0, end: int | None = None) -> list[tuple[int, bytes]]:
    """(offset, marker) of the first occurrence of each marker on every line of block[start:end] holding one."""
    end = len(block) if end is None else end
    out = []
    for mark in marks:
        find = _find_sparkle if mark == SPARKLE else block.find
        pos = find(block, start, end) if mark == SPARKLE else find(mark, start, end)
        while pos >= 0:
            out.append((pos, mark))
            nl = block.find(b"\n", pos, end)
            if nl < 0:
                break
            pos = find(block, nl, end) if mark == SPARKLE else find(mark, nl, end)
    return sorted(out)


def _find_sparkle(block: bytes, start: int, end: int) -> int:
    """block.find(SPARKLE, start, end), by its last byte (0xa8, which no ASCII text holds and tqdm's bars do not
    either): a one-byte find is a memchr, several times faster than a three-byte search over megabytes."""
    last = SPARKLE[-1:]
    pos = block.find(last, start + 2, end)
    while pos >= 0:
        if block[pos - 2:pos + 1] == SPARKLE:
            return pos - 2
        pos = block.find(last, pos + 1, end)
    return -1


def scan(block: bytes, base: int = 0, args: bool = True) -> list[Entry]:
    """The step, eval and (with `args`) printed-args lines of a block of whole lines, in order; each entry's `pos`
    is its line's offset in the file, the block starting at offset `base`.

    Both of OpenRLHF's lines start their message with a sparkle (\u2728), found with `bytes.find` at C speed over
    megabytes of other output (the markers themselves where an encoding lost it); only lines holding one are
    decoded. Printed args are looked for only where a launch can print them: before the block's first step line,
    between two step lines where the steps start again, and after its last. Lines are not counted here: a line
    number is worked out only for a note that names one (`OpenRLHFRun._line`).
    """
    hits = _hits(block, (SPARKLE,)) or _hits(block, (STEP_MARK, EVAL_MARK))
    found: list[tuple[int, int, Entry]] = []  # (line start, line end, entry)
    for pos, _ in hits:
        start = block.rfind(b"\n", 0, pos) + 1
        end = block.find(b"\n", pos)
        end = len(block) if end < 0 else end
        if found and start == found[-1][0]:
            continue  # a second marker on a line already taken
        raw = block[start:end].rstrip(b"\r")
        entry = _entry(raw, base + start, STEP_MARK if STEP_MARK in raw else EVAL_MARK)
        if entry is not None:
            found.append((start, end, entry))
    if args:
        regions, prev_end, prev_step = [], 0, None
        for start, end, e in found:
            if e.kind == "step":
                if prev_step is None or e.step <= prev_step:
                    regions.append((prev_end, start))
                prev_step, prev_end = e.step, end
        regions.append((prev_end, len(block)))
        for a, b in regions:
            for pos, _ in _hits(block, (ARGS_MARK,), a, b):
                start = block.rfind(b"\n", 0, pos) + 1
                end = block.find(b"\n", pos)
                entry = _entry(block[start:len(block) if end < 0 else end].rstrip(b"\r"), base + start, ARGS_MARK)
                if entry is not None:
                    found.append((start, 0, entry))
        found.sort(key=lambda f: f[0])
    return [f[2] for f in found]


def _entry(raw: bytes, pos: int, mark: bytes) -> Entry | None:
    pid = _PID_RE.match(raw)
    process = f"{pid[1].decode()} pid={pid[2].decode()}" if pid else ""
    if mark in (STEP_MARK, EVAL_MARK):
        m = (_STEP_RE if mark == STEP_MARK else _EVAL_RE).search(raw)
        if m is None:
            return None
        text = m[2]
        close = text.rfind(b"}")  # what follows the dict's last brace (a colour reset, spaces) is not the dict
        return Entry("step" if mark == STEP_MARK else "eval", pos, int(m[1]), process,
                     parse_status(text[:close + 1]) if close >= 0 else None)
    m = _ARGS_RE.match(raw)
    if m is None or len(m[1]) > 1 << 20:
        return None
    config = printed_args(m[1].decode("utf-8", "replace"))
    if not config or not _is_openrlhf_args(config):
        return None
    return Entry("args", pos, None, process, None, config)


# -- launches ----------------------------------------------------------------------------------------------------
@dataclass
class Launches:
    """Which launch each step line belongs to, one line at a time (a live log grows line by line).

    The rule of `launches.group_launches`, with a stretch of rising steps in the place of a file: a stretch that
    starts at or below the first step of the launch before it starts a new launch; one that starts above it is
    that launch resumed (restarted from a checkpoint when it starts within the steps already logged).
    """

    first: list[int] = field(default_factory=list)  # first step of each launch
    last: list[int] = field(default_factory=list)  # last step of each launch so far
    prev: int | None = None

    def add(self, step: int) -> tuple[int, str | None]:
        """(1-based launch of this step line, a note when it starts a stretch that resumes a launch)."""
        note = None
        if self.prev is None or (step <= self.prev and step <= self.first[-1]):
            self.first.append(step)
            self.last.append(step)
        elif step <= self.prev:
            note = (f"steps start again at {step}, within the {self.last[-1]} logged: a restart from a checkpoint; "
                    "for steps logged twice the later values win")
        self.last[-1] = max(self.last[-1], step)
        self.prev = step
        return len(self.first), note


@dataclass
class _Index:
    """What `list_launches` knows of a file: read up to `offset` (whole lines), its launches so far."""

    offset: int = 0
    launches: Launches = field(default_factory=Launches)


_INDEX: dict[str, _Index] = {}
MAX_INDEXED = 512


def _file_launches(path: str) -> int:
    """How many launches a file holds. Discovery asks every few seconds while a log grows: the bytes read are
    remembered per file, and only what was appended since is scanned (a file that shrank is read again)."""
    try:
        size = os.stat(path).st_size
    except OSError:
        return 0
    idx = _INDEX.get(path)
    if idx is None or size < idx.offset:
        if len(_INDEX) >= MAX_INDEXED:
            _INDEX.pop(next(iter(_INDEX)))
        idx = _INDEX[path] = _Index()
    if size > idx.offset:
        try:
            with open(path, "rb") as f:
                f.seek(idx.offset)
                data = f.read(size - idx.offset)
        except OSError:
            return len(idx.launches.first)
        end = data.rfind(b"\n") + 1
        for e in scan(data[:end], args=False):
            if e.kind == "step" and e.step is not None:
                idx.launches.add(e.step)
        idx.offset += end
    return len(idx.launches.first)


# -- detection ----------------------------------------------------------------------------------------------------
# The actor's micro-batch bar with OpenRLHF's PPO short names (before 0.8: pg, rm, glen ...; after: act_loss, gen_len)
_PPO_BAR_RE = re.compile(rb"Train epoch \[\d+/\d+\][^\n]*(?:act_loss=[^\n]*gen_len=|pg=[^\n]*glen=)")
STEPS, BARS, NOTHING = 2, 1, 0


@lru_cache(maxsize=4096)
def _look(path: str, size: int, mtime_ns: int) -> int:
    """STEPS: a step line within the first DETECT_BYTES (read 1 MiB at a time, searched as bytes); BARS: none, but
    OpenRLHF's PPO progress bars (a log of a version before 0.8.1, or one before its first step); else NOTHING."""
    bars = False
    try:
        with open(path, "rb") as f:
            tail, read = b"", 0
            while read < DETECT_BYTES:
                block = f.read(1 << 20)
                if not block:
                    break
                read += len(block)
                data = tail + block
                pos = data.find(STEP_MARK)
                while pos >= 0:
                    end = data.find(b"\n", pos)
                    if end < 0:
                        break  # the line goes on in the next block: looked at again there
                    if _STEP_RE.search(data[pos:end].rstrip(b"\r")):
                        return STEPS
                    pos = data.find(STEP_MARK, end)
                bars = bars or bool(_PPO_BAR_RE.search(data))
                cut = data.rfind(b"\n")
                tail = data[cut + 1:] if cut >= 0 else data
                if len(tail) > 1 << 22:  # a line longer than 4 MiB is no status line
                    tail = b""
    except OSError:
        return NOTHING
    return BARS if bars else NOTHING


def detect_file(target: str) -> bool:
    if not target.endswith(SUFFIXES):
        return False
    if target in _KNOWN:
        return os.path.isfile(target)
    try:
        st = os.stat(target)
    except OSError:
        return False
    if not stat.S_ISREG(st.st_mode):
        return False
    found = _look(target, st.st_size, st.st_mtime_ns)
    if found == STEPS and len(_KNOWN) < 10_000:
        _KNOWN.add(target)
    return found != NOTHING


def _files(folder: str) -> list[str]:
    try:
        entries = sorted(e.path for e in os.scandir(folder) if e.name.endswith(SUFFIXES) and e.is_file())
    except OSError:
        return []
    return [f for f in entries[:MAX_FILES] if detect_file(f)]


def detect(target: str) -> bool:
    base, launch = split_launch(target)
    if launch is not None:
        return detect_file(base)
    return bool(_files(target)) if Path(target).is_dir() else detect_file(target)


def list_launches(target: str) -> list[str]:
    """The runs a target holds: a folder's OpenRLHF logs (each launch of a file holding several as `FILE#n`);
    for a file, `FILE#n` per launch when it holds more than one, else [] (the file is the run)."""
    if Path(target).is_dir():
        out = []
        for f in _files(target):
            n = _file_launches(f)
            out += [launch_target(f, str(i)) for i in range(1, n + 1)] if n > 1 else [f]
        return out
    n = _file_launches(target)
    return [launch_target(target, str(i)) for i in range(1, n + 1)] if n > 1 else []


class ByteTail(LineTail):
    """LineTail's following of a growing file (a kept byte offset, a last line without its newline waited for
    until the file settles, a file that shrank read again, a line past MAX_LINE passed over), as a block of bytes
    and whether the file was rewritten: `scan` counts lines itself, up to each line it keeps."""

    def read(self) -> tuple[bytes, bool]:
        """(new complete lines as bytes, rewritten?)."""
        block, _, rewritten, _ = self.read_bytes()
        return block, rewritten


# -- the run -------------------------------------------------------------------------------------------------------
class OpenRLHFRun(TextRun):
    def __init__(self, path: Path | str, launch: str | None = None, mapping=None) -> None:
        path = Path(path)
        if path.is_dir():
            files = _files(str(path))
            if len(files) != 1:
                raise RunError(f"{path}: {len(files)} OpenRLHF logs here; open one of them"
                               if files else f"{path}: no OpenRLHF console log here")
            path = Path(files[0])
        if launch is not None and not (launch.isdigit() and int(launch) >= 1):
            raise RunError(f"{path}#{launch}: no such launch; an OpenRLHF log's launches are #1, #2, ...")
        name = path.stem if launch is None else f"{path.stem}#{launch}"
        super().__init__(path, RunMeta(run_id=name, name=name, source="openrlhf"), mapping)
        self.launch = int(launch) if launch is not None else 1  # opened without one: the first (and only) one
        self._tail = ByteTail(path, note=lambda m: self._note(Problem(path.name, m)))
        self._start()
        self.refresh()
        if launch is not None and self.launch > len(self._launches.first):
            raise RunError(f"{path}#{launch}: no such launch; the log holds {len(self._launches.first)}")

    def _start(self) -> None:
        self._anchor = (0, 1)  # (offset, its line number): where line numbers were last counted to
        self._launches = Launches()
        self._current = 0  # launch of the last step line read
        self._steps_seen = 0
        self._args: list[tuple[int, int, dict[str, Any]]] = []  # (offset, step lines before it, printed args)
        self._own: dict[str, str] = {}  # keys kept under their own name (another key has their canonical name)
        self._bars = False  # OpenRLHF's PPO progress bar seen

    def _read_new(self) -> list[pd.DataFrame]:
        block, rewritten = self._tail.read()
        if rewritten:
            self._start()
            self.meta.config = {}
            self._reset(self.path.name, "file was rewritten; read again from the top")
        if not block:
            return []
        rows, nans = [], []
        for e in scan(block, self._tail.offset - len(block)):
            if e.kind == "args":
                self._args.append((e.pos, self._steps_seen, e.config or {}))
                continue
            if e.step is not None and e.step >= STEP_LIMIT:
                self._note(Problem(self.path.name, f"line {self._line(e.pos)}: step {e.step} is beyond int64; skipped"))
                continue
            if e.kind == "step" and e.step is not None:
                launch, note = self._launches.add(e.step)
                if launch == self.launch and launch != self._current:
                    self._take_config()  # the first step line of this launch: its args were printed before it
                self._current = launch
                self._steps_seen += 1
                if note and launch == self.launch:
                    self._note(Problem(self.path.name, f"line {self._line(e.pos)}: {note}"))
            if self._current != self.launch:
                continue  # another launch's line (or an eval before any step)
            if e.items is None:
                self._note(Problem(self.path.name, f"line {self._line(e.pos)}: a {e.kind} dict that does not parse "
                                                   "(cut short?); skipped"))
                continue
            row = self._row(e)
            rows.append(row)
            nans.extend((len(rows) - 1, k) for k, v in row.items() if math.isnan(v))  # a NaN the log printed
        self._say_launches()
        self._say_no_steps(block)
        if not rows:
            return []
        frame = pd.DataFrame.from_records(rows)
        order = [c for c in ("step", *PREFERRED) if c in frame.columns]
        frame = frame[order + [c for c in frame.columns if c not in order]]
        self._one_name_each(list(frame.columns[1:]))
        masks: dict[str, np.ndarray] = {}
        for i, k in nans:  # a key absent from a row is null there; only a printed nan is a logged NaN
            masks.setdefault(k, np.zeros(len(frame), dtype=bool))[i] = True
        # no line numbers for _emit: it names them only for a step that is no int64 or a value that is no number,
        # and neither reaches it from here (steps checked above, values taken only when they are numbers)
        return self._emit(frame, self.path.name, None, masks)

    def _line(self, pos: int) -> int:
        """The line number of the line starting at offset `pos`, counted from the last one worked out (the file
        is read again only for what lies between): only notes name a line, so only they pay for counting."""
        at, line = self._anchor if pos >= self._anchor[0] else (0, 1)
        try:
            with self.path.open("rb") as f:
                f.seek(at)
                line += f.read(pos - at).count(b"\n")
        except OSError:
            return 0
        self._anchor = (pos, line)
        return line

    def _one_name_each(self, columns: list[str]) -> None:
        """Where several keys mean one canonical metric (`truncated`, `response_clip_ratio`; `reward` and
        `rollout/reward_mean`), the first in the frame's order takes the name and the others stay as extra
        columns under their own (once so, always so): both are kept, and no value of one fills the other."""
        user = user_map()
        plan = rename_plan(columns, {**self._own, **user})
        taken: set[str] = set()
        for col in columns:
            name = plan[col]
            if name in taken and name != col and col not in user:
                self._own[col] = col
            taken.add(name)
        self.mapping = {**self._own, **user}

    def _say_no_steps(self, block: bytes) -> None:
        """A log with no step line so far says why there are no rows: not yet, or a version that prints none."""
        self.problems = [p for p in self.problems if not p.message.startswith(NO_STEP_LINE)]
        if not self._launches.first:
            self._bars = self._bars or bool(_PPO_BAR_RE.search(block))
            self._note(Problem(self.path.name, NO_STEP_LINE + (
                " yet: OpenRLHF prints one after each step from 0.8.1 on. Before 0.8.1 it prints only progress bars, "
                "and their values (act_loss, reward, gen_len ...) are one micro-batch's, not the step's: read such "
                "a run from its wandb or TensorBoard logs" if self._bars else " yet")))

    def _take_config(self) -> None:
        """The args printed last before this launch's first step line, after the step line before it."""
        mine = [(pos, cfg) for pos, seen, cfg in self._args if seen == self._steps_seen]
        if mine and not self.meta.config:
            pos, cfg = mine[-1]
            self.meta.config = cfg
            self.meta.info["config_source"] = f"{self.path.name} line {self._line(pos)} (printed args)"

    def _row(self, e: Entry) -> dict[str, Any]:
        row: dict[str, Any] = {"step": e.step}
        for k, v in (e.items or {}).items():
            if isinstance(v, (int, float)):  # bools too; strings, lists and nested dicts are no metric
                if len(k) > MAX_KEY:
                    self._note(Problem(self.path.name, f"line {self._line(e.pos)}: a key of {len(k):,} characters "
                                                       "is no metric name; left out"))
                    continue
                if not k.isascii():  # a \ud800 escape is half a character: no column name
                    k = k.encode("utf-8", "replace").decode("utf-8")
                row[k] = to_number(v)  # an integer beyond float is a signed infinity
        if PASS_RATE in row:
            dropped = self._dropped(row[PASS_RATE])
            if dropped is not None:
                row["groups/dropped_frac"] = dropped
        if e.kind == "eval" and "eval_default_pass1" not in row:
            first = next((k for k in sorted(row) if _PASS1_RE.match(k)), None)
            if first is not None:
                row["eval/reward_mean"] = row[first]
        return row

    def _dropped(self, pct: float) -> float | None:
        """groups/dropped_frac from OpenRLHF's pass rate in percent; None (and a note) where the unit is unknown."""
        dropped = dropped_frac(pct, n_samples_per_prompt(self.meta.config))
        if dropped is None and math.isfinite(pct) and pct > 100:
            self._note(Problem(self.path.name, f"{PASS_RATE} above 100% ({pct:g}): this OpenRLHF version counts "
                                               "kept samples per consumed prompt and the log gives no "
                                               "n_samples_per_prompt; groups/dropped_frac left out"))
        return dropped

    def _say_launches(self) -> None:
        n = len(self._launches.first)
        if n > 1:
            note = f"one of {n} separate launches in {self.path.name} (launch {self.launch})"
            self.meta.notes = [x for x in self.meta.notes if "separate launches" not in x] + [note]
            self.meta.info.update(parent=self.path.name, launch=self.launch, launches=n)


@register_source("openrlhf", detect=detect, launches=list_launches, parts=no_parts, priority=16, hints={
    "samples": "an OpenRLHF console log holds the per-step metrics and one decoded sample a step, not the "
               "responses of each group; no file OpenRLHF writes has them.",
    "config": "OpenRLHF prints its arguments (Namespace(...)) at start from 0.8 on (`strategy.print(args)`); "
              "this log holds none (an excerpt, or an older version). Its wandb run keeps them as the config.",
})
def open_openrlhf(target: str) -> OpenRLHFRun:
    base, launch = split_launch(target)
    return OpenRLHFRun(base, launch)
