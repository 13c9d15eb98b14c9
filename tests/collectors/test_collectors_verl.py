"""verl reader: file-logger JSONL, console lines and rollout dumps written as verl's own code writes them
(tests/fixtures/verl_logs.py; verl's stack cannot be installed here), the real console log from
../shared/fixtures/verl/ when present."""

from __future__ import annotations

import math

import pytest
from fixtures.verl_logs import console_line, file_logger_line, generations_jsonl  # tests/ is on sys.path
from helpers.paths import REPO

from collectors.readers.verl.console import VerlRun
from collectors.sources import detect_source, open_run

REAL_LOG = REPO.parent / "shared" / "fixtures" / "verl" / "gemma-2-2b-it-ppo-gsm8k.log"


def _line(step, **data):
    return file_logger_line(step, data)  # verl's FileLogger: orjson, NaN written as null


def test_jsonl_maps_keys_nulls_and_live_refresh(tmp_path):
    f = tmp_path / "metrics.jsonl"
    f.write_text(_line(1, **{"critic/score/mean": 0.5, "actor/entropy": 1.2, "actor/ppo_kl": math.nan, "mine/x": 3})
                 + _line(2, **{"critic/score/mean": 0.6, "actor/entropy": 1.1, "actor/ppo_kl": 0.01}))
    run = open_run(f)
    assert isinstance(run, VerlRun) and detect_source(tmp_path) == "verl"
    m = run.metrics
    assert list(m["step"]) == [1, 2]
    assert list(m["reward/mean"]) == [0.5, 0.6]
    assert math.isnan(m["policy/approx_kl_old"].iloc[0]) and m["policy/approx_kl_old"].iloc[1] == 0.01
    assert m["mine/x"].iloc[0] == 3
    with f.open("a") as fh:  # a live append, then half a line
        fh.write(_line(3, **{"critic/score/mean": 0.7}) + '{"step": 4, "da')
    assert run.refresh() == 1 and run.last_step == 3
    assert any("line 4 is incomplete" in str(p) for p in run.problems)
    with f.open("a") as fh:
        fh.write('ta": {"critic/score/mean": 0.8}}\n')
    assert run.refresh() == 1 and run.metrics["reward/mean"].iloc[-1] == 0.8
    assert not any("incomplete" in str(p) for p in run.problems)


def test_restart_rewrites_file_and_bad_lines_are_named(tmp_path):
    f = tmp_path / "metrics.jsonl"
    f.write_text("".join(_line(s, **{"critic/score/mean": s}) for s in range(1, 30)))
    run = VerlRun(f)
    assert run.last_step == 29
    f.write_text(_line(1, **{"critic/score/mean": 9.0}) + "{not json\n"
                 + _line(2, **{"critic/score/mean": "abc"}))
    run.refresh()
    m = run.metrics
    assert list(m["step"]) == [1, 2] and m["reward/mean"].iloc[0] == 9.0 and math.isnan(m["reward/mean"].iloc[1])
    msgs = [str(p) for p in run.problems]
    assert any("metrics.jsonl" in x and "rewritten" in x for x in msgs)
    assert any("line 2: not valid JSON" in x for x in msgs)
    assert any("line 3: non-numeric critic/score/mean" in x for x in msgs)


def test_console_lines_with_ray_prefix_and_scaled_keys(tmp_path):
    f = tmp_path / "train.log"
    f.write_text("loading model...\n"  # Ray colours the actor prefix on a terminal; the driver prints none
                 + console_line(0, {"test_score/openai/gsm8k": 0.521}, actor="\x1b[36m(TaskRunner pid=123)\x1b[0m ")
                 + console_line(0, {"actor/lr(1e-4)": 0.01, "actor/entropy_loss": 0.419, "critic/score/mean": 0.4,
                                    "training/note": "text, left out by verl"}, actor="(TaskRunner pid=123) ")
                 + console_line(1, {"actor/pg_clipfrac": 0.003, "critic/score/mean": 0.41}, actor=None))
    run = open_run(tmp_path)
    m = run.metrics
    assert list(m["step"]) == [0, 1]
    assert m["optim/lr"].iloc[0] == pytest.approx(1e-6)
    assert m["policy/entropy"].iloc[0] == 0.419
    assert m["eval/reward_mean"].iloc[0] == 0.521 and m["reward/mean"].iloc[0] == 0.4
    assert m["policy/clipfrac"].iloc[1] == 0.003


@pytest.mark.skipif(not REAL_LOG.exists(), reason="real verl log not present in ../shared/fixtures/verl/")
def test_real_verl_console_log():
    run = open_run(REAL_LOG)
    m = run.metrics
    assert len(m) > 50 and m["step"].is_monotonic_increasing
    # the log ends without a newline; it has not changed for long, so its last line (step 105) is read
    assert m["step"].iloc[-1] == 105
    # the one note: the columns logging one value throughout, kept (a fixed lr is a reading, not a placeholder)
    (note,) = run.problems
    assert note.message.startswith("the same value on every row, kept as measured")
    assert "actor/lr (optim/lr) = 1e-06" in note.message and "critic/kl_coeff (policy/kl_coef) = 0.001" in note.message
    assert run.constant["policy/kl_coef"] == 0.001 and "reward/mean" not in run.constant
    for col in ("reward/mean", "policy/entropy", "policy/clipfrac", "policy/approx_kl_old", "optim/lr"):
        assert m[col].notna().sum() > 50, col
    assert m["eval/reward_mean"].notna().any()
    assert m["optim/lr"].dropna().iloc[0] == pytest.approx(1e-6)
    # this log's printed config is cut mid-dict (lines lost around the reward_model block), so the
    # config comes from the echoed `python3 -m verl.trainer.main_ppo ...` overrides
    assert "command-line overrides only" in run.meta.info["config_source"]
    c = run.meta.config
    assert c["algorithm.kl_ctrl.kl_coef"] == 0.001 and c["actor_rollout_ref.actor.optim.lr"] == 1e-6
    assert c["data.train_batch_size"] == 512 and c["critic.model.enable_gradient_checkpointing"] is False


VERL_CONFIG = {"algorithm": {"adv_estimator": "grpo", "norm_adv_by_std_in_grpo": True, "use_kl_in_reward": False,
                             "kl_ctrl": {"kl_coef": 0.001, "type": "fixed"}},
               "actor_rollout_ref": {"actor": {"clip_ratio": 0.2, "use_kl_loss": True, "kl_loss_coef": 0.001,
                                               "kl_loss_type": "low_var_kl", "loss_agg_mode": "token-mean",
                                               "ppo_epochs": 1, "ppo_mini_batch_size": 256},
                                     "rollout": {"n": 5, "name": "vllm", "temperature": 1.0}},
               "trainer": {"logger": ["console"], "total_epochs": 15, "project_name": "p"}}


def test_console_log_printed_config_is_read_from_its_own_process(tmp_path):
    from pprint import pformat

    lines = [f"\x1b[36m(TaskRunner pid=7)\x1b[0m {line}" for line in pformat(VERL_CONFIG).splitlines()]
    lines.insert(3, "(WorkerDict pid=9) Flash Attention {only} supports fp16")  # another process, between
    lines[5] += "(WorkerDict pid=9) glued without a newline {"  # and glued onto a config line
    (tmp_path / "main_ppo.log").write_text("\n".join(lines) + "\n" + console_line(1, {"critic/score/mean": 0.5}))
    run = open_run(tmp_path)
    c = run.meta.config
    assert run.meta.info["config_source"] == "main_ppo.log"
    assert c["algorithm.adv_estimator"] == "grpo" and c["actor_rollout_ref.rollout.n"] == 5
    assert c["actor_rollout_ref.actor.loss_agg_mode"] == "token-mean" and c["trainer.logger"] == ["console"]
    from dashboard.diagnosis import diagnose

    unjudged = {n.rule_id for n in diagnose(run).not_judged}
    assert not {"config_kl_twice", "config_small_group_adv", "config_many_reuses"} & unjudged


def test_hydra_config_beside_the_logs_wins_and_bad_yaml_is_named(tmp_path):
    import yaml

    (tmp_path / ".hydra").mkdir()
    (tmp_path / ".hydra" / "config.yaml").write_text(yaml.safe_dump(VERL_CONFIG))
    (tmp_path / "main_ppo.log").write_text(console_line(1, {"critic/score/mean": 0.5}))
    run = open_run(tmp_path)
    assert run.meta.config["algorithm.kl_ctrl.kl_coef"] == 0.001
    assert run.meta.info["config_source"].endswith(".hydra/config.yaml")
    (tmp_path / ".hydra" / "config.yaml").write_text("algorithm: {adv_estimator: grpo\n")
    run = open_run(tmp_path)
    assert run.meta.config == {} and len(run.metrics) == 1
    assert any(p.file == ".hydra/config.yaml" and "not readable YAML" in p.message for p in run.problems)


def test_rollout_dumps_give_samples_and_zero_std_groups(tmp_path):
    (tmp_path / "metrics.jsonl").write_text(_line(1, **{"critic/score/mean": 0.5}))
    dumps = tmp_path / "rollout"
    dumps.mkdir()
    (dumps / "1.jsonl").write_text(generations_jsonl(1, ["p1", "p1", "p2", "p2"], ["a", "b", "c", "d"],
                                                     [1.0, 1.0, 0.0, 1.0], gts=["2", "2", "4", "4"]) + "{broken\n")
    run = open_run(tmp_path)
    m = run.metrics
    assert m["reward/mean"].iloc[0] == 0.5
    assert m["groups/zero_std_frac"].iloc[0] == 0.5  # p1 all equal, p2 not
    assert m["groups/reward_std_mean"].iloc[0] == pytest.approx(0.25)  # (0 + 0.5) / 2
    s = run.samples()
    assert list(s["group"]) == [0, 0, 1, 1] and list(s["sample"]) == [0, 1, 0, 1]
    assert any("1.jsonl" in str(p) and "line 5" in str(p) for p in run.problems)


def test_empty_folder(tmp_path):
    run = VerlRun(tmp_path)
    assert len(run.metrics) == 0 and "no verl" in str(run.problems[0])


def test_a_last_line_without_newline_waits_while_fresh_and_is_read_once_settled(tmp_path):
    import os
    import time

    f = tmp_path / "train.jsonl"
    f.write_text(_line(1, **{"critic/score/mean": 0.1}) + _line(2, **{"critic/score/mean": 0.2}).rstrip("\n"))
    run = open_run(f)
    assert list(run.metrics["step"]) == [1] and "line 2 is incomplete; waiting for the rest" in str(run.problems)
    old = time.time() - 60
    os.utime(f, (old, old))  # a minute without a write: the writer is done with that line
    assert run.refresh() == 1 and list(run.metrics["step"]) == [1, 2] and run.problems == []
    with f.open("a") as fh:  # and the offset is right: a later line is read once, nothing is reread
        fh.write("\n" + _line(3, **{"critic/score/mean": 0.3}))
    assert run.refresh() == 1 and list(run.metrics["step"]) == [1, 2, 3] and run.problems == []


def test_console_found_after_hundreds_of_kb_of_ray_output(tmp_path):
    f = tmp_path / "main_ppo.log"
    noise = "".join(f"(WorkerDict pid={i % 7}) INFO loading shard {i}: step: warm-up\n" for i in range(6000))
    f.write_text(noise + console_line(1, {"critic/score/mean": 0.5, "rollout/too_bad_sample_ratio": 0.25,
                                          "actor/pg_clipfrac_lower": 0.001, "critic/kl": 0.02,
                                          "critic/kl_coeff": 0.001}, actor="(TaskRunner pid=3) "))
    assert f.stat().st_size > 300_000 and detect_source(f) == "verl"
    m = open_run(f).metrics
    assert m["groups/all_fail_frac"].iloc[0] == 0.25 and m["policy/clipfrac_dual"].iloc[0] == 0.001
    assert m["policy/kl_ref"].iloc[0] == 0.02 and m["policy/kl_coef"].iloc[0] == 0.001
