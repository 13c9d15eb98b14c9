"""The W&B chart export reader (collectors/readers/wandb/chart_csv.py).

The files are written here in the layout the W&B web UI gives a line plot's "Export panel -> CSV": the x axis
first ("Step"), then per run and metric `"<run> - <metric>"`, `"<run> - <metric>__MIN"`, `"<run> - <metric>__MAX"`,
every cell quoted in the header, an empty cell where a run has no point at that x (checked against exports
committed to public repositories). The UI cannot run here, so the files are made from runs we have.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from fixtures.wandb_chart import write_chart  # tests/ is on sys.path
from helpers.paths import REPO

from collectors.meta import RunError
from collectors.sources import detect_source, launches_of, open_run, open_runs
from dashboard.diagnosis.engine import diagnose

BIN = Path(sys.executable).parent


def test_a_folder_of_charts_is_one_run_per_run_name_with_every_chart_side_by_side(tmp_path):
    runs = {"grpo-qwen-1": {s: {"train/reward": 0.1 * s, "train/kl": 0.01 * s} for s in (1, 2, 3)},
            "grpo-qwen-2": {s: {"train/reward": 0.5, "train/kl": 0.02} for s in (1, 3)}}
    write_chart(tmp_path / "reward.csv", {r: {s: {"train/reward": v["train/reward"]} for s, v in p.items()}
                                          for r, p in runs.items()}, ["train/reward"])
    write_chart(tmp_path / "kl.csv", runs, ["train/kl"])
    assert detect_source(tmp_path) == "wandb-csv"
    assert launches_of(tmp_path) == [f"{tmp_path}#grpo-qwen-1", f"{tmp_path}#grpo-qwen-2"]
    one, two = open_runs(tmp_path)
    assert (one.name, one.meta.source) == ("grpo-qwen-1", "wandb-csv")
    assert one.metrics["step"].tolist() == [1, 2, 3]
    assert one.metrics["reward/mean"].tolist() == pytest.approx([0.1, 0.2, 0.3])
    assert one.metrics["policy/kl_ref"].tolist() == pytest.approx([0.01, 0.02, 0.03])
    # run 2 has no point at x = 2: no row there (another run's x), not a row of nulls
    assert two.metrics["step"].tolist() == [1, 3] and two.metrics["reward/mean"].tolist() == [0.5, 0.5]
    assert one.problems == [] and two.problems == []
    # one file names its runs too; a run named on its own opens alone
    assert [r.name for r in open_runs(tmp_path / "kl.csv")] == ["grpo-qwen-1", "grpo-qwen-2"]
    with pytest.raises(RunError, match="holds 2 separate runs"):
        open_run(tmp_path / "kl.csv")
    assert open_run(f"{tmp_path / 'reward.csv'}#grpo-qwen-2").metrics["reward/mean"].tolist() == [0.5, 0.5]
    with pytest.raises(RunError, match="no run 'nope' in this chart export; runs: grpo-qwen-1, grpo-qwen-2"):
        open_run(f"{tmp_path}#nope")


def test_a_run_exported_as_charts_gets_the_diagnosis_of_the_run_itself(tmp_path):
    # sample_runs/lr_too_high (our trainer, canonical names as logged) charted metric by metric under its name
    run = open_run(REPO / "sample_runs" / "lr_too_high")
    keys = ["reward/mean", "policy/kl_ref", "policy/clipfrac", "optim/grad_norm", "policy/entropy"]
    m = run.metrics.set_index("step")
    for k in keys:
        pts = {int(s): {k: float(v)} for s, v in m[k].items() if np.isfinite(v)}
        write_chart(tmp_path / f"{k.replace('/', '_')}.csv", {"lr_too_high": pts}, [k])
    exported = open_run(tmp_path)
    assert len(exported.metrics) == len(run.metrics)
    found = {f.rule_id: f for f in diagnose(exported).findings}
    assert diagnose(run).verdict.kind == "unstable"
    assert {f.rule_id: f.severity for f in diagnose(run).findings}["kl_clip_explode"] == "critical"
    # a chart export carries no config: whether a KL term held the policy is unsaid, so the same KL is at most a
    # warning and says why (issue 37's no-config view; the clip fraction alone does not reach critical here)
    kl = found["kl_clip_explode"]
    assert kl.severity == "warning"
    assert any(e.metric == "config:kl" and "the config does not say whether a KL term holds the policy" in e.text
               for e in kl.evidence)


def test_an_axis_that_is_no_step_and_a_csv_that_is_no_chart(tmp_path):
    write_chart(tmp_path / "time.csv", {"r": {1: {"train/reward": 0.1}, 2: {"train/reward": 0.2}}}, ["train/reward"],
                x="Relative Time (Process)")
    text = (tmp_path / "time.csv").read_text().replace("\n1,", "\n1.5,")
    (tmp_path / "time.csv").write_text(text)
    r = open_run(tmp_path / "time.csv")
    assert len(r.metrics) == 0
    assert [p.message for p in r.problems] == [
        ("the x axis is 'Relative Time (Process)', not a step (fractional values); export the chart with Step (or "
         "the trainer's global step) as its x axis; left out")]
    # a CSV with " - " in its names but no __MIN/__MAX companion is anybody's CSV: not claimed
    (tmp_path / "other.csv").write_text('"step","a - b"\n1,2\n')
    assert detect_source(tmp_path / "other.csv") == "generic"


def test_grpo_diagnose_reads_a_chart_export_folder(tmp_path):
    pts = {s: {"train/reward": 0.3, "train/kl": 0.001 * s} for s in range(1, 61)}
    write_chart(tmp_path / "chart.csv", {"flat-run": pts}, ["train/reward", "train/kl"])
    out = subprocess.run([str(BIN / "grpo-diagnose"), str(tmp_path), "--fail-on", "critical"], capture_output=True,
                         text=True, timeout=120, check=False)
    assert out.returncode == 1 and f"{tmp_path}#flat-run: 60 steps" in out.stdout, out.stdout + out.stderr
    assert "Reward is constant (0.3)" in out.stdout
    # one value repeated has no spread (its float std is ~5.6e-17): the flat rule says so, no made-up scale. Not a
    # 0/1 reward at pass rate 0.3 either (0.3 = 3/10, but a pass rate's step means vary: facts.LATTICE_MIN_LEVELS),
    # nor a Bhatia-Davis bound (a chart's __MIN and __MAX bound the drawn line, not the responses: not read)
    assert "against a reward spread of 1 (no spread logged (taken as 1))" in out.stdout


def test_a_run_name_longer_than_a_file_name_is_a_launch_of_its_own(tmp_path):
    # make fuzz's case: a run name of 5,000 characters; the launch target FOLDER#<name> is no path the file
    # system can even test (File name too long), so it is a launch name, not an OSError
    name = "r" * 5000
    write_chart(tmp_path / "chart.csv", {name: {s: {"train/reward": 0.1 * s} for s in (1, 2, 3)}}, ["train/reward"])
    (run,) = open_runs(tmp_path)
    assert run.name == name and run.metrics["step"].tolist() == [1, 2, 3]
