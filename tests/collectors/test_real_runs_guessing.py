"""The real runs that did not open, or opened read wrong, before the table reader guessed (issue 36): each opens
with its reward, eval, group and launch series where the files hold them. Figures read from the files by hand
(SOURCE.txt of each run). Skipped when ../shared/fixtures/real-runs is absent."""

from __future__ import annotations

import math

import pytest

from collectors.sources import open_runs
from dashboard.diagnosis.accuracy.corpora import REAL_RUNS

pytestmark = pytest.mark.skipif(not (REAL_RUNS / "labels.json").is_file(), reason=f"{REAL_RUNS} is absent")


def _one(name: str):
    runs = open_runs(str(REAL_RUNS / name))
    assert len(runs) == 1, [r.meta.name for r in runs]
    return runs[0], " | ".join(str(p) for p in runs[0].problems)


def test_cs336_records_split_into_train_and_eval_series():
    run, notes = _one("cs336_math_qwen15b_lr4e5")
    m = run.metrics.set_index("step")
    assert run.meta.source == "generic" and m.index.min() == 0 and m.index.max() == 368
    assert m.loc[1, "reward/mean"] == pytest.approx(0.01953125)  # the rollout record of step 1
    assert m.loc[1, "policy/entropy"] == pytest.approx(0.953125)  # its train record, same step
    assert m["eval/reward_mean"].notna().sum() == 19  # eval every 20 steps, 0 .. 360
    assert m.loc[0, "eval/reward_mean"] == pytest.approx(0.029384, abs=1e-6)
    assert m.loc[360, "eval/reward_mean"] == pytest.approx(0.735542, abs=1e-6)
    assert "guessed step: `grpo_step`" in notes and "guessed eval rows: `type`" in notes
    assert "more than once" not in notes


def test_roll_metrics_open_with_their_step_and_pass_rate():
    run, notes = _one("roll_rdan_qwen3_4b")
    m = run.metrics
    assert len(m) == 430 and m["step"].tolist() == list(range(1, 431))
    assert m["reward/pass_rate"].iloc[0] == pytest.approx(0.4140625)
    assert (m["reward/mean"] == m["reward/pass_rate"]).all()
    assert "`system/step`" in notes and "reward/hard_pass_rate" in notes


def test_recgrpo_eval_rows_no_longer_replace_train_rows():
    run, notes = _one("recgrpo_uncapped")
    m = run.metrics.set_index("step")
    assert len(m) == 140 and m.loc[200, "reward/mean"] == pytest.approx(0.129071)
    assert m["eval/pass_rate"].dropna().tolist() == pytest.approx([0.04225, 0.04025, 0.03425, 0.03775, 0.03325, 0.0325])
    assert "more than once" not in notes


def test_rookworld_launches_are_kept_apart():
    runs = open_runs(str(REAL_RUNS / "custom_rookworld_multilaunch"))
    assert [len(r.metrics) for r in runs] == [3, 5, 642, 595, 165]
    assert all(r.metrics["step"].iloc[0] == 1 for r in runs)


def test_a_trl_console_in_markdown_opens():
    run, _ = _one("trl_dapo_vl3b_entropy_collapse")
    m = run.metrics
    assert run.meta.source == "trl-console" and len(m) == 49
    assert m["step"].iloc[0] == 10 and m["step"].iloc[-1] == 490
    assert m["completions/len_mean"].iloc[0] == pytest.approx(53.35)


def test_per_response_digits_give_the_tied_groups():
    run, _ = _one("custom_math_g2_zeroloss")
    z = run.metrics["groups/zero_std_frac"]
    assert len(z) == 200 and z.sum() == 184  # 182 all-wrong + 2 all-right groups of G = 2
    assert run.metrics["groups/all_fail_frac"].sum() == 182
    assert not math.isnan(run.metrics["reward/pass_rate"].iloc[0])


def test_roll_rdan_advantage_series_are_the_adv_columns():
    """RDAN-GRPO logs `advantage/zero_rate` = mean(|A| <= 1e-8) over the step's 512 responses: adv/zero_frac's own
    test, so it is that column (not groups/zero_std_frac). Step 1: 0.76171875 = 390 / 512 in the file."""
    run, _ = _one("roll_rdan_qwen3_4b")
    m = run.metrics
    assert m["adv/zero_frac"].iloc[0] == pytest.approx(390 / 512)
    assert m["adv/std"].iloc[0] == pytest.approx(0.48813676834106445)
    assert "groups/zero_std_frac" not in m and "advantage/zero_rate" not in m
