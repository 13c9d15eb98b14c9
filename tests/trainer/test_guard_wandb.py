"""Findings reach a wandb run's summary and its alerts: a real offline run (written by wandb in a subprocess, no
network) whose rows are watched by the guard; its run-*.wandb file holds the summary and alert records that
`wandb sync` uploads. What cannot run here is wandb's server turning an alert record into a Slack message."""

from __future__ import annotations

import re
import sys

from helpers.paths import REPO
from helpers.wandb_records import records, summary_of

sys.path.insert(0, str(REPO / "tests" / "fixtures"))

SCRIPT = """
import sys
sys.path.insert(0, REPO)
import wandb
from dashboard.diagnosis.guard.guard import Guard, wandb_sink
from dashboard.diagnosis.guard.watch import Pacer, Watcher
run = wandb.init(project="guard", dir=DIR, mode="offline")
g = Guard(Watcher(stop_on="critical", hold=2), Pacer(every=5, budget=None), [wandb_sink(run, ALERTS)])
for s in range(30):
    run.log({"reward/mean": 0.0, "reward/std": 0.0}, step=s)
    g.on_step(s, {"reward/mean": 0.0, "reward/std": 0.0})
run.finish()
"""


def test_offline_run_summary_holds_the_finding_and_the_stop(tmp_path):
    from wandb_offline import write_offline_run

    run_dir = write_offline_run(tmp_path, SCRIPT, REPO=str(REPO), ALERTS=None)
    summary = summary_of(run_dir)
    # constant reward from step 0: found at the check of step 10 (10 points), held at step 15
    assert summary["grposcope/reward_constant"].startswith("critical at step 15: Reward is constant")
    assert summary["grposcope/stopped_by"].startswith("critical finding ")
    assert records(run_dir, "alert") == []  # offline by default: no page sent when the run is synced later


def test_alerts_asked_for_offline_go_through_wandb_alert_into_the_record_file(tmp_path):
    from wandb_offline import write_offline_run

    run_dir = write_offline_run(tmp_path, SCRIPT, REPO=str(REPO), ALERTS=True)
    alerts = records(run_dir, "alert")
    summary = summary_of(run_dir)
    # one alert each time a finding is confirmed at a severity (a warning that grows critical pages again; a
    # clearing is in the summary only), the same findings as the summary's, at the level wandb knows for each
    found = {k.split("/", 1)[1]: v for k, v in summary.items() if k.startswith("grposcope/") and k != "grposcope/stopped_by"}
    rules = [re.search(r"\((\w+)\); check first", a.text).group(1) for a in alerts]  # "<title> (<rule>); check first"
    assert set(rules) == set(found) and "reward_constant" in found
    assert len(alerts) == len({a.title for a in alerts})  # no message twice
    for rule, a in zip(rules, alerts):
        severity, title = a.title.split(": ", 1)
        assert a.level == {"critical": "ERROR", "warning": "WARN", "info": "INFO"}[severity]
        assert a.text.startswith(f"grposcope {severity.upper()} at step ") and "check first: " in a.text
        if not found[rule].startswith("cleared"):  # the summary holds the last state: the last alert of the rule
            last = [b for r, b in zip(rules, alerts) if r == rule][-1]
            step = int(found[rule].split(" at step ")[1].split(":")[0])
            assert last.title == f"{found[rule].split(' at step ')[0]}: {found[rule].split(': ', 1)[1]}"[:63]
            assert last.text.startswith(f"grposcope {found[rule].split(' at step ')[0].upper()} at step {step}: ")
    constant = next(a for a in alerts if "(reward_constant)" in a.text)
    assert constant.title == "critical: Reward is constant (0) over the whole run" and "step 15" in constant.text
    assert "the verifier" in constant.text
    assert alerts[0].wait_duration == 60_000  # wandb's default: the same title at most once a minute
