"""What a target no reader recognises looked like, in a few words: said in the "no reader recognises this"
error, so a user can tell whether naming a reader (`--source`) or a column (`--map`) can help.

Only the first HEAD_BYTES of a file are looked at, and only a few files of a folder; nothing is parsed
beyond a line or two. Each phrase names what was seen and, where one exists, the option that reads it.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from collectors.oserrors import cannot_read

HEAD_BYTES = 4 << 20
MAX_FILES = 5

# (what it looks like, bytes that show it, what would make it a run, the reader that reads it)
_LOOKS = (
    ("OpenRLHF-like lines", re.compile(rb"ppo_trainer\.py:\d+\]|\((?:PPOTrainer|ActorModelRayActor|PolicyModelActor|"
                                       rb"ReferenceModelActor|RewardModelActor) pid=|openrlhf[./]|Train epoch \[\d+/\d+\]"),
     re.compile(rb"Global step \d+: \{"),
     ("no '\u2728 Global step N: {...}' step dicts (OpenRLHF prints them from 0.8.1 on; older versions print only "
      "progress bars: open the run's wandb or TensorBoard logs)"), "openrlhf"),
    ("verl-like lines", re.compile(rb"\((?:TaskRunner|main_task) pid=|verl\.trainer|actor_rollout_ref\."),
     re.compile(rb"(?:^|\s)step:\d+ - [^\s:]+:", re.MULTILINE), "no 'step:N - key:value' lines", "verl"),
    ("transformers/TRL-like output", re.compile(rb"GRPOTrainer|GRPOConfig|TrainingArguments\(|transformers"),
     re.compile(rb"(?:^|[\r\n])\{'[^'\r\n]+': "), "no printed log dicts ({'loss': ...})", "trl-console"),
)
_DICT_LINE = re.compile(rb"(?:^|[\r\n])[ \t>]*\{'[^'\r\n]+': ")
_PAIRS = re.compile(rb"[A-Za-z_][\w./ ]{0,40}\s*[:=]\s*[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")
_READ_SUFFIXES = (".log", ".txt", ".out", ".err", ".md", ".jsonl", ".json", ".csv")


def describe(target: str | Path) -> str:
    p = Path(target)
    try:
        if p.is_dir():
            return _folder(p)
        if not p.exists():
            return "no such file or folder"
        return _file(p)
    except OSError as e:
        return cannot_read(p.name, e)


def _folder(p: Path) -> str:
    try:
        entries = sorted(os.scandir(p), key=lambda e: e.name)
    except OSError as e:
        return f"a folder that cannot be listed: {e.strerror or e}"
    files = [e for e in entries if e.is_file()]
    dirs = [e for e in entries if e.is_dir()]
    if not files and not dirs:
        return "an empty folder"
    head = f"not a run folder (no run.json); {len(files)} file(s), {len(dirs)} folder(s)"
    said = []
    for e in files[:MAX_FILES]:
        try:
            said.append(f"{e.name}: {_file(Path(e.path))}")
        except OSError as err:  # one file this user may not read: said, and the others still looked at
            said.append(cannot_read(e.name, err))
    more = f"; and {len(files) - MAX_FILES} more file(s)" if len(files) > MAX_FILES else ""
    return head + (": " + "; ".join(said) if said else "") + more


def _file(p: Path) -> str:
    size = p.stat().st_size
    if size == 0:
        return "an empty file"
    with p.open("rb") as f:
        head = f.read(HEAD_BYTES)
    if b"\x00" in head[:65536]:
        return f"a binary file of {size:,} bytes, not text"
    cut = f" within its first {HEAD_BYTES >> 20} MB" if size > HEAD_BYTES else ""
    for looks, shown, needed, missing, reader in _LOOKS:
        if shown.search(head):
            if needed.search(head):
                if p.suffix not in _READ_SUFFIXES:
                    return (f"{looks} with what the {reader} reader reads, in a file named {p.name!r}: it reads "
                            f"files ending in .log, .out, .txt or .err; --source {reader} reads this one")
                return f"{looks} that its reader could not open; try --source {reader}"
            more = f" (--source {reader} reads the whole file)" if cut else ""
            return f"{looks} but {missing}{cut}{more}"
    lines = head.count(b"\n") + (not head.endswith(b"\n"))
    if _DICT_LINE.search(head):
        return (f"{lines:,} lines of text with Python dicts but none with a training key the TRL console reader "
                "knows (loss, reward, learning_rate ...): --source trl-console reads them, --map names their keys")
    text = head.decode("utf-8", "replace")
    if text.lstrip()[:1] in ("{", "["):
        return (f"JSON text of {lines:,} line(s) whose first row has no step column (step, global_step, "
                "train/global_step, iteration, iter or _step) and no column naming a reward, pass rate or loss: "
                "--map COLUMN=reward/mean names one")
    paired = sum(1 for line in head.splitlines() if len(_PAIRS.findall(line)) >= 3)
    if paired:
        return (f"{lines:,} lines of text, {paired:,} of them with 3 or more name: number pairs, but no two lines "
                "naming the same keys (the key-value reader, --source kvtext, wants a line per step)")
    first_line = text.splitlines()[0] if text else ""
    if first_line.count(",") >= 2:
        return (f"{lines:,} lines of comma-separated text whose header names no step column (step, global_step, "
                "iteration ...) and no reward, pass rate or loss")
    return f"{lines:,} lines of text{cut} with no metrics a reader knows"
