"""The one-line verdict (dashboard/diagnosis/verdict.py) and the demotion of an explosion's consequences
(consequences.py), on runs written with the real RunWriter and reward series whose trend statistics are worked
out by hand here.

The case behind these tests: a TensorBoard sweep launch (tb_wordle_sweep, 1767717097) was called "not learning:
Completions are pinned at the length cap". Its completions are indeed all cut at the 16-token cap, but so are
those of three launches of the same sweep whose reward climbs: the cut is a level that may explain a flat reward,
not a measurement of learning. The verdict must rest on the reward's own test and name it.
"""

from __future__ import annotations

import numpy as np

from collectors import RunWriter, load_run
from dashboard.diagnosis import diagnose, facts
from dashboard.diagnosis.build import evidence, finding
from dashboard.diagnosis.consequences import demote_consequences
from dashboard.diagnosis.context import RunData
from dashboard.diagnosis.verdict import verdict

CONFIG = {"rollout.group_size": 8, "optim.lr": 5e-4}


def write(tmp_path, reward: np.ndarray, name: str = "r", **extra: np.ndarray):
    """A run whose reward/mean is `reward`, reward/std 0.3 on every step, plus `extra` columns."""
    with RunWriter(tmp_path / name, name=name, config=CONFIG) as w:
        for i, r in enumerate(reward):
            w.log_step(i, {"reward/mean": float(r), "reward/std": 0.3, **{k: float(v[i]) for k, v in extra.items()}})
    return load_run(tmp_path / name)


def pinned(n: int, severity: str = "critical"):
    return finding("truncation", severity, "Completions are pinned at the length cap", (0, n - 1),
                   [evidence("completions/truncated_frac", 1.0, 1 / 3, "median", "every completion cut")], ())


def flat(n: int, severity: str = "warning"):
    return finding("reward_flat", severity, "Reward does not move (stays near 0.6)", (0, n - 1),
                   [evidence("reward/mean", 0.0, 0.03, "Theil-Sen", "no trend")], ())


def test_a_level_that_explains_a_flat_reward_does_not_name_the_verdict_over_the_reward_test(tmp_path):
    # 0.4, 0.8, 0.4, ... over 40 steps: Mann-Kendall S = 210 - 190 = 20 (p = 0.79), no trend.
    d = RunData(write(tmp_path, np.where(np.arange(40) % 2 == 0, 0.4, 0.8)))
    # sorted as diagnose sorts them: the critical level first, the reward test's warning after it
    v = verdict(d, [pinned(40), flat(40)])
    # ...and the critical level, more severe than the warning the kind rests on, is named first (issue 39)
    assert v.kind == "not_learning"
    assert v.reason == "Completions are pinned at the length cap; Reward does not move (stays near 0.6)"
    # alone, the level still says "not learning" when the reward does not rise
    assert verdict(d, [pinned(40)]).text == "not learning: Completions are pinned at the length cap"


def test_a_level_never_calls_a_climbing_reward_not_learning(tmp_path):
    # 0.56 -> 0.80 in a straight line over steps 0-99: every pair has slope 0.24 / 99, so Theil-Sen's change is
    # 0.24 with CI 0.24 .. 0.24, and so is the least-squares line's (no residual, stderr 0): far above RISE_BAND x
    # reward std = 0.1 x 0.3 = 0.03, the reward rises.
    d = RunData(write(tmp_path, 0.56 + 0.24 * np.arange(100) / 99))
    v = verdict(d, [pinned(100)])
    # the reason says where the reward went, level to level: the median of points 5-14 (after the 5 warm-up
    # steps) is 0.56 + 0.24 x 9.5 / 99 = 0.583, that of the last 10 is 0.56 + 0.24 x 94.5 / 99 = 0.789
    # each with its window's steps; the critical level leads (issue 39)
    assert v.kind == "healthy" and v.reason.startswith("Completions are pinned at the length cap; the reward rises: "
                                                       "reward 0.583 at steps 5-14 -> 0.789 at steps 90-99")



def test_the_verdict_says_where_a_reward_in_steps_of_one_eighth_went(tmp_path):
    # A batch of 8 scored 0/1 gives rewards in steps of 1/8. Steps 5-14 (the first window of 10 after 5 warm-up
    # steps) hold 0.375 x 4 and 0.5 x 6, the last 10 steps 0.5 x 6 and 0.625 x 4: both windows' medians are 0.5
    # (the old text said "0.5 -> 0.5"). Their 20%-trimmed means drop the 2 lowest and 2 highest of each:
    # (0.375 x 2 + 0.5 x 4) / 6 = 0.458 and (0.5 x 4 + 0.625 x 2) / 6 = 0.542.
    head, tail = [0.375, 0.5] * 4 + [0.5] * 2, [0.5, 0.625] * 4 + [0.5] * 2
    middle = np.floor(np.linspace(0.42, 0.56, 75) * 8) / 8
    r = np.r_[[0.375] * 5, head, middle, tail]
    assert len(r) == 100 and np.median(head) == np.median(tail) == 0.5
    v = verdict(RunData(write(tmp_path, r)), [])
    assert "reward 0.458 at steps 5-14 -> 0.542 at steps 90-99" in v.reason, v.reason


def test_pinned_completions_with_a_flat_noisy_reward_are_a_warning_and_the_verdict_names_the_reward(tmp_path):
    # Every completion cut for all 100 steps, the reward noisy around 0.6 (std 0.15, as the sweep launch's
    # 0.3-1.1): no trend, but its CIs are wider than FLAT_BAND x reward std = 0.03, so not flat beyond doubt.
    r = 0.6 + np.random.default_rng(7).normal(0, 0.15, 100)
    run = write(tmp_path, r, **{"completions/truncated_frac": np.ones(100)})
    lo, hi = facts.reward_trend(RunData(run)).change_bounds
    assert lo < 0 < hi and max(abs(lo), abs(hi)) > 0.1 * 0.3
    d = diagnose(run)
    got = {f.rule_id: f.severity for f in d.findings}
    assert got["truncation"] == "warning" and got["reward_flat"] == "warning"
    assert d.verdict.kind == "not_learning" and d.verdict.reason.startswith("Reward does not move")


def test_a_finding_with_too_few_steps_before_the_explosion_is_its_consequence():
    steps = np.arange(1, 25)
    boom = finding("kl_clip_explode", "critical", "KL / clip fraction explode", (2, 15),
                   [evidence("policy/kl_ref", 9.0, 1.0, "max", "KL 9")], ())
    early = flat(24, "critical")
    early = finding("reward_flat", "critical", early.title, (1, 24), early.evidence, ())
    out = {f.rule_id: f for f in demote_consequences([boom, early], steps)}
    # step 1 is the only logged step before the onset at step 2: fewer than MIN_CONSECUTIVE = 5
    assert out["reward_flat"].severity == "warning" and out["kl_clip_explode"].severity == "critical"
    assert "only 1 logged step(s) before the run exploded at step 2" in out["reward_flat"].evidence[-1].text
    # five logged steps before the onset (1-5, onset 6) are a level of their own: kept critical
    late = finding("kl_clip_explode", "critical", boom.title, (6, 15), boom.evidence, ())
    assert {f.rule_id: f.severity for f in demote_consequences([late, early], steps)}["reward_flat"] == "critical"
    # without the steps, only a finding that starts after the onset is demoted (the old rule)
    assert {f.rule_id: f.severity for f in demote_consequences([boom, early])}["reward_flat"] == "critical"


def test_a_first_step_mismatch_says_unstable_however_short_the_run(tmp_path):
    # 2 logged steps: too few for any trend (MIN_TREND_STEPS 20), but a mismatch at step 1 needs none
    d = RunData(write(tmp_path, np.array([0.6, 0.62])))
    mismatch = finding("first_step_ratio", "warning", "Rollout and training log-probs disagree at the first step",
                       (1, 1), [evidence("policy/clipfrac", 0.143, 0.067, "step 1", "14.3% of tokens clipped")], ())
    assert verdict(d, [mismatch]).text == "unstable: Rollout and training log-probs disagree at the first step"
    # without it, the same two steps cannot be judged
    assert verdict(d, []).kind == "cant_judge"


def test_a_flat_reward_while_the_groups_tie_is_their_consequence():
    """Tied groups have advantage 0 and no gradient: a reward that stays flat from (nearly) where they begin to
    dominate is what they make, a warning pointing at them (trl_dapo_vl3b_entropy_collapse: groups tied from its
    second log on, grad_norm 0 on 42 of 49 logs, was two criticals saying the same thing)."""
    steps = np.arange(10, 500, 10)  # logged every 10 steps, as that run
    tied = finding("zero_variance_groups", "critical", "Zero-variance groups dominate", (20, 490),
                   [evidence("groups/zero_std_frac", 0.9, 0.5, "median", "90% tied")], ())
    flat_reward = flat(49, "critical")
    flat_reward = finding("reward_flat", "critical", flat_reward.title, (10, 490), flat_reward.evidence, ())
    out = {f.rule_id: f for f in demote_consequences([tied, flat_reward], steps)}
    # one logged step (10) before the groups tie at 20: fewer than MIN_CONSECUTIVE = 5
    assert out["zero_variance_groups"].severity == "critical" and out["reward_flat"].severity == "warning"
    assert out["reward_flat"].evidence[-1].text == (
        "only 1 logged step(s) before the groups tied at step 20: mostly a consequence; check the tied groups first")
    # a reward flat for 10 logs before the groups tie is a finding of its own
    late = finding("zero_variance_groups", "critical", tied.title, (110, 490), tied.evidence, ())
    assert {f.rule_id: f.severity for f in demote_consequences([late, flat_reward], steps)}["reward_flat"] == "critical"
    # and tied groups explain nothing else: a truncation beside them stays what it is
    cut = finding("truncation", "critical", "Completions are pinned at the length cap", (30, 490),
                  [evidence("completions/truncated_frac", 0.9, 0.2, "median", "cut")], ())
    assert {f.rule_id: f.severity for f in demote_consequences([tied, cut], steps)}["truncation"] == "critical"
