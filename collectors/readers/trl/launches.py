"""Which trainer_state.json files of one TRL output folder belong to one launch.

Every checkpoint's trainer_state.json holds the whole log history of its launch up to that checkpoint, and
a run resumed from a checkpoint carries that history on; a launch started from scratch into the same
`output_dir` starts a history of its own. So the first entry of `log_history` names the launch: two state
files with the same first entry are one launch (its checkpoints, resumed or not), different first entries
are different launches (they differ at least in `step_time`, `grad_norm` or the loss of the first step).
File times are not used: a copied or checked-out folder has them all alike.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path

_HEAD_BYTES = 1 << 16
_HISTORY = '"log_history":'


def first_entry(state: Path) -> str | None:
    """The first `log_history` entry of a trainer_state.json as canonical JSON text; None when unreadable
    or empty. Read from the file's head: transformers writes it with sorted keys, `log_history` early on."""
    try:
        with state.open("rb") as f:
            head = f.read(_HEAD_BYTES).decode("utf-8", "replace")
    except OSError:
        return None
    at = head.find(_HISTORY)
    entry = None
    if at >= 0:
        start = head.find("[", at) + 1
        try:
            entry, _ = json.JSONDecoder().raw_decode(head[start:].lstrip())
        except (ValueError, RecursionError):
            entry = None
    if entry is None:  # an unusual layout or a first entry beyond the head: parse the whole file
        try:
            history = json.loads(state.read_text()).get("log_history") or [None]
        except (OSError, ValueError, AttributeError, RecursionError):
            return None
        entry = history[0]
    return json.dumps(entry, sort_keys=True) if isinstance(entry, dict) else None


def launch_key(state: Path) -> str | None:
    """A short stable id of the launch a state file belongs to (a hash of its first log entry)."""
    entry = first_entry(state)
    return hashlib.sha1(entry.encode()).hexdigest()[:10] if entry is not None else None


def group_states(states: list[Path], key: Callable[[Path], str | None] = launch_key) -> dict[str, list[Path]]:
    """{launch id: its state files in the given order}, launches in the order of their first file; files
    whose history cannot be read join the launch before them (or the first), so nothing is left out."""
    groups: dict[str, list[Path]] = {}
    pending: list[Path] = []
    for state in states:
        k = key(state)
        if k is None:
            pending.append(state)
            continue
        groups.setdefault(k, []).extend(pending)
        pending = []
        groups[k].append(state)
    if pending and groups:
        groups[next(reversed(groups))].extend(pending)
    elif pending:
        groups[""] = pending
    return groups
