"""Online wandb runs (`wandb://entity/project/run_id`) as a Run, read through `wandb.Api()`.

Every history row is read with `run.scan_history()`, which pages through all of them (`run.history()`
samples 500 and is not used); rows become metrics through `offline.history_row`, the same
conversion as offline runs. `refresh()` asks only for rows after the last wandb `_step` read (scan_history's
`min_step` counts `_step`, not TRL's `train/global_step`) and re-reads the run's state and heartbeat.

The API key is wandb's own business: `WANDB_API_KEY`, `~/.netrc` (written by `wandb login`) or wandb's
settings, read by `wandb.Api()`; it is never copied into the Run. `wandb` is imported on open only.

Tested here (no network, no account): URI parsing, the one-line errors for a missing key and for an
unreachable server with the real wandb client, the row conversion on rows shaped as scan_history yields
them, and that no key reaches meta. Not testable here: a live call to the W&B server (paging, refresh
of a running run, state and heartbeat values as the server sends them).
"""

from __future__ import annotations

import contextlib
import io
import math
import os
from datetime import UTC, datetime
from typing import Any

import pandas as pd

from collectors.extras import require
from collectors.meta import STALE_AFTER_S, RunError, RunMeta, flatten_config
from collectors.readers.keymap import step_chunks
from collectors.readers.wandb.offline import SAMPLES_HINT, history_row
from collectors.run import Problem, Run
from collectors.sources import register_source

SCHEME = "wandb://"
FORM = "wandb://ENTITY/PROJECT/RUN_ID"
TIMEOUT_S = 15  # per HTTP request; a dashboard refresh must not hang on an unreachable server
# The server itself marks a run crashed when its heartbeats stop; its heartbeatAt moves in tens of
# seconds, so the local stale guess waits longer than for a run folder on disk.
ONLINE_STALE_AFTER_S = 5 * STALE_AFTER_S
# wandb's run states -> ours; "crashed" (heartbeats stopped) and "killed" ended the run without success
STATES = {"running": "running", "finished": "finished", "crashed": "failed", "failed": "failed",
          "killed": "failed", "preempted": "failed"}
REFRESH_FAILED = "refresh failed, showing what was read before"
KEY_HELP = ("no W&B API key found; set WANDB_API_KEY or run `wandb login` (it writes ~/.netrc), "
            "then open the run again")


def parse_uri(uri: str) -> tuple[str, str, str]:
    """`wandb://entity/project/run_id` (or the browser's `entity/project/runs/run_id`) -> the three parts.

    The entity is required: a default entity differs per user, so a URI without one would name
    different runs for different people.
    """
    parts = uri[len(SCHEME):].strip("/").split("/") if uri.startswith(SCHEME) else []
    if len(parts) == 4 and parts[2] == "runs":
        parts = [parts[0], parts[1], parts[3]]
    if len(parts) != 3 or not all(p and not any(c.isspace() for c in p) for p in parts):
        raise RunError(f"{uri}: not a wandb run URI; expected {FORM}")
    entity, project, run_id = parts
    return entity, project, run_id


def _one_line(e: BaseException, secret: str | None) -> str:
    """The first line of an exception's message, with the API key blanked if wandb echoed it."""
    text = (str(e).strip().splitlines() or [type(e).__name__])[0]
    return text.replace(secret, "***") if secret else text


def _unix(stamp: Any) -> float | None:
    """wandb's ISO time (`2026-12-03T11:50:35`, UTC without a zone, or with `Z`) -> Unix seconds."""
    if not isinstance(stamp, str) or not stamp:
        return None
    try:
        t = datetime.fromisoformat(stamp)
    except ValueError:
        return None
    return (t if t.tzinfo else t.replace(tzinfo=UTC)).timestamp()


def run_config(config: dict[str, Any]) -> dict[str, Any]:
    """`run.config` (already unwrapped from wandb's {"value": ...}) -> flat dotted keys, wandb's `_` keys out."""
    return flatten_config({k: v for k, v in config.items() if not str(k).startswith("_")})


def fill_meta(meta: RunMeta, run) -> None:
    """Name, status, times and config from a `wandb.apis.public.Run` into `meta`.

    Only these fields are copied: the public Run also holds the API key it was opened with, which must
    never reach run.json or the dashboard.
    """
    attrs = getattr(run, "_attrs", {})  # createdAt/heartbeatAt come with the run's GraphQL fragment
    state = str(run.state or "").lower()
    meta.name = run.name or run.id
    meta.run_id = run.id
    meta.status = STATES.get(state, "unknown")
    meta.error = f"wandb state: {state}" if meta.status == "failed" else None
    meta.start_time = _unix(attrs.get("createdAt"))
    meta.heartbeat = _unix(attrs.get("heartbeatAt"))
    meta.info = {"wandb_path": f"{run.entity}/{run.project}/{run.id}", "wandb_state": state}
    meta.config = run_config(dict(run.config or {}))


class WandbOnlineRun(Run):
    nan_known = True  # history rows hold NaN as NaN; a key not logged in a row is absent or null

    def __init__(self, uri: str, timeout_s: int = TIMEOUT_S) -> None:
        self.uri = uri
        self.timeout_s = timeout_s
        self.entity, self.project, self.run_id = parse_uri(uri)
        super().__init__(uri, RunMeta(run_id=self.run_id, name=self.run_id, source="wandb-online"),
                         stale_after_s=ONLINE_STALE_AFTER_S)
        self._api_run = None
        self._last_wandb_step = -1  # the highest `_step` read; scan_history's min_step counts these
        self._seq = 0
        self._api_run = self._call(self._open)
        fill_meta(self.meta, self._api_run)
        for chunk in self._call(self._rows):  # the first read raises; later ones (refresh) note a Problem
            self._table.append(chunk)
        self._note_duplicates()

    @property
    def name(self) -> str:
        return self.meta.name or self.run_id

    def _open(self):
        wandb = require("wandb", "wandb", "reading wandb:// runs")

        # wandb prompts for a key when stderr and stdin are a terminal (wandb/errors/term.py); a dashboard
        # must not block on a prompt nobody sees, so stderr is not a terminal while the client starts.
        with contextlib.redirect_stderr(io.StringIO()):
            api = wandb.Api(timeout=self.timeout_s)
        return api.run(f"{self.entity}/{self.project}/{self.run_id}")

    def _call(self, fn):
        """Run one wandb call; any failure of the client becomes RunError("wandb://e/p/r: <what>")."""
        try:
            return fn()
        except RunError:
            raise
        except Exception as e:  # noqa: BLE001 - the client raises many types (UsageError, CommError,
            # RunNotFoundError is a ValueError, service errors); each means "this run could not be read"
            raise RunError(f"{self.uri}: {self._explain(e)}") from None

    def _explain(self, e: Exception) -> str:
        from wandb.errors import UsageError

        if isinstance(e, UsageError) and "api key" in str(e).lower():
            return KEY_HELP
        return f"{type(e).__name__}: {_one_line(e, os.environ.get('WANDB_API_KEY'))}"

    def _rows(self) -> list[pd.DataFrame]:
        """Rows after the last `_step` read -> metric chunks (empty list when there are none)."""
        rows, last = [], self._last_wandb_step
        for values in self._api_run.scan_history(min_step=self._last_wandb_step + 1):
            wandb_step = values.get("_step")
            if isinstance(wandb_step, (int, float)) and math.isfinite(wandb_step):
                last = max(last, int(wandb_step))
            row = history_row(values)
            if row:  # None (no step) and {} (media only) carry nothing to chart
                rows.append(row)
        # moved on only once the whole scan arrived, so a scan cut off halfway is asked again in full
        self._last_wandb_step = last
        out, self._seq = step_chunks(self._table.frame(), rows, self._seq)
        return out

    def _read_new(self) -> list[pd.DataFrame]:
        """A refresh: new state, heartbeat and rows; a failure keeps what was read and notes a Problem."""
        self.problems = [p for p in self.problems if not p.message.startswith(REFRESH_FAILED)]
        try:
            self._api_run.load(force=True)
            out = self._rows()
        except Exception as e:  # noqa: BLE001 - any client failure, as in _call
            self.problems.append(Problem(self.uri, f"{REFRESH_FAILED}: {self._explain(e)}"))
            return []
        fill_meta(self.meta, self._api_run)
        return out


@register_source("wandb-online", detect=lambda t: str(t).startswith(SCHEME), priority=90, hints={
    "samples": SAMPLES_HINT,
    "config": "the run's config is empty on the W&B server: wandb.init was called without config=...",
})
def open_wandb_online(target: str) -> WandbOnlineRun:
    return WandbOnlineRun(target)
