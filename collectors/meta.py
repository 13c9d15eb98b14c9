"""run.json: who the run is, how it was configured, and whether its writer is alive."""

from __future__ import annotations

import json
import math
import time
import uuid
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

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
    schema_version: int = SCHEMA_VERSION

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, obj: dict[str, Any], where: str) -> RunMeta:
        if not isinstance(obj, dict):
            raise RunError(f"{where}: expected a JSON object, got {type(obj).__name__}")
        known = {f.name for f in fields(cls)}
        meta = cls(**{k: v for k, v in obj.items() if k in known})
        if meta.status not in STATUSES:
            raise RunError(f"{where}: field 'status' is {meta.status!r}, expected one of {', '.join(STATUSES)}")
        if not isinstance(meta.config, dict):
            raise RunError(f"{where}: field 'config' must be an object of dotted keys")
        meta.config = flatten_config(meta.config)
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
    except OSError as e:
        raise RunError(f"{path}: cannot read ({e.strerror})") from None
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as e:
        raise RunError(f"{path}: not valid JSON ({e.msg} at line {e.lineno} column {e.colno})") from None
    return RunMeta.from_json(obj, str(path))


def write_meta(folder: Path, meta: RunMeta) -> None:
    write_json_atomic(folder / RUN_JSON, meta.to_json())
