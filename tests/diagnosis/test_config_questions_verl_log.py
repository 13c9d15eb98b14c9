"""The KL-placement question (notes, section 6, question 4) for a verl run whose config does not say where the KL
went (verl before 0.4 had no algorithm.use_kl_in_reward, before 0.2 no actor.use_kl_loss: such a config has only
algorithm.kl_ctrl.kl_coef), answered from its log (ray_trainer.apply_kl_penalty alone logs critic/kl_coeff, the
actor logs actor/kl_coef only with the KL loss) or, where the log does not say, from the config's shape: before 0.4
fit() subtracts the KL from the reward whenever actor.use_kl_loss is off. Console logs written as verl writes them,
and the real runs."""

from __future__ import annotations

from pprint import pformat

import pytest
from fixtures.verl_logs import console_line
from helpers.paths import REAL_RUNS
from helpers.zh_words import english_left

from collectors import open_run
from dashboard.diagnosis import diagnose, i18n
from dashboard.diagnosis.rules.config_questions import answer_questions

# the algorithm section of an early verl's printed config (verl_qwen05b_gsm8k_ppo's, shortened): no KL flag at all
OLD_CONFIG = {"algorithm": {"gamma": 1.0, "lam": 1.0, "adv_estimator": "grpo", "kl_penalty": "kl",
                            "kl_ctrl": {"type": "fixed", "kl_coef": 0.001}},
              "actor_rollout_ref": {"actor": {"ppo_epochs": 1, "ppo_mini_batch_size": 64},
                                    "rollout": {"name": "vllm", "n": 5}},
              "data": {"train_batch_size": 64}}


def _run(tmp_path, metrics: dict, config=OLD_CONFIG):
    tmp_path.mkdir(parents=True, exist_ok=True)
    lines = [f"(TaskRunner pid=7) {line}" for line in pformat(config).splitlines()]
    body = "".join(console_line(s, {"critic/score/mean": 0.1 * s, **metrics}) for s in range(1, 4))
    (tmp_path / "main_ppo.log").write_text("\n".join(lines) + "\n" + body)
    return open_run(tmp_path)


def _q4(run):
    return diagnose(run).config_answers[3]


def _zh_clean(answer) -> None:
    zh = i18n.localise_answer(answer, "zh")
    assert zh.answer != answer.answer and english_left(zh.answer, set()) == [], zh.answer
    assert english_left(" ".join(zh.keys), set()) == [], zh.keys  # "log: NAME" is 日志：NAME


def test_reward_kl_read_from_critic_kl_coeff(tmp_path):
    a = _q4(_run(tmp_path, {"critic/kl": 0.02, "critic/kl_coeff": 0.001}))
    assert a.answer.startswith("folded into the reward (coef 0.001); the log has verl's KL coefficient in the reward")
    assert a.keys == ("log: policy/kl_coef", "algorithm.kl_ctrl.kl_coef", "algorithm.kl_ctrl.type")
    _zh_clean(a)
    assert i18n.localise_answer(a, "zh").keys == ("日志：policy/kl_coef", "algorithm.kl_ctrl.kl_coef",
                                                  "algorithm.kl_ctrl.type")


BEFORE_0_4 = ("verl before 0.4 (algorithm.kl_ctrl and no algorithm.use_kl_in_reward in its config) subtracts the KL "
              "from the reward whenever actor.use_kl_loss is off")


def test_a_verl_0_2_config_without_the_coefficient_logged_has_the_kl_in_the_reward(tmp_path):
    """verl 0.2 (issue 39): use_kl_loss false, no use_kl_in_reward, the coefficient not in the log: its fit() called
    apply_kl_penalty all the same (reward = score - kl_coef * KL), so not "not used"."""
    config = {"algorithm": OLD_CONFIG["algorithm"],
              "actor_rollout_ref": {"actor": {"use_kl_loss": False, "kl_loss_coef": 0.001}}}
    run = _run(tmp_path, {"critic/kl": 0.02}, config)
    a = _q4(run)
    assert a.answer == f"folded into the reward (coef 0.001); {BEFORE_0_4}"
    _zh_clean(a)
    assert i18n.localise_answer(a, "zh").answer.startswith("并入 reward（系数 0.001）；0.4 之前的 verl")
    assert answer_questions(run.meta.config, "verl")[3].answer == a.answer  # the config alone says it
    # verl 0.1's config has no use_kl_loss at all: the same
    assert _q4(_run(tmp_path / "v01", {"critic/kl": 0.02})).answer == a.answer


def test_an_old_verl_with_the_kl_loss_on_has_it_in_the_loss_only(tmp_path):
    config = {"algorithm": dict(OLD_CONFIG["algorithm"], kl_ctrl={"type": "adaptive", "kl_coef": 0.001,
                                                                  "target_kl": 0.1, "horizon": 10000}),
              "actor_rollout_ref": {"actor": {"use_kl_loss": True, "kl_loss_coef": 0.002, "kl_loss_type": "low_var_kl"}}}
    assert _q4(_run(tmp_path / "loss", {}, config)).answer == "added to the loss (low_var_kl, coef 0.002)"
    config["actor_rollout_ref"]["actor"]["use_kl_loss"] = False
    a = _q4(_run(tmp_path / "adaptive", {}, config))
    assert a.answer == f"folded into the reward (adaptive coef from 0.001, target 0.1); {BEFORE_0_4}"
    _zh_clean(a)


def test_a_config_that_does_not_say_and_a_log_without_the_coefficient_stay_unknown(tmp_path):
    config = {"algorithm": {"adv_estimator": "grpo"}, "actor_rollout_ref": OLD_CONFIG["actor_rollout_ref"]}
    run = _run(tmp_path, {"critic/kl": 0.02}, config)  # no kl_ctrl, no flag, no coefficient logged
    assert _q4(run).answer == "unknown"
    assert answer_questions(run.meta.config, "verl")[3].answer == "unknown"


def test_a_verl_0_4_config_says_it_with_its_flag(tmp_path):
    config = {"algorithm": dict(OLD_CONFIG["algorithm"], use_kl_in_reward=True),
              "actor_rollout_ref": {"actor": {"use_kl_loss": False}}}
    a = _q4(_run(tmp_path, {"actor/reward_kl_penalty": 0.02, "actor/reward_kl_penalty_coeff": 0.001}, config))
    assert a.answer == "folded into the reward (coef 0.001)"
    config["algorithm"]["use_kl_in_reward"] = False  # 0.4 on: off means off, whatever kl_ctrl holds
    assert _q4(_run(tmp_path / "off", {}, config)).answer == "not used"


def test_loss_kl_read_from_actor_kl_coef_with_its_logged_coefficient(tmp_path):
    a = _q4(_run(tmp_path, {"actor/kl_loss": 0.01, "actor/kl_coef": 0.002}))
    assert a.answer == ("added to the loss (coef 0.002); the log has actor/kl_coef, which verl logs only when it "
                        "adds the KL loss")
    _zh_clean(a)


def test_both_logged_is_counted_twice_and_a_zero_coefficient_is_no_kl(tmp_path):
    both = _q4(_run(tmp_path / "b", {"critic/kl_coeff": 0.001, "actor/kl_coef": 0.001}))
    assert both.answer.startswith("both in the loss and in the reward: counted twice; ")
    # verl's apply_kl_penalty logs beta 0 when there is no reference log-prob: the reward got no KL
    zero = _q4(_run(tmp_path / "z", {"critic/kl": 0.0, "critic/kl_coeff": 0.0}))
    assert zero.answer == "not used: verl logged its KL coefficient in the reward as 0 at every step"
    _zh_clean(zero)


def test_the_config_flags_win_over_the_log(tmp_path):
    config = {"algorithm": dict(OLD_CONFIG["algorithm"], use_kl_in_reward=False),
              "actor_rollout_ref": {"actor": {"use_kl_loss": True, "kl_loss_coef": 0.001, "kl_loss_type": "low_var_kl"}}}
    a = _q4(_run(tmp_path, {"critic/kl_coeff": 0.001}, config))
    assert a.answer == "added to the loss (low_var_kl, coef 0.001)" and not any(k.startswith("log: ") for k in a.keys)


def test_another_sources_reader_is_picked_by_the_config_not_by_a_metric():
    import pandas as pd

    log = pd.DataFrame({"step": [1, 2], "policy/kl_coef": [0.04, 0.04]})
    trl = {"beta": 0.04, "num_generations": 8, "loss_type": "grpo"}  # a TRL config imported from wandb
    a = answer_questions(trl, "wandb", log)[3]
    assert "log: policy/kl_coef" not in a.keys and "critic/kl_coeff" not in a.answer


OLD_VERL_RUNS = ("verl_gemma2b", "verl_q05b_r256", "verl_qwen05b_gsm8k_ppo")


@pytest.mark.skipif(not REAL_RUNS.is_dir(), reason="the real runs are not on this machine")
@pytest.mark.parametrize("name", OLD_VERL_RUNS)
def test_real_early_verl_runs_fold_the_kl_into_the_reward(name):
    run = open_run(REAL_RUNS / name)
    assert "actor_rollout_ref.actor.use_kl_loss" not in run.meta.config  # the config does not say
    a = _q4(run)
    assert a.answer.startswith("folded into the reward (coef 0.001); the log has"), a.answer
    _zh_clean(a)


@pytest.mark.skipif(not REAL_RUNS.is_dir(), reason="the real runs are not on this machine")
def test_real_verl_run_with_the_flags_keeps_its_config_answer():
    a = _q4(open_run(REAL_RUNS / "verl_grpo_q05b_g2"))
    assert a.answer == "added to the loss (low_var_kl, coef 0.001)"


def test_an_old_verl_config_is_judged_to_have_the_kl_in_one_place(tmp_path):
    """config_kl_twice: before 0.4 verl's KL goes to the reward or the loss, never both: judged, no finding
    (it was "not judged: the config does not say both ...")."""
    d = diagnose(_run(tmp_path, {"critic/kl": 0.02}))
    assert "config_kl_twice" not in [n.rule_id for n in d.not_judged]
    assert "config_kl_twice" not in [f.rule_id for f in d.findings]
