"""The text-format runs of ../shared/fixtures/real-runs/ (published by other people, read as a user would,
by pointing at their folder): reader, step count (labels.json `reader`), mapped columns, reader notes.
Skipped when ../shared is absent."""

from __future__ import annotations

import json

import pytest
from helpers.paths import REPO

from collectors.sources import open_run

REAL = REPO.parent / "shared" / "fixtures" / "real-runs"
pytestmark = pytest.mark.skipif(not (REAL / "labels.json").is_file(), reason="../shared/fixtures/real-runs absent")


def labelled_steps(name: str) -> int | None:
    return json.loads((REAL / "labels.json").read_text())["runs"][name]["reader"].get("steps")


def notes(run) -> str:
    return " | ".join(map(str, run.problems))


@pytest.fixture(scope="module")
def runs():
    cache: dict[str, object] = {}

    def get(name: str):
        if name not in cache:
            cache[name] = open_run(REAL / name)
        return cache[name]

    return get


@pytest.mark.parametrize("name,source,columns", [
    ("trl_console_qwen9b_gsm8k", "trl-console", ["reward/mean", "reward/std", "completions/len_mean", "policy/kl_ref",
                                                 "loss/total", "optim/lr", "optim/grad_norm"]),
    ("trl_console_finqa_agent", "trl-console", ["reward/mean", "groups/zero_std_frac", "completions/len_mean",
                                                "completions/truncated_frac", "policy/entropy", "optim/grad_norm"]),
    ("trl_console_gsm8k_saturating", "trl-console", ["reward/mean", "groups/zero_std_frac", "policy/kl_ref",
                                                     "policy/entropy", "completions/len_max"]),
    ("custom_log_minimind", "kvtext", ["reward/mean", "policy/kl_ref", "adv/mean", "adv/std", "loss/policy",
                                       "completions/len_mean", "optim/lr"]),
    ("custom_jsonl_countdown", "generic", ["reward/mean", "reward/pass_rate", "groups/zero_std_frac",
                                           "completions/len_mean", "completions/truncated_frac"]),
    ("verl_gui_agent_2steps", "verl", ["reward/mean", "groups/all_fail_frac", "groups/all_pass_frac",
                                       "completions/truncated_frac", "policy/clipfrac_dual", "policy/entropy"]),
    ("verl_qwen05b_gsm8k_ppo", "verl", ["reward/mean", "policy/kl_ref", "policy/kl_coef", "policy/entropy",
                                        "optim/lr", "eval/reward_mean"]),
])
def test_opens_with_its_steps_and_canonical_columns(runs, name, source, columns):
    run = runs(name)
    m = run.metrics
    assert run.meta.source == source
    if (steps := labelled_steps(name)) is not None:
        assert len(m) == steps, notes(run)
    assert m["step"].is_monotonic_increasing and m["step"].is_unique
    for col in columns:
        assert m[col].notna().any(), (col, notes(run))


def test_trl_console_steps_come_from_the_bars(runs):
    sat = runs("trl_console_gsm8k_saturating").metrics  # 200 dicts over max_steps 1000: logging every 5
    assert list(sat["step"][:3]) == [5, 10, 15] and sat["step"].iloc[-1] == 1000
    for name in ("trl_console_qwen9b_gsm8k", "trl_console_finqa_agent", "trl_console_gsm8k_saturating"):
        run = runs(name)
        assert "progress bar's N/M counter" in notes(run)
        assert "train_runtime" in run.meta.info["train_summary"] and run.meta.status == "finished"
    q = runs("trl_console_qwen9b_gsm8k").metrics  # older TRL printed strings: '0.125'
    assert q["reward/mean"].iloc[0] == 0.125 and q["completions/len_mean"].iloc[0] == 256


def test_countdown_map_matches_the_labels_and_zero_placeholders_are_not_measured(runs):
    run = runs("custom_jsonl_countdown")
    m = run.metrics
    wanted = json.loads((REAL / "labels.json").read_text())["runs"]["custom_jsonl_countdown"]["reader"]["map"]
    first = {"mean_reward": 0.93828125, "frac_reward_zero_std": 0.25, "avg_gen_tokens": 503.55, "accuracy": 0.65}
    for theirs, value in first.items():
        assert m[wanted[theirs]].iloc[0] == value
    # compute_entropy false and kl_coeff 0.0 in its config: both logged as 0.0 on every row
    assert {wanted["entropy"], wanted["approx_kl"]} == set(run.not_measured)
    assert wanted["entropy"] not in m and "not measured" in notes(run)
    assert m["completions/truncated_frac"].iloc[0] == 5 / 20  # truncated_count / rollout_count
    assert run.meta.config["group_size"] == 5 and run.meta.config["kl_coeff"] == 0.0


def test_minimind_steps_from_the_counter(runs):
    run = runs("custom_log_minimind")
    m = run.metrics
    assert list(m["step"][:2]) == [1, 2] and m["step"].iloc[-1] == 9751
    assert m["reward/mean"].iloc[0] == -2.3041 and m["completions/len_mean"].iloc[0] == 271.38
    assert "(i/N)` counter" in notes(run)


def test_verl_first_step_after_200_kb_of_ray_output(runs):
    assert (REAL / "verl_gui_agent_2steps" / "main_ppo.log").read_bytes().find(b"step:1 -") > 200_000
    m = runs("verl_gui_agent_2steps").metrics
    assert m["groups/all_fail_frac"].iloc[0] == pytest.approx(0.6041666666666666)
    v = runs("verl_qwen05b_gsm8k_ppo").metrics
    assert v["optim/lr"].iloc[0] == pytest.approx(1e-6)  # actor/lr(1e-4):0.010
    assert v["policy/kl_coef"].iloc[0] == 0.001 and v["step"].iloc[0] == 0
