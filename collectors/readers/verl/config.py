"""A verl run's config, from what lies beside its logs: the dict its trainer prints, or Hydra's file.

- verl's `main_ppo` pretty-prints the resolved config (`pprint(OmegaConf.to_container(config))`) at the top
  of its console log, one line per key, each behind a Ray prefix such as `(main_task pid=64899)` (older
  verl) or `(TaskRunner pid=...)`. The printed text is a Python literal, read with `ast.literal_eval`
  (never `eval`): it holds only dicts, lists, strings, numbers, booleans and None.
- Failing both, the `python3 -m verl.trainer.main_ppo key=value ...` command a launch script echoes
  gives the overrides it set (not the defaults).
- Hydra writes the same config to `.hydra/config.yaml` in the run's output folder
  (`outputs/<date>/<time>/`), next to the job's log; read with `yaml.safe_load`.

Keys come out flat and dotted (`algorithm.adv_estimator`, `actor_rollout_ref.actor.clip_ratio`), the names
the dashboard's config questions for verl look up.
"""

from __future__ import annotations

import ast
import re
import shlex
from pathlib import Path
from typing import Any

from collectors.meta import RunError, flatten_config

HEAD_BYTES = 4 << 20  # the config is printed before the first step; no need to read further
_PREFIX_RE = re.compile(r"^(?:\x1b\[[0-9;]*m)*\([^()]*pid=\d+[^()]*\)(?:\x1b\[[0-9;]*m)*\s?")
_ANSI_RE = re.compile(r"\x1b\[[0-9;]*m")
_MIDLINE_RE = re.compile(r"\((?=[^()]*pid=\d+)[^()]*\)")
_COMMAND_RE = re.compile(r"-m\s+verl\.trainer\.\w+\s+(.*)$")
# shlex reads a character at a time in Python (~1 MB/s here): an 8 MB line that matched _COMMAND_RE (a mutated log,
# fuzzing) took over 10 s. A command a launcher echoes is a few KB (the longest in the real verl runs: 1,525
# characters); past this, a line is split at blanks, as when its quotes do not pair.
MAX_SHLEX_CHARS = 64 << 10
_MAX_LINES = 5000  # a printed config is a few hundred lines; give up on a brace that never closes


def _split(line: str) -> tuple[str, str]:
    """(Ray process prefix or "", the line's text without colour codes).

    Ray interleaves processes even within a line (a worker's output glued after a config line without a
    newline), so the text stops at the next process prefix.
    """
    m = _PREFIX_RE.match(line)
    prefix = _ANSI_RE.sub("", m.group(0)).strip() if m else ""
    body = _ANSI_RE.sub("", line[m.end():] if m else line)
    return prefix, _MIDLINE_RE.split(body, maxsplit=1)[0]


def printed_config(text: str) -> dict[str, Any] | None:
    """The first pretty-printed config dict in a console log's text, or None when there is none.

    Other Ray workers print in between (model configs, progress bars), so the dict is gathered from the
    lines of the process that started it only.
    """
    lines = [_split(line) for line in text.splitlines()]
    for i, (prefix, line) in enumerate(lines):
        if not line.startswith("{'"):
            continue
        depth, block = 0, []
        for other, body in lines[i : i + _MAX_LINES]:
            if other != prefix:
                continue
            block.append(body)
            depth += body.count("{") - body.count("}")
            if depth <= 0:
                break
        try:
            value = ast.literal_eval("\n".join(block))
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            continue  # a log line that happens to start with "{'": look further
        if isinstance(value, dict) and value:
            return value
    return None


def command_overrides(text: str) -> dict[str, Any] | None:
    """The `key=value` overrides of the `python -m verl.trainer.main_ppo ...` line a log echoes, or None.

    Only what the command set, not the defaults; used when the printed dict cannot be read (a log cut or
    garbled mid-dict). Values are read as bool, int, float or None where they look like one.
    """
    for line in text.splitlines():
        m = _COMMAND_RE.search(_ANSI_RE.sub("", line))
        if not m:
            continue
        try:
            tokens = shlex.split(m.group(1)) if len(m.group(1)) <= MAX_SHLEX_CHARS else m.group(1).split()
        except ValueError:
            tokens = m.group(1).split()
        out = {}
        for tok in tokens:
            key, eq, value = tok.partition("=")
            if eq and key and not key.startswith("-"):
                out[key.lstrip("+~")] = _scalar(value)
        return out or None
    return None


def _scalar(text: str) -> Any:
    lowered = text.lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    if lowered in ("null", "none"):
        return None
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def hydra_config(folder: Path) -> dict[str, Any] | None:
    """`.hydra/config.yaml` in `folder`, or None when absent. RunError naming the file when unreadable."""
    path = folder / ".hydra" / "config.yaml"
    if not path.is_file():
        return None
    import yaml

    try:
        value = yaml.safe_load(path.read_text())
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as e:
        raise RunError(f"{path}: not readable YAML ({type(e).__name__})") from e
    if not isinstance(value, dict):
        raise RunError(f"{path}: holds no mapping")
    return value


def read_config(folder: Path | None, console_logs: list[Path]) -> tuple[dict[str, Any], str | None]:
    """(flat config, where it came from) from Hydra's file or the first console log that printed one."""
    if folder is not None and (cfg := hydra_config(folder)) is not None:
        return flatten_config(cfg), str(folder / ".hydra" / "config.yaml")
    for log in console_logs:
        try:
            with log.open("rb") as f:
                head = f.read(HEAD_BYTES).decode("utf-8", "replace")
        except OSError:
            continue
        if (cfg := printed_config(head)) is not None:
            return flatten_config(cfg), log.name
        if (cfg := command_overrides(head)) is not None:
            return cfg, f"{log.name} (command-line overrides only; the printed config could not be read)"
    return {}, None
