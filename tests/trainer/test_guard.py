"""grpo-train's guard (grpo_core/guard.py): a run made to fail stops itself with status `stopped` and the
finding as the reason, recorded in run.json and findings.jsonl; a healthy run is never stopped; the
stopped status reads back everywhere (runs table, grpo-diagnose)."""

from __future__ import annotations

import json

import pytest

from collectors import load_run
from collectors.discovery import discover_runs
from dashboard.diagnosis.cli import main as diagnose_main
from dashboard.diagnosis.guard.guard import FINDINGS_FILE, read_findings
from grpo_core.cli import main

# Checks every 5 steps with no time budget, so when a check happens does not depend on the machine's speed.
GUARD = ["--watch-every", "5", "--watch-budget", "1", "--set", "log.progress=false"]


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    return str(tmp_path_factory.getbasetemp() / "grpo_warm_start")  # shared with test_grpo_cli's warm start


@pytest.fixture(scope="module")
def stopped_run(tmp_path_factory, cache):
    """A verifier that rejects every right answer (FAULT broken_padded_exact): reward 0 from step 0; the run
    mirrors to wandb (offline; the dev extra installs wandb, so a broken install fails here)."""
    out = tmp_path_factory.mktemp("guard") / "broken"
    wandb = ["--set", "log.wandb=true"]
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("WANDB_MODE", "offline")
        mp.setenv("WANDB_SILENT", "true")
        code = main(["--out", str(out), "--steps", "40", "--stop-on", "critical", *GUARD, *wandb,
                     "--set", "faults.reward_verifier=broken_padded_exact", "--set", f"warm_start.cache_dir={cache}"])
    return out, code


def test_a_broken_run_stops_itself_with_status_stopped(stopped_run, capsys):
    out, code = stopped_run
    assert code == 3
    meta = json.loads((out / "run.json").read_text())
    assert meta["status"] == "stopped"
    # broken from step 0: checks at 0, 5, 10 confirm a finding held 3 checks, the run ends after step 10
    assert meta["error"].startswith("stopped by the guard after step 10: critical finding ")
    assert meta["info"]["steps_done"] == 11
    stop = [e for e in read_findings(out) if e["event"] == "stop"]
    assert len(stop) == 1 and stop[0]["step"] == 10 and stop[0]["rule_id"] in meta["error"]
    assert any(n.startswith(f"guard: critical {stop[0]['rule_id']} at step 10") for n in meta["notes"])
    assert meta["info"]["guard_active"]


def test_stopped_is_a_status_everywhere(stopped_run, capsys):
    out, _ = stopped_run
    assert load_run(out).status == "stopped"
    (info,) = discover_runs(out.parent)
    assert info.status == "stopped" and info.error.startswith("stopped by the guard")
    assert diagnose_main([str(out), "--format", "json"]) == 0
    obj = json.loads(capsys.readouterr().out)[str(out)]
    assert obj["status"] == "stopped" and obj["status_reason"].startswith("stopped by the guard")
    diagnose_main([str(out)])
    assert "status stopped (stopped by the guard after step 10" in capsys.readouterr().out


def test_a_healthy_run_is_not_stopped(tmp_path, cache, capsys):
    out = tmp_path / "healthy"
    assert main(["--out", str(out), "--steps", "30", "--stop-on", "critical", *GUARD,
                 "--set", f"warm_start.cache_dir={cache}"]) == 0
    assert json.loads((out / "run.json").read_text())["status"] == "finished"
    assert not [e for e in read_findings(out) if e["event"] == "stop"]


def test_no_watch_writes_no_findings_and_stop_on_needs_the_guard(tmp_path, cache, capsys):
    out = tmp_path / "quiet"
    assert main(["--out", str(out), "--steps", "2", "--no-watch", "--set", "log.progress=false",
                 "--set", f"warm_start.cache_dir={cache}"]) == 0
    assert not (out / FINDINGS_FILE).exists()
    assert main(["--out", str(tmp_path / "x"), "--no-watch", "--stop-on", "critical"]) == 2
    assert "--stop-on needs the guard" in capsys.readouterr().err


def test_the_wandb_mirror_summary_holds_the_findings(stopped_run):
    from helpers.wandb_records import summary_of

    out, _ = stopped_run
    (run_dir,) = (out / "wandb").glob("offline-run-*")
    summary = summary_of(run_dir)
    meta = json.loads((out / "run.json").read_text())
    assert summary["grposcope/stopped_by"] in meta["error"]
    assert any(k.startswith("grposcope/") and v.startswith("critical at step 10: ") for k, v in summary.items())
