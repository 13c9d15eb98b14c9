"""Failure scenarios: each fault switch and scenario checked by its mechanism on a few real steps."""

import math

import pytest
import torch

from collectors import load_run
from grpo_core import cli
from grpo_core.config import ConfigError, build_config, validate
from grpo_core.policy import token_logprobs
from grpo_core.rollout import collect
from grpo_core.scenarios import SCENARIOS, overrides_for
from grpo_core.train import Batch, optimizer_step, setup, train
from grpo_core.verifiers import VERIFIERS, resolve

torch.set_num_threads(1)

# docs/TEAM-CONTRACT.md, "Rule ids"
RULE_IDS = {"reward_flat", "reward_constant", "verifier_suspect", "zero_variance_groups", "sparse_reward",
            "low_diversity", "eval_diverges", "kl_clip_explode", "entropy_collapse", "no_learning",
            "first_step_ratio", "small_group", "length_drift", "truncation", "non_finite"}


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    return str(tmp_path_factory.getbasetemp() / "grpo_warm_start")  # shared with tests/trainer/test_grpo_train.py


def run_scenario(name, tmp_path, cache, steps=2, **sets):
    preset, overrides = overrides_for(name)
    overrides += [("steps", steps), ("out", str(tmp_path / name)), ("log.progress", False), ("eval_every", 0),
                  ("warm_start.cache_dir", cache), ("model.device", "cpu")]
    overrides += [(k.replace("__", "."), v) for k, v in sets.items()]
    result = train(build_config(preset, overrides=overrides))
    return result, load_run(result.run_dir)


def test_logprob_mismatch_first_step_deviation_is_100x_healthy(tmp_path, cache):
    _, healthy = run_scenario("healthy", tmp_path, cache)
    _, bf16 = run_scenario("logprob_mismatch", tmp_path, cache)
    dev_ok = healthy.metrics["policy/ratio_first_step_max_dev"].max()
    dev_bad = bf16.metrics["policy/ratio_first_step_max_dev"].max()
    assert dev_bad >= 100 * max(dev_ok, 1e-7), (dev_ok, dev_bad)
    gap_ok = healthy.metrics["policy/rollout_logprob_abs_diff"].mean()
    assert bf16.metrics["policy/rollout_logprob_abs_diff"].mean() >= 100 * max(gap_ok, 1e-8)


def test_broken_verifier_rejects_what_the_true_one_accepts_and_accepts_no_common_mistake():
    true, broken = resolve("exact"), resolve("broken_padded_exact")
    assert true("7", "7").passed and not broken("7", "7").passed
    assert true(" 12\n", "12").passed and not broken("12", "12").passed
    for wrong in ["8", "71", "", "6", "7+1", "1"]:  # off-by-one and habitual tiny-model mistakes
        assert not broken(wrong, "7").passed


def test_broken_verifier_scenario_scores_correct_samples_zero_and_eval_stays_true(tmp_path, cache):
    _, r = run_scenario("broken_verifier", tmp_path, cache, steps=2, eval_every=1)
    s = r.samples()
    answers = s["prompt"].str.rstrip("=").str.split("+").map(lambda ab: str(int(ab[0]) + int(ab[1])))
    right = s["completion"].str.strip() == answers
    assert right.mean() > 0.2  # the warm-started model does answer correctly ...
    assert (s.loc[right, "reward"] == 0).all()  # ... and is never paid for it
    assert r.metrics["groups/all_fail_frac"].iloc[0] == 1.0
    assert r.metrics["eval/pass_rate"].iloc[0] > 0.2  # eval keeps the task's exact verifier
    assert r.meta.info["reward_verifier"] == "broken_padded_exact"


def test_sign_flip_lowers_the_logprob_of_a_positive_advantage_response(tmp_path):
    def delta(flip: bool) -> float:
        cfg = build_config(overrides=[("warm_start.enabled", False), ("algo.kl_mode", "none"),
                                      ("log.track_kl_ref", False), ("optim.lr", 1e-3), ("faults.sign_flip", flip)])
        tr = setup(cfg)
        problems = tr.task.sample(tr.rng, 1)
        ro = collect(tr.net, tr.tokenizer, tr.task, problems, 2, cfg.rollout, tr.device, tr.gen)
        with torch.no_grad():
            before = token_logprobs(tr.net, ro.ids, ro.mask, ro.n)[0].sum(1)
        batch = Batch(ro.ids, ro.mask, ro.completion_mask, torch.tensor([1.0, 0.0]), ro.rollout_logp,
                      ro.rollout_logp, None, 1)
        optimizer_step(tr, batch, torch.arange(2), first=True, step=0)
        with torch.no_grad():
            after = token_logprobs(tr.net, ro.ids, ro.mask, ro.n)[0].sum(1)
        return (after[0] - before[0]).item()

    assert delta(False) > 0 and delta(True) < 0


def test_detached_policy_term_gives_zero_gradient_and_an_ordinary_loss(tmp_path, cache):
    _, bad = run_scenario("detached_advantage", tmp_path, cache, steps=3)
    _, ok = run_scenario("healthy", tmp_path, cache, steps=3)
    assert bad.metrics["optim/grad_norm"].max() < 1e-6
    assert ok.metrics["optim/grad_norm"].min() > 1e-2
    assert bad.metrics["loss/total"].map(math.isfinite).all()
    assert bad.metrics["policy/ratio_mean"].sub(1).abs().max() < 1e-5  # policy unchanged between steps


def test_length_bonus_pays_for_trailing_text_that_exact_rejects(tmp_path, cache):
    bonus, exact = resolve("length_bonus"), resolve("exact")
    assert bonus("7", "7").reward == 1.0 and bonus("7xx", "7").reward == 1.5 and exact("7xx", "7").reward == 0
    assert bonus("7xxxxxxx", "7").reward == 2.0  # capped at 4 extra characters
    assert not bonus("8", "7").passed and bonus("8xxx", "7").reward == 0
    cfg = build_config(overrides=[("warm_start.enabled", False), ("faults.reward_verifier", "length_bonus")])
    tr = setup(cfg)
    assert tr.task.verifier_name == "length_bonus" and tr.eval_task.verifier_name == "exact"


def test_faults_are_off_by_default_and_bad_reward_verifier_is_one_line():
    cfg = build_config()
    assert (cfg.faults.sign_flip, cfg.faults.detach_policy_term, cfg.faults.reward_verifier) == (False, False, "")
    bad = build_config(overrides=[("faults.reward_verifier", "exactt")])
    with pytest.raises(ConfigError, match=r"faults.reward_verifier: unknown verifier 'exactt' \(did you mean 'exact'"):
        validate(bad)


def test_every_scenario_builds_and_names_contract_rules():
    assert {"healthy", "broken_verifier", "too_hard", "too_easy", "low_temperature", "lr_too_high",
            "stale_rollouts", "logprob_mismatch", "sign_flip", "detached_advantage", "entropy_collapse",
            "length_hacking", "small_group"} <= set(SCENARIOS)
    for name in SCENARIOS:
        s = SCENARIOS[name]
        preset, overrides = overrides_for(name)
        validate(build_config(preset, overrides=overrides))
        for rule in (*s.expected_rules, *s.allowed_rules):
            assert rule in RULE_IDS or rule.startswith("config_"), (name, rule)
        assert not set(s.expected_rules) & set(s.allowed_rules)
        assert set(s.allowed_rules.values()) <= {"info", "warning"}, name  # only expected rules may be critical
    assert SCENARIOS["healthy"].expected_rules == () and "broken_padded_exact" in VERIFIERS


def test_cli_scenario_flags(capsys):
    assert cli.main(["--list-scenarios"]) == 0
    out = capsys.readouterr().out
    assert "sign_flip" in out and "small_group" in out
    assert cli.main(["--scenario", "small_group", "--set", "steps=5", "--print-config"]) == 0
    out = capsys.readouterr().out
    assert "rollout.group_size = 2" in out and "steps = 5" in out and "name = 'small_group'" in out
    assert cli.main(["--scenario", "sign_flp", "--print-config"]) == 2
    assert "unknown scenario 'sign_flp' (did you mean 'sign_flip'?)" in capsys.readouterr().err
