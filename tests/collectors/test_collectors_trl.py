"""TRL reader and live callback on a real tiny GRPOTrainer run (CPU, random Qwen2, local tokenizer),
made once per session by tests/fixtures/trl/make_trl_run.py; plus the import-hygiene check."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest
from helpers.paths import REPO
from transformers import TrainerState  # what writes trainer_state.json (dev extra)

from collectors.readers.trl.output_dir import TrlRun
from collectors.sources import detect_source, open_run

SCRIPT = REPO / "tests" / "fixtures" / "trl" / "make_trl_run.py"


@pytest.fixture(scope="module")
def trl_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("trl")
    proc = subprocess.run([sys.executable, str(SCRIPT), str(out), "--callback"], capture_output=True, text=True, check=False,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return out


@pytest.fixture(scope="module")
def trl_reuse_run(tmp_path_factory):
    """num_iterations=2: TRL generates every other step, logs rollout metrics only then, yet writes a
    completions file at every log step (the repeats hold the last rollout again)."""
    out = tmp_path_factory.mktemp("trl_mu2")
    proc = subprocess.run([sys.executable, str(SCRIPT), str(out), "--callback", "--steps", "8",
                           "--num-iterations", "2"], capture_output=True, text=True, check=False, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return out


def test_reuse_keeps_sparse_rollout_metrics_null_and_takes_each_rollout_once(trl_reuse_run):
    for folder in ("trl_out", "grpo_run"):  # the reader and the live callback
        run = open_run(trl_reuse_run / folder)
        m = run.metrics.set_index("step")
        assert list(m.index) == list(range(1, 9))
        gen = [1, 3, 5, 7]  # generation steps; 2, 4, 6, 8 reuse their rollout
        assert m.loc[gen, "reward/mean"].notna().all() and m.loc[[2, 4, 6, 8], "reward/mean"].isna().all()
        assert m["loss/total"].notna().all()  # the optimizer stepped every step
        s = run.samples()
        # one rollout per generation step (3 is an eval step: its file holds eval completions)
        assert sorted(s["step"].unique()) == [1, 5, 7], folder
        assert (s.groupby("step").size() == 8).all()
        from dashboard.diagnosis import diagnose

        assert "non_finite" not in {f.rule_id for f in diagnose(run).findings}  # nulls, not NaNs


def test_reader_maps_log_history_and_rebuilds_groups(trl_run):
    out = trl_run / "trl_out"
    assert detect_source(out) == "trl"
    run = open_run(out)
    assert isinstance(run, TrlRun) and run.problems == []
    m = run.metrics
    assert list(m["step"]) == list(range(1, 21))
    state = json.loads((out / "checkpoint-20" / "trainer_state.json").read_text())
    first = state["log_history"][0]
    assert m["reward/mean"].iloc[0] == pytest.approx(first["reward"])
    assert m["policy/kl_ref"].iloc[0] == pytest.approx(first["kl"])
    assert m["optim/lr"].iloc[0] == pytest.approx(first["learning_rate"])
    # eval entries land on their step and nowhere else
    assert list(m.loc[m["eval/reward_mean"].notna(), "step"]) == [3, 6, 9, 12, 15, 18, 20]
    s = run.samples()
    assert len(s) and not s["step"].isin([3, 6, 9, 12, 15, 18, 20]).any()  # eval completions left out
    sizes = s.groupby(["step", "group"]).size()
    assert (sizes == 4).all()  # num_generations=4
    # the group-level stat TRL logs agrees with the groups rebuilt from the completions
    step = int(s["step"].iloc[0])
    stds = s[s["step"] == step].groupby("group")["reward"].std(ddof=0)
    assert m.loc[m["step"] == step, "groups/zero_std_frac"].iloc[0] == pytest.approx(np.mean(stds < 1e-8))


def test_every_real_trl_key_with_a_twin_is_mapped(trl_run):
    state = json.loads((trl_run / "trl_out" / "checkpoint-20" / "trainer_state.json").read_text())
    keys = set().union(*[e.keys() for e in state["log_history"] if "train_runtime" not in e])
    m = open_run(trl_run / "trl_out").metrics
    for theirs in ("reward", "reward_std", "frac_reward_zero_std", "completions/mean_length",
                   "completions/clipped_ratio", "kl", "entropy", "clip_ratio/region_mean", "grad_norm",
                   "learning_rate", "eval_reward"):
        assert theirs in keys, theirs  # TRL still logs it
        assert theirs not in m.columns, f"{theirs} was left unmapped"


def test_diagnosis_judges_every_rule_whose_input_trl_logs(trl_run):
    from dashboard.diagnosis import diagnose

    for folder in ("trl_out", "grpo_run"):
        d = diagnose(open_run(trl_run / folder))
        unjudged = {n.rule_id: n.reason for n in d.not_judged}
        # TRL logs no pass rate and no first-minibatch ratio; everything else (config rules included) is judged
        assert set(unjudged) <= {"sparse_reward", "first_step_ratio"}, (folder, unjudged)


def test_reader_takes_the_grpo_config_from_training_args(trl_run):
    offline, live = open_run(trl_run / "trl_out"), open_run(trl_run / "grpo_run")
    # the same GRPOConfig, once read inertly from the torch pickle and once from the live callback
    for key in ("num_generations", "beta", "scale_rewards", "loss_type", "num_iterations", "epsilon",
                "learning_rate", "max_completion_length", "use_vllm", "lr_scheduler_type"):
        assert offline.meta.config[key] == live.meta.config[key], key
    assert offline.meta.config["num_generations"] == 4 and offline.meta.config["lr_scheduler_type"] == "linear"
    assert not any(k.startswith("distributed_state") for k in offline.meta.config)


def test_trl_over_tensorboard_gives_the_same_metrics_and_config(trl_run):
    """The same run as TRL's TensorBoardCallback logged it: train/ tags, config as the `args` text summary."""
    (tb_dir,) = list((trl_run / "trl_out" / "runs").iterdir())
    assert detect_source(tb_dir) == "tensorboard"
    tb, state = open_run(tb_dir), open_run(trl_run / "trl_out")
    assert tb.problems == [] and list(tb.metrics["step"]) == list(state.metrics["step"])
    # one name per metric whatever the route (trainer_state.json has no wall time; the trainer's closing
    # summary, train_runtime and the like, is no step's metric on either route)
    assert set(tb.metrics.columns) - {"wall_time"} == set(state.metrics.columns)
    assert {"perf/step_s", "train/num_tokens", "train/epoch"} <= set(state.metrics.columns)
    for col in ("reward/mean", "reward/std", "groups/zero_std_frac", "policy/kl_ref", "policy/entropy",
                "completions/len_mean", "optim/lr", "eval/reward_mean"):
        # TensorBoard stores float32: equal to TRL's float64 log to ~7 digits
        np.testing.assert_allclose(tb.metrics[col].to_numpy(), state.metrics[col].to_numpy(), rtol=1e-6,
                                   equal_nan=True, err_msg=col)
    for key in ("num_generations", "beta", "scale_rewards", "loss_type", "num_iterations"):
        assert tb.meta.config[key] == state.meta.config[key], key
    from dashboard.diagnosis import diagnose

    unjudged = {n.rule_id for n in diagnose(tb).not_judged}
    # as from trainer_state.json, less what needs the samples TensorBoard does not hold
    assert unjudged <= {"sparse_reward", "first_step_ratio", "verifier_suspect", "split_groups"}, unjudged


def test_callback_writes_the_same_metrics_and_config(trl_run):
    live, offline = open_run(trl_run / "grpo_run"), open_run(trl_run / "trl_out")
    assert live.meta.source == "trl" and live.status == "finished"
    assert set(live.metrics.columns) - {"wall_time"} == set(offline.metrics.columns)
    assert live.meta.config["num_generations"] == 4 and live.meta.config["beta"] == 0.04
    for col in ("reward/mean", "policy/entropy", "eval/reward_mean", "groups/zero_std_frac"):
        np.testing.assert_allclose(live.metrics[col].to_numpy(), offline.metrics[col].to_numpy(), equal_nan=True)
    assert len(live.samples()) == len(offline.samples())


def test_bad_state_file_and_empty_folder(tmp_path):
    ck = tmp_path / "checkpoint-5"
    ck.mkdir()
    (ck / "trainer_state.json").write_text('{"log_history": [{"step": 1, "reward": 0.5}, {"step": 2, "rew')
    run = TrlRun(tmp_path)
    assert len(run.metrics) == 0
    assert "checkpoint-5/trainer_state.json" in str(run.problems[0]) and "not valid JSON" in str(run.problems[0])
    # what TrainerState.save_to_json writes when a callback logged a text and an entry lost its step
    TrainerState(log_history=[{"step": 1, "reward": 0.5}, {"step": 2, "reward": "n/a"}, {"reward": 1.0}],
                 global_step=2).save_to_json(str(ck / "trainer_state.json"))
    run.refresh()
    assert list(run.metrics["step"]) == [1, 2]
    msgs = " ".join(map(str, run.problems))
    assert "step 2: non-numeric reward" in msgs and "log_history[2]: no integer step" in msgs
    empty = tmp_path / "empty"
    empty.mkdir()
    assert "no trainer_state.json" in str(TrlRun(empty).problems[0])


def test_a_restart_from_scratch_into_the_same_folder_is_a_launch_of_its_own(tmp_path):
    from collectors import RunError
    from collectors.sources import open_runs

    def state(step, first_loss, start=1):  # a launch's state holds its whole history up to the checkpoint
        ck = tmp_path / f"checkpoint-{step}"
        ck.mkdir()  # as transformers saves it at a checkpoint: TrainerState.save_to_json
        TrainerState(log_history=[{"step": s, "loss": first_loss + s, "reward": 0.1 * s} for s in range(start, step + 1)],
                     global_step=step, max_steps=8, logging_steps=1).save_to_json(str(ck / "trainer_state.json"))

    state(4, 0.5)
    state(8, 0.5)  # the same launch, later checkpoint: its history begins as checkpoint-4's does
    state(6, 0.7)  # a launch from scratch into the same output_dir: a history of its own
    with pytest.raises(RunError, match="holds 2 separate launches"):
        TrlRun(tmp_path)
    first, second = open_runs(tmp_path)
    assert list(first.metrics["step"]) == list(range(1, 9)) and list(second.metrics["step"]) == list(range(1, 7))
    assert second.metrics["loss/total"].iloc[0] == pytest.approx(1.7)
    assert "one of 2 separate launches" in first.meta.notes[0] and "checkpoint-4, checkpoint-8" in first.meta.notes[0]
    # file times play no part (a copied folder has them all alike): one launch, however they are set
    import os
    import shutil

    shutil.rmtree(tmp_path / "checkpoint-6")
    os.utime(tmp_path / "checkpoint-4" / "trainer_state.json", (10**9, 10**9))
    run = TrlRun(tmp_path)
    assert list(run.metrics["step"]) == list(range(1, 9)) and not [p for p in run.problems if "launch" in str(p)]


def test_training_args_are_read_without_running_the_pickle(tmp_path):
    import pickle
    import zipfile
    from types import SimpleNamespace

    from collectors.meta import RunError
    from collectors.readers.trl.args import read_training_args

    class Evil:  # a tampered file: unpickling it for real would run `touch`
        def __reduce__(self):
            import os
            return (os.system, (f"touch {tmp_path / 'pwned'}",))

    args = SimpleNamespace(beta=0.1, hub_token="hf_secret", payload=Evil(), _n_gpu=1)
    f = tmp_path / "training_args.bin"
    with zipfile.ZipFile(f, "w") as z:
        z.writestr("training_args/data.pkl", pickle.dumps(args, protocol=2))
    config = read_training_args(f)
    assert not (tmp_path / "pwned").exists()
    assert config["beta"] == 0.1 and config["hub_token"] == "<redacted>" and "_n_gpu" not in config
    assert config["payload"].startswith("touch ")  # a call with one plain argument reads as that argument
    # the legacy (pre-zip) torch format: magic number, protocol, system info, then the object
    legacy = tmp_path / "legacy" / "training_args.bin"
    legacy.parent.mkdir()
    legacy.write_bytes(b"".join(pickle.dumps(x, protocol=2) for x in
                                (0x1950A86A20F9469CFC6C, 1001, {"protocol_version": 1001}, args)))
    assert read_training_args(legacy)["beta"] == 0.1
    f.write_bytes(b"PK\x03\x04 truncated")
    with pytest.raises(RunError, match="training_args.bin: not a readable training-arguments pickle"):
        read_training_args(f)


def test_import_collectors_loads_no_torch_or_transformers(tmp_path):
    code = ("import sys, collectors; from collectors.sources import _load_readers; _load_readers(); "
            "bad = [m for m in ('torch', 'transformers', 'trl', 'streamlit') if m in sys.modules]; "
            "print(bad); sys.exit(1 if bad else 0)")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_live_page_says_when_a_trl_folder_gets_new_steps(trl_run, monkeypatch):
    """The real TRL output on the dashboard's Live page: it says that steps arrive with checkpoints."""
    from streamlit.testing.v1 import AppTest

    from dashboard import data
    from dashboard.paths import ROOTS_ENV
    from dashboard.text import escape_md

    monkeypatch.setenv(ROOTS_ENV, str(trl_run))
    data.clear_caches()
    at = AppTest.from_file(str(REPO / "dashboard" / "app.py"), default_timeout=60)
    at.query_params["run"] = [f"{trl_run.name}/trl_out"]
    at.switch_page("views/live.py")
    at.run()
    data.clear_caches()
    assert not at.exception, [e.message for e in at.exception]
    captions = " ".join(str(c.value) for c in at.caption)
    assert escape_md("TRL writes trainer_state.json only when it saves a checkpoint (save_steps)") in captions
