"""The guard inside a real tiny TRL GRPOTrainer on CPU (tests/fixtures/trl/guarded_trl_run.py): a reward
broken from the first step stops the run within a bounded number of steps, with status `stopped`, the
finding in the console (transformers logger), the trainer's logs and its TensorBoard logdir; a run whose
rewards differ is never stopped."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from helpers.paths import REPO

from dashboard.diagnosis.guard.guard import read_findings

SCRIPT = REPO / "tests" / "fixtures" / "trl" / "guarded_trl_run.py"


def guarded_run(out: Path, reward: str, *extra: str) -> tuple[str, str]:
    """(the script's last stdout line, everything it printed)"""
    proc = subprocess.run([sys.executable, str(SCRIPT), str(out), reward, *extra], capture_output=True, text=True,
                          check=False, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout.strip().splitlines()[-1], proc.stdout + proc.stderr


def test_a_constant_reward_stops_the_trainer(tmp_path):
    last, text = guarded_run(tmp_path, "constant", "--report-to", "tensorboard")
    # onset at step 1; checks every 2 logged steps, a finding must hold 3 checks, and the rules need about
    # ten points to call a reward constant: the stop comes by step 14 of 24, never at the end
    assert last.startswith("stopped at step ") and int(last.split()[-1]) <= 14
    meta = json.loads((tmp_path / "grpo_run" / "run.json").read_text())
    assert meta["status"] == "stopped" and meta["error"].startswith("stopped by the guard after step ")
    (stop,) = [e for e in read_findings(tmp_path / "grpo_run") if e["event"] == "stop"]
    assert stop["severity"] == "critical" and stop["rule_id"] in meta["error"]
    # the step is handed to the guard when the next one logs, and the trainer ends that one before it stops
    assert int(last.split()[-1]) == stop["step"] + 1
    assert f"(the trainer ends the step it is in, {stop['step'] + 1})" in meta["error"]
    assert f"grposcope CRITICAL at step {stop['step']}" in text  # the transformers logger
    assert "'grposcope/stopped_by': 'critical finding" in text  # the trainer's logs, as its printer shows them
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    (logdir,) = (tmp_path / "trl_out" / "runs").iterdir()
    ea = EventAccumulator(str(logdir / "grposcope"), size_guidance={"tensors": 0})
    ea.Reload()
    assert "grposcope/findings/text_summary" in ea.Tags()["tensors"]


def test_rewards_that_differ_are_never_stopped(tmp_path):
    last, _ = guarded_run(tmp_path, "digits")
    assert last == "finished at step 24"
    assert json.loads((tmp_path / "grpo_run" / "run.json").read_text())["status"] == "finished"
    assert not [e for e in read_findings(tmp_path / "grpo_run") if e["event"] == "stop"]
