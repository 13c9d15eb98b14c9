"""The guard: a Watcher, paced, whose updates go to sinks (console, the run folder, wandb), and which names
the finding that should stop the run. Shared by our trainer (grpo_core/guard.py) and the TRL callback.

A sink is a callable `sink(update)`. A sink that raises is reported once and dropped: recording a finding
must never take a training run down. A sink that sends in the background (webhook.WebhookSink) also has
`close(wait)`, which Guard.close calls at the end of the run.
"""

from __future__ import annotations

import json
import math
import sys
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from dashboard.diagnosis.findings import Finding
from dashboard.diagnosis.guard.watch import Pacer, Update, Watcher, alert_line

FINDINGS_FILE = "findings.jsonl"  # in the run folder; docs/run-format.md
Sink = Callable[[Update], None]


class Guard:
    def __init__(self, watcher: Watcher, pacer: Pacer | None = None, sinks: list[Sink] | None = None) -> None:
        self.watcher, self.pacer = watcher, pacer or Pacer()
        self.sinks = list(sinks or [])

    @property
    def stop_reason(self) -> Finding | None:
        return self.watcher.stop_reason

    def on_step(self, step: int, metrics: Mapping[str, Any], samples: list[dict] | None = None) -> Finding | None:
        """Take one logged step; check when due. Returns the finding that stops the run, once, else None."""
        t0 = time.perf_counter()
        self.watcher.add(step, metrics, samples)
        update = self.watcher.check() if self.pacer.due(int(step)) else None
        if update:
            self._emit(update)
        self.pacer.spent += time.perf_counter() - t0
        return update.stop if update else None

    def finish(self) -> Update | None:
        """The run ended: a last check that confirms what holds now (nothing is left to wait for)."""
        update = self.watcher.check(final=True)
        if update:
            self._emit(update)
        return update

    def close(self, wait: float | None = None) -> None:
        """The run is over: let the sinks that send in the background send what they hold (each waits at most
        its own bound, or `wait` seconds)."""
        close_sinks(self.sinks, wait)

    def _emit(self, update: Update) -> None:
        for sink in list(self.sinks):
            try:
                sink(update)
            except Exception as e:  # noqa: BLE001 - a sink's failure must not stop training
                self.sinks.remove(sink)
                print(f"grposcope guard: {getattr(sink, '__name__', type(sink).__name__)} failed and is off: "
                      f"{type(e).__name__}: {e}", file=sys.stderr)


def close_sinks(sinks: list[Sink], wait: float | None = None) -> None:
    """close() every sink that has one (a sink that sends in the background); a failure is one line, as in
    Guard._emit: the run is over, and what it wrote stays."""
    for sink in sinks:
        if callable(close := getattr(sink, "close", None)):
            try:
                close() if wait is None else close(wait)
            except Exception as e:  # noqa: BLE001 - closing a sink must not fail the end of a run
                print(f"grposcope guard: closing {getattr(sink, '__name__', type(sink).__name__)} failed: "
                      f"{type(e).__name__}: {e}", file=sys.stderr)


def events(update: Update) -> list[dict[str, Any]]:
    """An update as findings-file records (see docs/run-format.md, findings.jsonl)."""
    now, out = time.time(), []
    for kind, items in (("new", update.new), ("cleared", update.cleared)):
        out += [{"time": now, "step": update.step, "event": kind, "rule_id": f.rule_id, "severity": f.severity,
                 "title": f.title, "checks": [c.what for c in f.checks], "finding": f.to_dict()} for f in items]
    out += [{"time": now, "step": update.step, "event": "rule_error", "rule_id": n.rule_id, "severity": None,
             "title": n.reason} for n in update.errors]
    if update.stop is not None:
        f = update.stop
        out.append({"time": now, "step": update.step, "event": "stop", "rule_id": f.rule_id,
                    "severity": f.severity, "title": f.title})
    return out


def console_sink(write: Callable[[str], None] = print, lang: str = "en") -> Sink:
    """Each new and cleared finding as one line (alert_line, in `lang`), and the stop."""
    def console(update: Update) -> None:
        for f in update.new:
            write(alert_line(f, update.step, lang=lang))
        for f in update.cleared:
            write(alert_line(f, update.step, "cleared", lang=lang))
        for n in update.errors:
            write(f"grposcope guard: rule {n.rule_id} raised and is ignored for stopping: {n.reason}")
        if update.stop is not None:
            write(f"grposcope: stopping the run after step {update.step}: {stop_text(update.stop)}")
    return console


def file_sink(run_dir: Path | str) -> Sink:
    """Appends the update's events to RUN/findings.jsonl, one JSON object a line."""
    path = Path(run_dir) / FINDINGS_FILE

    def findings_file(update: Update) -> None:
        lines = "".join(json.dumps(json_safe(e), allow_nan=False) + "\n" for e in events(update))
        if lines:
            with path.open("a", encoding="utf-8") as fh:
                fh.write(lines)
    return findings_file


def stop_text(f: Finding) -> str:
    return f"{f.severity} finding {f.rule_id}: {f.title}"


def read_findings(run_dir: Path | str) -> list[dict[str, Any]]:
    """The events of RUN/findings.jsonl ([] when there is none). A torn last line (a writer killed
    mid-write) is skipped; other bad lines too, since the file is a log, not the record of the run."""
    path = Path(run_dir) / FINDINGS_FILE
    if not path.is_file():
        return []
    out = []
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            obj = json.loads(line)
        except ValueError:
            continue
        if isinstance(obj, dict) and "event" in obj:
            out.append(obj)
    return out


def json_safe(x: Any) -> Any:
    """Strict JSON: NaN/inf become null, tuples lists, numpy scalars numbers."""
    if isinstance(x, float):
        return x if math.isfinite(x) else None
    if isinstance(x, dict):
        return {str(k): json_safe(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [json_safe(v) for v in x]
    if hasattr(x, "item"):
        return json_safe(x.item())
    return x if x is None or isinstance(x, (str, int, bool)) else str(x)


WANDB_LEVELS = {"critical": "ERROR", "warning": "WARN", "info": "INFO"}


def wandb_sink(run: Any, alerts: bool | None = None) -> Sink:
    """Findings into a wandb run's summary (`grposcope/<rule id>`, `grposcope/stopped_by`), and each new one
    through `run.alert` (a team's Slack or e-mail): by default only when the run is online (alerts=None).

    Offline, wandb does not refuse an alert: it writes it to the run's record file with the other records,
    and wandb-core's sender sends every alert record it handles, so `wandb sync` would page the team when it
    uploads the run, hours later perhaps. A page about a run that may have ended long ago is noise: an
    offline run keeps the summary only, unless alerts=True (a run synced every few minutes may want them)."""

    def wandb_findings(update: Update) -> None:
        send = alerts if alerts is not None else not getattr(run, "offline", True)
        for f in update.new:
            run.summary[f"grposcope/{f.rule_id}"] = f"{f.severity} at step {update.step}: {f.title}"
            if send:  # wandb wants a title under 64 characters
                run.alert(title=f"{f.severity}: {f.title}"[:63], text=alert_line(f, update.step),
                          level=WANDB_LEVELS[f.severity])
        for f in update.cleared:
            run.summary[f"grposcope/{f.rule_id}"] = f"cleared at step {update.step}: {f.title}"
        if update.stop is not None:
            run.summary["grposcope/stopped_by"] = stop_text(update.stop)
    return wandb_findings


def meta_sink(writer: Any) -> Sink:
    """Findings into run.json through a collectors RunWriter: a note per event and `info.guard_active`
    (the confirmed findings that hold now, "severity rule_id: title")."""
    active: dict[tuple[str, str], str] = {}

    def run_json(update: Update) -> None:
        for f in update.new:
            active[(f.rule_id, f.severity)] = f"{f.severity} {f.rule_id}: {f.title}"
            writer.meta.notes.append(f"guard: {f.severity} {f.rule_id} at step {update.step}: {f.title}")
        for f in update.cleared:
            active.pop((f.rule_id, f.severity), None)
            writer.meta.notes.append(f"guard: {f.rule_id} cleared at step {update.step}")
        for n in update.errors:
            writer.meta.notes.append(f"guard: rule {n.rule_id} raised, ignored for stopping: {n.reason}")
        writer.update_meta(guard_active=list(active.values()))
    return run_json
