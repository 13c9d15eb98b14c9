"""What the diagnosis may say critically when a log is thinned (every N steps) or comes without its config
(benchmarks/diagnosis_robustness.py's views, issue 37): one test per mechanism that gave a false critical there.
Runs are written with the real RunWriter; the numbers are worked out by hand in the comments."""

from __future__ import annotations

import numpy as np
from helpers.series_runs import finding, write

from dashboard.diagnosis import diagnose
from dashboard.diagnosis.stats import median_low, share_low


def test_the_bounds_a_few_points_leave_by_hand():
    x = np.array([0.5625, 0.5625, 0.625, 0.625, 0.6875, 0.6875, 0.6875, 0.8125, 0.8125, 0.875, 0.875, 0.875,
                  0.9375, 1.0])
    # 14 points: the 95% sign interval of the median rests on the 3rd and the 12th values
    assert median_low(x) == 0.625
    assert median_low(np.ones(8)) == 1.0 and median_low(np.ones(3)) == -np.inf  # 3 points bound nothing
    # Clopper-Pearson: 20 in 20 -> 0.025^(1/20) = 0.8316; 10 in 10 -> 0.025^(1/10) = 0.6915
    assert np.isclose(share_low(20, 20), 0.025 ** (1 / 20)) and np.isclose(share_low(10, 10), 0.025 ** (1 / 10))


def _tempered_kl(n=60):
    """A KL of about 10 nats from step 1 on (what a 0.1-nat move reads at T = 0.1), tied groups 0.3, a reward that
    wanders: sample_runs/low_temperature's shape."""
    rng = np.random.default_rng(3)
    return {"policy/kl_ref": np.r_[0.0, 10 + rng.normal(0, 1.5, n - 1)], "reward/mean": 0.2 + rng.normal(0, 0.05, n),
            "reward/std": np.full(n, 0.3), "groups/zero_std_frac": np.full(n, 0.3)}


def test_without_the_config_a_kl_of_nats_is_no_critical_explosion(tmp_path):
    series = _tempered_kl()
    said = diagnose(write(tmp_path, series, {"rollout.temperature": 1.0, "algo.kl_mode": "loss"}, name="said"))
    assert finding(said, "kl_clip_explode").severity == "critical"  # at T = 1 with a KL term: it explodes
    d = diagnose(write(tmp_path, series, {}, name="bare"))
    f = finding(d, "kl_clip_explode")
    assert f.severity == "warning" and f.title == "KL jumps far above its own level"
    line = next(e for e in f.evidence if e.metric == "config:kl")
    assert "the config does not say whether a KL term holds the policy nor the sampling temperature" in line.text
    # the temperature alone said: the KL term still unsaid, still a warning
    d = diagnose(write(tmp_path, series, {"rollout.temperature": 1.0}, name="half"))
    assert finding(d, "kl_clip_explode").severity == "warning"
    assert "whether a KL term holds the policy:" in next(
        e.text for e in finding(d, "kl_clip_explode").evidence if e.metric == "config:kl")
    # the KL term said, the temperature not: the frameworks' default T = 1 is assumed, critical
    d = diagnose(write(tmp_path, series, {"beta": 0.04}, name="term"))
    assert finding(d, "kl_clip_explode").severity == "critical"


def test_an_explosion_lowered_for_the_missing_config_still_explains_what_follows(tmp_path):
    n = 60
    series = {**_tempered_kl(n), "groups/zero_std_frac": np.r_[np.full(5, 0.2), np.full(n - 5, 1.0)]}
    d = diagnose(write(tmp_path, series, {}))
    z = finding(d, "zero_variance_groups")
    # 55 steps of every group tied from step 5, after the KL left at step 1: a consequence, not a root
    assert z.severity == "warning"
    assert any("begins after the run exploded at step 1" in e.text for e in z.evidence)
    # a run known to have no KL term travels: its KL explains nothing, the tied groups are judged on their own
    d = diagnose(write(tmp_path, series, {"algo.kl_mode": "none", "rollout.temperature": 1.0}, name="free"))
    assert finding(d, "kl_clip_explode").severity == "warning"
    assert finding(d, "zero_variance_groups").severity == "critical"


def test_a_policy_wrecked_before_the_first_row_of_a_thinned_log_is_an_explosion(tmp_path):
    # logged every 10 steps: at step 10, the first row, KL 5.3 nats and every group tied from then on (lr far
    # too large); the jump happened between steps 0 and 10, where nothing was logged
    n = 20
    rng = np.random.default_rng(4)
    wrecked = {"policy/kl_ref": 5.3 + rng.normal(0, 0.3, n), "groups/zero_std_frac": np.ones(n),
               "reward/mean": np.zeros(n), "reward/std": np.zeros(n)}
    cfg = {"beta": 0.04, "temperature": 1.0}
    d = diagnose(write(tmp_path, wrecked, cfg, steps=range(10, 10 * n + 1, 10)))
    f = finding(d, "kl_clip_explode")
    assert f.severity == "critical" and f.step_range[0] == 10
    assert "the policy was wrecked within its first 10 updates" in f.evidence[0].text
    z = finding(d, "zero_variance_groups")
    assert z.severity == "warning" and any("before the run exploded at step 10" in e.text for e in z.evidence)
    assert finding(d, "reference_mismatch") is None
    # the same first row with groups that keep their spread: a reference that is not the starting policy
    kept = {**wrecked, "groups/zero_std_frac": np.full(n, 0.2), "reward/std": np.full(n, 0.3),
            "reward/mean": 0.5 + rng.normal(0, 0.02, n)}
    d = diagnose(write(tmp_path, kept, cfg, steps=range(10, 10 * n + 1, 10), name="ref"))
    assert finding(d, "reference_mismatch") is not None
    assert finding(d, "kl_clip_explode") is None or finding(d, "kl_clip_explode").severity != "critical"


def test_a_tied_share_of_one_group_a_step_is_the_share_of_tied_steps(tmp_path):
    # one prompt a step: the share is 0 or 1. 12 tied steps in 40, in two runs of 6, give windowed medians of 1
    # there (read as "100% of groups tied", critical); what the run did is 12 / 40 = 30% of its steps without
    # signal: a warning (>= 0.2)
    z = np.zeros(40)
    z[3:9] = z[20:26] = 1.0
    d = diagnose(write(tmp_path, {"groups/zero_std_frac": z, "reward/std": np.where(z == 1, 0.0, 0.25),
                                  "reward/mean": np.full(40, 0.3)}, {"num_generations": 8}, steps=range(5, 201, 5)))
    f = finding(d, "zero_variance_groups")
    assert f.severity == "warning" and f.evidence[0].metric == "reward/std" and f.evidence[0].value == 0.3


def test_a_tied_share_near_the_bar_on_few_points_is_a_warning(tmp_path):
    # 14 logged points held above 0.5 around 0.8: median 0.8125 clears 0.8, but the 95% interval's low end is
    # the 3rd of the sorted 14, 0.625: critical is not established on so few points
    z = np.array([0.1, 0.1, 0.2, 0.2, 0.3, 0.3,
                  0.625, 0.5625, 0.8125, 1.0, 0.875, 0.9375, 0.8125, 0.875, 0.875, 0.625, 0.8125, 1.0, 0.6875, 0.875])
    d = diagnose(write(tmp_path, {"groups/zero_std_frac": z, "reward/mean": np.full(20, 0.1),
                                  "reward/std": np.full(20, 0.2)}, steps=range(10, 201, 10)))
    f = finding(d, "zero_variance_groups")
    assert f.evidence[0].value > 0.8 and f.severity == "warning"
    # the same level held over 200 points: the interval is tight around it, critical
    rng = np.random.default_rng(5)
    long = np.r_[np.full(40, 0.2), np.clip(0.875 + rng.normal(0, 0.03, 160), 0, 1)]
    d = diagnose(write(tmp_path, {"groups/zero_std_frac": long, "reward/mean": np.full(200, 0.1),
                                  "reward/std": np.full(200, 0.2)}, name="long"))
    assert finding(d, "zero_variance_groups").severity == "critical"


def test_an_entropy_collapse_is_critical_only_where_the_reward_cannot_still_be_rising(tmp_path):
    # entropy 1.0 -> 0.001 between steps 20 and 30 of 60
    n = 60
    h = np.r_[np.full(20, 1.0), np.linspace(1.0, 0.001, 10), np.full(n - 30, 0.001)]
    rng = np.random.default_rng(6)
    noisy = np.r_[np.full(20, -2.0), -2.0 + np.linspace(0, 0.8, n - 20)] + rng.normal(0, 0.6, n)
    d = diagnose(write(tmp_path, {"policy/entropy": h, "reward/mean": noisy, "reward/std": np.full(n, 1.0)}))
    f = finding(d, "entropy_collapse")
    line = f.evidence[-1]
    # a rise of 0.8 under noise 0.6 on 60 points: not significant, not ruled out either
    assert f.severity == "warning" and "a rise is not ruled out" in line.text and line.value > line.threshold
    stuck = np.full(n, -2.0) + rng.normal(0, 0.01, n)  # the reward stays where it was: the policy stopped learning
    d = diagnose(write(tmp_path, {"policy/entropy": h, "reward/mean": stuck, "reward/std": np.full(n, 1.0)},
                       name="stuck"))
    assert finding(d, "entropy_collapse").severity == "critical"
