"""A folder of log files as runs, for the readers of single files (rows, key-value and console logs).

`grpo-dash train.log` watches the file's folder, and discovery asks each reader about folders: a folder
whose direct children include files a reader recognises holds one run per such file (the sources'
`launches`), each opened by its path. Only the first MAX_FILES candidates (by name) are looked at, so a
folder of thousands of logs costs no more than a few reads.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path

MAX_FILES = 20


def by_file_state(detect_file: Callable[[str], bool]) -> Callable[[str], bool]:
    """`detect_file` answered once per (path, size, mtime, ctime): discovery asks again every few seconds, and a
    detector may read megabytes of a log that has not changed since. The ctime is there for a chmod, which
    keeps size and mtime: a log made unreadable is asked about again (and then said to be unreadable)."""

    @lru_cache(maxsize=4096)
    def cached(path: str, size: int, mtime_ns: int, ctime_ns: int) -> bool:
        return detect_file(path)

    def detect(path: str) -> bool:
        try:
            st = os.stat(path)
        except OSError:
            return False
        if not stat.S_ISREG(st.st_mode):
            return detect_file(path)
        return cached(str(path), st.st_size, st.st_mtime_ns, st.st_ctime_ns)

    return detect


def file_runs(detect_file: Callable[[str], bool], suffixes: tuple[str, ...]) -> tuple[Callable[[str], bool],
                                                                                      Callable[[str], list[str]]]:
    """(detect, launches) for a reader of single files: a file as before, a folder by its files."""
    detect_file = by_file_state(detect_file)

    def files(target: str) -> list[str]:
        try:
            entries = sorted(e.path for e in os.scandir(target) if e.name.endswith(suffixes) and e.is_file())
        except OSError:
            return []
        return [f for f in entries[:MAX_FILES] if detect_file(f)]

    def detect(target: str) -> bool:
        p = Path(target)
        return detect_file(target) if not p.is_dir() else bool(files(target))

    def launches(target: str) -> list[str]:
        return files(target) if Path(target).is_dir() else []

    return detect, launches


CONFIG_GLOBS = ("config*.yaml", "config*.yml", "config*.json")


def head_of(target: str, suffixes: tuple[str, ...], size: int) -> bytes | None:
    """The first `size` bytes of a regular file named with one of `suffixes`; None for anything else or a
    file that cannot be read (what a text log's `detect` looks at)."""
    p = Path(target)
    if not (p.is_file() and p.suffix in suffixes):
        return None
    try:
        with p.open("rb") as f:
            return f.read(size)
    except OSError:
        return None


def side_config(log: Path) -> tuple[dict, str | None, str | None]:
    """(flat config, the file it came from, what was wrong) from a `config*.yaml|yml|json` beside a log file.

    A custom trainer's log holds no config, but its repository often keeps the one it ran with next to it
    (`config_grpo.yaml` beside `metrics.jsonl`). Read with yaml.safe_load / json; keys flattened with dots.
    """
    import json

    from collectors.meta import flatten_config

    found = sorted(p for g in CONFIG_GLOBS for p in log.parent.glob(g) if p.is_file() and p != log)
    if not found:
        return {}, None, None
    f = found[0]
    try:
        text = f.read_text(encoding="utf-8", errors="replace")
        if f.suffix == ".json":
            obj = json.loads(text)
        else:
            import yaml

            obj = yaml.safe_load(text)
    except (ValueError, OSError, ImportError) as e:
        return {}, f.name, f"not readable ({type(e).__name__})"
    except Exception as e:  # noqa: BLE001 - yaml.YAMLError and its kin: a bad side file never stops the run
        return {}, f.name, f"not readable YAML ({type(e).__name__})"
    if not isinstance(obj, dict):
        return {}, f.name, "not a mapping of settings"
    return flatten_config(obj), f.name, None
