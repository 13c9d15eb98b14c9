"""grpo-diagnose --watch: follow any run the collectors read (TRL folder, verl log, TensorBoard logdir, ours)
as it grows and print what changes; --stop-file and the exit status let a wrapper stop the training.

Each run gets a Watcher (dashboard/diagnosis/guard/watch.py): a check only when new steps arrived, a finding
printed once it has held --hold checks (or two (hold - 1) x 10 steps apart), a line when it clears. With
--fail-on (or --stop-file, which implies critical), the first finding of that severity or worse that holds
ends the watch with exit 1, after writing the stop file. A run that ends (finished, failed, stopped, stale) gets a last check that
prints whatever holds then; the exit status is 1 if a finding at --fail-on severity holds then. With
--alert, each run's new and cleared findings also go to the webhooks (webhook.py), sent in the background;
the watch waits a bounded time for them before it exits.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from dashboard.diagnosis import i18n
from dashboard.diagnosis.guard.guard import close_sinks, json_safe, stop_text
from dashboard.diagnosis.guard.watch import HOLD_CHECKS, Update, Watcher, alert_line, severity_at_least
from dashboard.diagnosis.guard.webhook import WebhookSink, webhook_sink
from dashboard.diagnosis.i18n import label
from dashboard.diagnosis.terminal import format_finding

ENDED = ("finished", "failed", "stopped", "stale")


def watch(runs: dict[str, Any], args: argparse.Namespace) -> int:
    try:
        alerts = alert_sinks(runs, args)
    except ValueError as e:
        print(f"grpo-diagnose: {e}", file=sys.stderr)
        return 2
    try:
        return _watch(runs, args, alerts)
    finally:
        close_sinks(list(alerts.values()))


def alert_sinks(runs: dict[str, Any], args: argparse.Namespace) -> dict[str, WebhookSink]:
    """One webhook sink per run for --alert (none without it); ValueError on a bad --alert."""
    specs = getattr(args, "alert", None) or []
    if not specs:
        return {}
    return {name: webhook_sink(specs, name, args.lang, getattr(run, "path", None), getattr(args, "dashboard", None))
            for name, run in runs.items()}


def _watch(runs: dict[str, Any], args: argparse.Namespace, alerts: dict[str, WebhookSink]) -> int:
    bar = args.fail_on or ("critical" if args.stop_file else None)
    watchers = {name: Watcher(stop_on=bar, hold=args.hold or HOLD_CHECKS) for name in runs}
    try:
        while True:
            for name, run in runs.items():
                run.refresh()
                w = watchers[name]
                w.follow(run)
                update = w.check(final=run.status in ENDED)
                if update:
                    show(name, update, args)
                    if name in alerts:
                        alerts[name](update)
                if update and update.stop is not None:
                    if args.stop_file:
                        write_stop_file(Path(args.stop_file), name, update)
                    return 1
            if all(run.status in ENDED for run in runs.values()):  # --fail-on still judges what holds at the end
                return int(any(severity_at_least(f.severity, bar) for w in watchers.values() for f in w.active))
            time.sleep(args.interval)
    except KeyboardInterrupt:
        return 0


def show(name: str, u: Update, args: argparse.Namespace) -> None:
    lang = args.lang
    for f in u.new:
        if args.format == "json":
            print(json.dumps({"run": name, "step": u.step, "event": "new", "finding": json_safe(
                i18n.localise_finding(f, lang).to_dict())}, ensure_ascii=False), flush=True)
        else:
            print(f"-- {name} {label('at_step', lang, step=u.step)}: {label('new_finding', lang)}\n"
                  f"{format_finding(i18n.localise_finding(f, lang), lang)}", flush=True)
    for f in u.cleared:
        print(json.dumps({"run": name, "step": u.step, "event": "cleared", "rule_id": f.rule_id,
                          "severity": f.severity}) if args.format == "json"
              else f"-- {name}: {alert_line(f, u.step, 'cleared', lang)}", flush=True)
    for n in u.errors:
        print(json.dumps({"run": name, "step": u.step, "event": "rule_error", "rule_id": n.rule_id,
                          "reason": n.reason}) if args.format == "json"
              else f"-- {name}: {label('rule_raised', lang, rule=n.rule_id, reason=n.reason)}", flush=True)
    if u.stop is not None and args.format != "json":
        f = i18n.localise_finding(u.stop, lang)
        print(f"-- {name} {label('at_step', lang, step=u.step)}: "
              f"{label('stop_line', lang, sev=label(f.severity, lang), rule=f.rule_id, title=f.title)}", flush=True)


def write_stop_file(path: Path, name: str, u: Update) -> None:
    """The stop file: JSON with the run, the step and the finding; written whole (temp file, rename)."""
    f = u.stop
    body = json.dumps(json_safe({"run": name, "step": u.step, "rule_id": f.rule_id, "severity": f.severity,
                             "title": f.title, "reason": stop_text(f)}), indent=2)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(body + "\n", encoding="utf-8")
    tmp.replace(path)
