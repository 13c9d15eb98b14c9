"""The verdict's order and numbers (issue 39, items 3-5): the most severe finding leads and the findings it
explains follow; the reward's levels come with the steps of their windows; a one-step range is "step 10"; a young
live run whose reward test holds a learning-sized rise is "too early to tell". Numbers worked by hand here, on runs
written with the real RunWriter and on a real published verl run."""

from __future__ import annotations

import numpy as np
import pytest
from helpers.paths import REAL_RUNS

from collectors import RunWriter, load_run, open_run
from dashboard.diagnosis import diagnose, i18n
from dashboard.diagnosis.build import evidence, finding, fmt
from dashboard.diagnosis.consequences import demote_consequences
from dashboard.diagnosis.context import RunData
from dashboard.diagnosis.verdict import verdict

CONFIG = {"rollout.group_size": 8, "optim.lr": 5e-4}


def write(tmp_path, reward, name="r", **extra):
    with RunWriter(tmp_path / name, name=name, config=CONFIG) as w:
        for i, r in enumerate(reward):
            w.log_step(i, {"reward/mean": float(r), "reward/std": 0.3, **{k: float(v[i]) for k, v in extra.items()}})
    return load_run(tmp_path / name)


def titled(rule, severity, title, rng, text="x", statistic="median"):
    return finding(rule, severity, title, rng, [evidence("reward/mean", 0.0, None, statistic, text)], ())


def test_the_most_severe_finding_leads_the_verdict(tmp_path):
    # 0.4, 0.8, ... : no trend. The reward test's warning names the kind (not learning); the critical length
    # runaway outranks it and is named first (the run said only "not learning: reward does not move").
    d = RunData(write(tmp_path, np.where(np.arange(40) % 2 == 0, 0.4, 0.8)))
    runaway = titled("length_drift", "critical", "Completion length drifts", (0, 39))
    flat = titled("reward_flat", "warning", "Reward does not move (stays near 0.6)", (0, 39))
    v = verdict(d, [runaway, flat])
    assert v.kind == "not_learning"
    assert v.text == "not learning: Completion length drifts; Reward does not move (stays near 0.6)"
    # a critical zero-variance finding is never shown after a warning: it names the verdict itself
    zero = titled("zero_variance_groups", "critical", "Zero-variance groups dominate", (3, 39))
    assert verdict(d, [zero, flat]).reason.startswith("Zero-variance groups dominate; Reward does not move")
    zh = i18n.localise_verdict(verdict(d, [runaway, flat]), "zh", [runaway, flat])
    assert zh.text == "不学习：completion 长度漂移；reward 不动（停在 0.6 附近）"


def test_the_explosion_leads_and_its_consequences_follow():
    steps = np.arange(1, 41)
    boom = titled("kl_clip_explode", "critical", "KL / clip fraction explode", (10, 40))
    late = titled("reward_flat", "critical", "Reward does not move (stays near 0)", (20, 40))
    out = demote_consequences([boom, late], steps)
    assert [f.severity for f in out] == ["critical", "warning"]  # begins at 20, after the onset at 10

    class Empty:  # the verdict reads the reward only when no finding decides it
        metrics = __import__("pandas").DataFrame({"step": steps, "reward/mean": np.zeros(40)})

    v = verdict(RunData(Empty()), out)
    assert v.text == ("unstable: KL / clip fraction explode; then, as a consequence: Reward does not move "
                      "(stays near 0)")
    assert i18n.localise_verdict(v, "zh", out).text == (
        "不稳定：KL/clip fraction 暴涨；随后出现的都是它的后果：reward 不动（停在 0 附近）")


def trimmed(x: np.ndarray) -> float:
    """20%-trimmed mean by hand: sort, drop int(0.2 n) from each end, mean of the rest."""
    k = int(0.2 * len(x))
    return float(np.mean(np.sort(x)[k:len(x) - k]))


@pytest.mark.skipif(not (REAL_RUNS / "verl_qwen05b_gsm8k_ppo").is_dir(), reason="real runs not here")
def test_a_real_runs_reward_levels_come_with_their_windows_steps():
    # verl_qwen05b_gsm8k_ppo logs a reward at steps 0-434 (435 points) that starts at 0.012, 0.004, 0.016...
    # The window is 10% of the run, 44 points (round(43.5) = 44, banker's rounding); the first one skips the
    # 5 warm-up points: steps 5-48; the last: steps 391-434. The old text said "0.317 -> 0.713 over steps
    # 0-434", numbers a reader took for the first and last steps.
    run = open_run(str(REAL_RUNS / "verl_qwen05b_gsm8k_ppo"))
    x = run.metrics[["step", "reward/mean"]].dropna()
    steps, r = x["step"].to_numpy(int), x["reward/mean"].to_numpy(float)
    assert len(r) == 435 and r[0] < 0.02
    first, last = trimmed(r[5:49]), trimmed(r[-44:])
    d = diagnose(run)
    assert f"reward {fmt(first)} at steps {steps[5]}-{steps[48]} -> {fmt(last)} at steps {steps[-44]}-{steps[-1]}" \
        in d.verdict.reason, d.verdict.reason
    assert (steps[5], steps[48], steps[-44], steps[-1]) == (5, 48, 391, 434)
    assert "(trimmed window means; Mann-Kendall p = " in d.verdict.reason


def test_a_one_step_range_reads_step_n():
    assert i18n.span((10, 10), "en") == "step 10" and i18n.span((3, 9), "en") == "steps 3-9"
    assert i18n.span((10, 10), "zh") == "第 10 步" and i18n.span(None, "en") == "whole run"
    assert fmt(1724.6) == "1725" and fmt(999.6) == "1000" and fmt(0.05312) == "0.0531"  # no "1.72e+03 tokens"


def test_the_entropy_line_says_when_the_half_and_the_lowest_were_reached(tmp_path):
    # 1.0 for 30 steps, down to 0.1 over steps 30-39, then 0.1: the 5-step early level is 1; the rolling median
    # (window 10) first stays below 0.5 a few steps after the fall passes 0.5, and reaches its lowest, 0.1, at
    # step 44 (the first window holding only 0.1s: steps 35..44, since 0.1 is reached at step 39 and the
    # window's median is 0.1 once half of it is). The old line said "fell from 1 to 0.1 in N steps", N being the
    # steps to half.
    n = 100
    h = np.r_[np.full(30, 1.0), np.linspace(1.0, 0.1, 10), np.full(60, 0.1)]
    reward = 0.5 + np.random.default_rng(1).normal(0, 0.04, n)
    d = diagnose(write(tmp_path, reward, name="fast", **{"policy/entropy": h}))
    f = next(f for f in d.findings if f.rule_id == "entropy_collapse")
    text = f.evidence[0].text
    assert text.startswith("entropy fell from 1 to below half of it in "), text
    assert ", and to 0.1 (10% of its early level) by step " in text
    lowest = int(text.rsplit(" ", 1)[1])
    assert 39 <= lowest <= 44
    zh = i18n.evidence_text(text, "zh")
    assert zh.startswith("entropy 在 ") and f"到第 {lowest} 步降到 0.1" in zh, zh


def test_a_young_live_run_is_too_early_to_tell_and_a_finished_one_is_not(tmp_path):
    # 30 logged steps of a reward noisy around 0.5 (std 0.15): no trend, and the change's interval is far wider
    # than a rise that would count (RISE_BAND 0.1 x the reward's spread)
    reward = 0.5 + np.random.default_rng(3).normal(0, 0.15, 30)
    path = tmp_path / "live"
    w = RunWriter(path, name="live", config=CONFIG)
    for i, r in enumerate(reward):
        w.log_step(i, {"reward/mean": float(r), "reward/std": 0.3})
    w.flush()
    live = load_run(path)
    assert live.meta.status == "running"
    d = diagnose(live)
    flat = [f for f in d.findings if f.rule_id == "reward_flat"]
    assert flat and flat[0].severity == "warning"
    assert d.verdict.kind == "cant_judge" and "too early to tell whether it moves" in d.verdict.reason
    assert d.verdict.reason.startswith("30 logged steps with a reward show no trend")
    assert "判断 reward 动不动还为时过早" in i18n.localise(d, "zh").verdict.text
    w.close()
    done = diagnose(load_run(path))  # the same steps, finished: all it will have; the reward test decides
    assert done.verdict.kind == "not_learning" and done.verdict.reason.startswith("Reward does not move")
