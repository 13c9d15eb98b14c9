"""run.json: who the run is, how it was configured, and whether its writer is alive."""

from __future__ import annotations

import json
import math
import time
import uuid
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from collectors.oserrors import cannot_read
from collectors.schema import SCHEMA_VERSION, STATUSES
from collectors.store.atomic import write_json_atomic

RUN_JSON = "run.json"
# A writer refreshes its heartbeat at least this often while the process lives (see writer.py), so a
# `running` run silent for many heartbeats has lost its writer.
HEARTBEAT_INTERVAL_S = 5.0
STALE_AFTER_S = 60.0


class RunError(Exception):
    """A run folder (or file) that cannot be read at all; the message names it."""


@dataclass
class RunMeta:
    run_id: str = field(default_factory=lambda: uuid.uuid4().hex[:12])
    name: str = ""
    source: str = "grpo_core"
    config: dict[str, Any] = field(default_factory=dict)  # flat dotted keys
    start_time: float | None = None  # Unix seconds, UTC
    end_time: float | None = None
    status: str = "unknown"  # one of schema.STATUSES
    error: str | None = None  # error text when status is "failed"
    heartbeat: float | None = None  # Unix seconds of the writer's last sign of life
    last_step: int | None = None
    info: dict[str, Any] = field(default_factory=dict)  # producer facts (e.g. warm start), not knobs
    notes: list[str] = field(default_factory=list)  # resumes, re-logged steps, imports
    resumes: list[dict[str, Any]] = field(default_factory=list)  # {"time", "metrics_seq", "samples_seq"}
    # what a running run does before its first step, e.g. {"name": "warm_start", "done": 300, "total": 2000}
    # (see PHASE_FIELDS); null once steps are logged
    phase: dict[str, Any] | None = None
    schema_version: int = SCHEMA_VERSION

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, obj: dict[str, Any], where: str) -> RunMeta:
        if not isinstance(obj, dict):
            raise RunError(f"{where}: expected a JSON object, got {type(obj).__name__}")
        known = {f.name for f in fields(cls)}
        for key, value in obj.items():
            if key in _TYPES and not _has_type(value, _TYPES[key]):
                raise RunError(f"{where}: field {key!r} is {_short(value)}, expected {_TYPE_NAMES[_TYPES[key]]}")
        meta = cls(**{k: v for k, v in obj.items() if k in known})
        if meta.status not in STATUSES:
            raise RunError(f"{where}: field 'status' is {meta.status!r}, expected one of {', '.join(STATUSES)}")
        for r in meta.resumes:
            if not (isinstance(r, dict) and all(_has_type(r.get(k), _INT) for k in ("metrics_seq", "samples_seq"))):
                raise RunError(f"{where}: field 'resumes' holds {_short(r)}, expected objects with integer "
                               "metrics_seq and samples_seq")
        try:
            meta.config = flatten_config(meta.config)
        except RecursionError:
            raise RunError(f"{where}: field 'config' is nested too deeply") from None
        return meta

    def effective_status(self, now: float | None = None, stale_after_s: float = STALE_AFTER_S) -> str:
        """`stale` for a running run whose heartbeat stopped; the recorded status otherwise."""
        if self.status != "running":
            return self.status
        now = time.time() if now is None else now
        beat = self.heartbeat if self.heartbeat is not None else self.start_time
        if beat is None or now - beat > stale_after_s:
            return "stale"
        return "running"


# What each run.json field must hold; a wrong type is refused (naming the field) rather than failing later,
# and a time that is not a finite number would make a dead run look alive forever.
_TIME, _INT, _TEXT, _OPT_TEXT, _OBJ, _LIST, _OPT_OBJ = "time", "int", "text", "opt_text", "obj", "list", "opt_obj"
_TYPES = {"run_id": _TEXT, "name": _TEXT, "source": _TEXT, "config": _OBJ, "start_time": _TIME, "end_time": _TIME,
          "status": _TEXT, "error": _OPT_TEXT, "heartbeat": _TIME, "last_step": _INT, "info": _OBJ,
          "notes": _LIST, "resumes": _LIST, "phase": _OPT_OBJ, "schema_version": _INT}
_TYPE_NAMES = {_TIME: "a finite number of seconds or null", _INT: "an integer or null", _TEXT: "a string",
               _OPT_TEXT: "a string or null", _OBJ: "an object", _LIST: "a list",
               _OPT_OBJ: "an object or null"}


# run.json's `phase`: name (what the run does, e.g. "warm_start"), done and total (its progress in its own units,
# total null when unknown), detail (an object of facts, e.g. the pass rate reached so far)
PHASE_FIELDS = ("name", "done", "total", "detail")


def phase_progress(phase: Any) -> tuple[str, int | None, int | None, dict[str, Any]] | None:
    """(name, done, total, detail) of a run.json `phase`, None when absent or without a name; a done or total
    that is no whole number reads as None (a hand-written phase shows its name only)."""
    if not isinstance(phase, dict) or not isinstance(phase.get("name"), str) or not phase["name"]:
        return None
    whole = [v if _has_type(v, _INT) and v is not None and v >= 0 else None for v in (phase.get("done"),
                                                                                        phase.get("total"))]
    detail = phase.get("detail") if isinstance(phase.get("detail"), dict) else {}
    return phase["name"], whole[0], whole[1], detail


def _has_type(value: Any, kind: str) -> bool:
    if kind == _TIME:
        return value is None or (isinstance(value, (int, float)) and not isinstance(value, bool)
                                 and math.isfinite(value))
    if kind == _INT:
        return value is None or (isinstance(value, int) and not isinstance(value, bool) and abs(value) < 2**63)
    if kind == _LIST:
        return isinstance(value, list)
    return {_TEXT: isinstance(value, str), _OPT_TEXT: value is None or isinstance(value, str),
            _OBJ: isinstance(value, dict), _OPT_OBJ: value is None or isinstance(value, dict)}[kind]


def _short(value: Any) -> str:
    text = repr(value) if isinstance(value, (int, float, str, bool)) or value is None else type(value).__name__
    return text if len(text) <= 40 else text[:37] + "..."


def flatten_config(config: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """{"algo": {"kl": {"coef": 0.1}}} -> {"algo.kl.coef": 0.1}; lists and scalars are kept as values."""
    flat: dict[str, Any] = {}
    for key, value in config.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict) and value:
            flat.update(flatten_config(value, prefix=f"{name}."))
        else:
            flat[name] = _json_safe(value)
    return flat


def _json_safe(value: Any) -> Any:
    # JSON has no NaN/inf; keep them readable instead of writing invalid JSON.
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    if isinstance(value, (list, tuple)):
        return [_json_safe(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _json_safe(v) for k, v in value.items()}
    return str(value)


def read_meta(folder: Path) -> RunMeta:
    """Parse `folder/run.json`; raise RunError naming the file on any problem."""
    path = folder / RUN_JSON
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise RunError(f"{path}: missing") from None
    except OSError as e:  # no permission, a loop of links: in words, naming the file
        raise RunError(cannot_read(path, e)) from None
    except UnicodeDecodeError as e:
        raise RunError(f"{path}: not UTF-8 text (byte {e.start})") from None
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as e:
        raise RunError(f"{path}: not valid JSON ({e.msg} at line {e.lineno} column {e.colno})") from None
    except ValueError:  # an integer of thousands of digits: Python refuses to parse it
        raise RunError(f"{path}: not valid JSON (a number of more than 4,300 digits)") from None
    except RecursionError:
        raise RunError(f"{path}: not valid JSON (nested too deeply)") from None
    return RunMeta.from_json(obj, str(path))


def write_meta(folder: Path, meta: RunMeta) -> None:
    write_json_atomic(folder / RUN_JSON, meta.to_json())
