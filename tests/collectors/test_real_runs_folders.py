"""Real published runs kept as folders and binary logs (../shared/fixtures/real-runs/: TensorBoard, wandb,
TRL trainer_state.json) open as their labels' `reader` field says; skipped when ../shared is absent."""

from __future__ import annotations

import json

import pytest
from helpers.paths import REPO

from collectors import RunError, open_run
from collectors.sources import open_runs

REAL = REPO.parent / "shared" / "fixtures" / "real-runs"
pytestmark = pytest.mark.skipif(not (REAL / "labels.json").is_file(), reason="../shared/fixtures/real-runs absent")

CORE = {"reward/mean", "reward/std", "completions/len_mean", "policy/kl_ref", "loss/total", "optim/lr",
        "optim/grad_norm"}
# name -> (rows, first step, last step, canonical columns beyond CORE)
TRL_RUNS = {
    "trl_redteam_sparse": (100, 1, 100, {"groups/zero_std_frac", "policy/entropy", "perf/step_s"}),
    "trl_trading_agent": (40, 5, 200, {"groups/zero_std_frac", "completions/truncated_frac"}),
    "trl_verilog_length_runaway": (56, 5, 280, {"completions/len_max", "completions/truncated_frac"}),
    "trl_wordle_checkpoints": (160, 1, 160, {"policy/entropy", "eval/reward_mean", "perf/step_s"}),
}
# steps per launch of tb_wordle_sweep, in launch order (each event file's own train/ scalars, steps 1..N)
SWEEP_STEPS = [90, 24, 20, 10, 50, 147, 100, 100, 100, 100, 100, 15, 90, 90, 90, 636, 300, 300, 2, 2, 180, 90]


def reader_label(name: str) -> dict:
    return json.loads((REAL / "labels.json").read_text())["runs"][name]["reader"]


def test_tb_sweep_is_22_launches_each_on_its_own_series():
    label = reader_label("tb_wordle_sweep")
    assert label["opens"] and label["separate_launches"]
    with pytest.raises(RunError, match="holds 22 separate runs"):
        open_run(REAL / "tb_wordle_sweep")
    runs = open_runs(REAL / "tb_wordle_sweep")
    assert [len(r.metrics) for r in runs] == SWEEP_STEPS
    assert all(r.metrics["step"].tolist() == list(range(1, n + 1)) for r, n in zip(runs, SWEEP_STEPS, strict=True))
    assert all(r.name.startswith("tb_wordle_sweep#") for r in runs) and len({r.name for r in runs}) == 22
    for r in runs:  # TRL over TensorBoard: the same canonical names as from trainer_state.json
        assert CORE | {"policy/entropy", "perf/step_s", "groups/zero_std_frac"} <= set(r.metrics.columns), r.name
        assert not [c for c in r.metrics.columns if c.endswith(("train_runtime", "total_flos"))], r.name
    # each launch has its own config (a learning-rate sweep), read from its own `args` text summary
    lrs = [r.meta.config["learning_rate"] for r in runs]
    assert lrs[:2] == [1e-06, 0.005] and len(set(lrs)) == 5
    # the file holding only a config (a launch that died before its first log) is named, and no run
    first = runs[0].problems
    assert [p.file for p in first] == ["events.out.tfevents.1767712757.lara_TUF.27716.0"]
    assert all(r.problems == [] for r in runs[1:])


def test_stopped_wandb_run_folder_opens_and_cannot_be_judged():
    from dashboard.diagnosis import diagnose

    label = reader_label("wandb_logicrl_stopped")
    assert label["opens"] and label["says_cannot_judge"]
    run = open_run(REAL / "wandb_logicrl_stopped")  # a folder holding one online run-* folder
    assert run.name == "RF++-Qwen-3B-curriculum-formula-nus-1" and run.meta.source == "wandb"
    assert run.meta.config["algorithm.adv_estimator"] == "reinforce_plus_plus"
    assert "holds no history records" in run.problems[0].message
    # the console log wandb kept (files/output.log): a validation line at step 0 and one training step
    assert len(run.metrics) <= 2
    assert diagnose(run).verdict.kind == "cant_judge"


@pytest.mark.parametrize("name", sorted(TRL_RUNS))
def test_trl_trainer_state_runs_open_with_their_steps_and_columns(name):
    rows, first, last, more = TRL_RUNS[name]
    assert reader_label(name)["opens"]
    run = open_run(REAL / name)
    m = run.metrics
    assert run.meta.source == "trl" and (len(m), m["step"].iloc[0], m["step"].iloc[-1]) == (rows, first, last)
    assert CORE | more <= set(m.columns)
    # keys without a canonical twin keep the names TensorBoard and wandb give them
    assert "train/num_tokens" in m and not [c for c in m.columns if "/" not in c and c != "step"]
