"""Findings reach a wandb run's summary: a real offline run (written by wandb in a subprocess, no network)
whose rows are watched by the guard; its run-*.wandb file holds the summary records `wandb sync` uploads."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "fixtures"))

SCRIPT = """
import sys
sys.path.insert(0, ROOT)
import wandb
from dashboard.diagnosis.guard.guard import Guard, wandb_sink
from dashboard.diagnosis.guard.watch import Pacer, Watcher
run = wandb.init(project="guard", dir=DIR, mode="offline")
g = Guard(Watcher(stop_on="critical", hold=2), Pacer(every=5, budget=None), [wandb_sink(run)])
for s in range(30):
    run.log({"reward/mean": 0.0, "reward/std": 0.0}, step=s)
    g.on_step(s, {"reward/mean": 0.0, "reward/std": 0.0})
run.finish()
"""


def summary_of(run_dir: Path) -> dict:
    """The last value of each summary key, from the run's own record file (wandb's protobuf records)."""
    from wandb.proto import wandb_internal_pb2 as pb

    from collectors.readers.wandb.offline import RecordReader, wandb_file

    out = {}
    for raw in RecordReader(wandb_file(run_dir)).read():
        rec = pb.Record.FromString(raw)
        if rec.WhichOneof("record_type") == "summary":
            for item in rec.summary.update:
                out[item.key or "/".join(item.nested_key)] = json.loads(item.value_json)
    return out


def test_offline_run_summary_holds_the_finding_and_the_stop(tmp_path):
    pytest.importorskip("wandb")
    from wandb_offline import write_offline_run

    run_dir = write_offline_run(tmp_path, SCRIPT, ROOT=str(ROOT))
    summary = summary_of(run_dir)
    # constant reward from step 0: found at the check of step 10 (10 points), held at step 15
    assert summary["grposcope/reward_constant"].startswith("critical at step 15: Reward is constant")
    assert summary["grposcope/stopped_by"].startswith("critical finding ")
