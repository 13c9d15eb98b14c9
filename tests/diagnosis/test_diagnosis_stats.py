"""The trend statistics (dashboard/diagnosis/stats.py) and the three claims read on them (facts.reward_stuck,
rises, falls), on series whose numbers are worked out by hand here.

The case behind these tests: a discrete reward that is 0 on most steps makes most pairwise slopes exactly 0, so
Theil-Sen's rank interval collapses to 0 .. 0 and "flat beyond doubt" rested on the ties, not on precision (a
tb_wordle_sweep launch, 0 on 61 of 90 steps, was called critical on that). The least-squares interval comes from
the residual variance, which ties do not shrink; a claim needs both intervals.

Least-squares numbers below: for points i = 0..n-1, Sxx = n (n^2 - 1) / 12, slope = sum (i - mean i) y_i / Sxx,
SSE = Syy - slope^2 Sxx, stderr = sqrt(SSE / (n - 2) / Sxx); the change over the run is slope x (n - 1), its CI
that +- t(0.975, n - 2) x stderr x (n - 1). Theil-Sen's CI takes the sorted pairwise slopes at ranks
round((N -+ 1.96 sigma) / 2) (- 1 for the low one), N = n (n - 1) / 2, sigma^2 = n (n - 1) (2n + 5) / 18.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from collectors import RunWriter, load_run
from dashboard.diagnosis import diagnose, facts, stats
from dashboard.diagnosis.context import RunData


def write(tmp_path, reward: np.ndarray, name: str = "r", std: float = 0.3):
    """A run whose reward/mean is `reward`, reward/std `std` on every step (so the reward's scale is `std`)."""
    with RunWriter(tmp_path / name, name=name, config={"rollout.group_size": 8}) as w:
        for i, r in enumerate(reward):
            w.log_step(i, {"reward/mean": float(r), "reward/std": std})
    return load_run(tmp_path / name)


def sparse21() -> np.ndarray:
    """0 on 18 of 21 steps, 1 at steps 0, 10 and 20."""
    y = np.zeros(21)
    y[[0, 10, 20]] = 1.0
    return y


def test_ties_collapse_theil_sen_but_not_the_least_squares_interval():
    t = stats.trend(np.arange(21), sparse21())
    # 210 pairs: 153 zero-zero and 3 one-one pairs have slope 0; the 54 one-zero pairs split 27 below 0 (the 1 at
    # step 0 before 18 zeros, the 1 at step 10 before 9) and 27 above. Sorted, ranks 27..182 are 0; sigma^2 =
    # 21 x 20 x 47 / 18 = 1096.7, so the CI takes ranks 72 and 137: 0 .. 0.
    assert t.change_ci == (0.0, 0.0) and t.direction() == "flat"
    # sum (i - 10) y_i = -10 + 0 + 10 = 0: slope 0. Syy = 3 - 9/21 = 18/7, Sxx = 770, stderr^2 = 18/133 / 770;
    # change CI = +- 2.0930 x 20 x 0.013258 = +- 0.55497
    lo, hi = t.fit_ci
    assert lo == pytest.approx(-0.55497, abs=1e-5) and hi == pytest.approx(0.55497, abs=1e-5)
    assert t.change_bounds == pytest.approx((-0.55497, 0.55497), abs=1e-5)


def test_a_sparse_reward_is_not_flat_beyond_doubt_on_its_ties(tmp_path):
    reward = np.tile(sparse21(), 2)[:40]  # 40 points (reward_flat needs 20), 1 at steps 0, 10, 20, 21, 31
    run = write(tmp_path, reward)
    d = RunData(run)
    t = facts.reward_trend(d)
    assert t.change_ci == (0.0, 0.0)  # Theil-Sen alone would call this flat beyond doubt against 0.1 x 0.3
    assert facts.reward_stuck(d) is False and t.change_bounds[1] > facts.FLAT_BAND * 0.3
    f = next(f for f in diagnose(run).findings if f.rule_id == "reward_flat")
    assert f.severity == "warning"  # no trend, but not "beyond doubt": a flat reward to read, not a stop
    assert "Theil-Sen's and the least-squares line's together" in f.evidence[0].text


def test_flat_beyond_doubt_needs_a_narrow_interval(tmp_path):
    # 0.59, 0.61, ... over 60 steps: same-parity pairs tie, so Theil-Sen's CI is 0 .. 0 again. Least squares:
    # sum (i - 29.5) y_i = 0.01 x 30 = 0.3, Sxx = 17995, slope = 1.6671e-5, change 0.00098; Syy = 0.006,
    # SSE = 0.006 - 0.3^2 / 17995 = 0.0059950, stderr = 7.5789e-5, half width 2.0017 x 59 x 7.5789e-5 = 0.0089509
    alt = np.where(np.arange(60) % 2 == 0, 0.59, 0.61)
    t = stats.trend(np.arange(60), alt)
    assert t.change_ci == (0.0, 0.0)
    assert t.fit_ci == pytest.approx((0.00098357 - 0.0089509, 0.00098357 + 0.0089509), abs=1e-6)
    assert facts.reward_stuck(RunData(write(tmp_path, alt, "narrow")))  # within 0.1 x 0.3 = 0.03
    # 0.4, 0.8, ...: the same ties, 20 times the spread: change 0.0197 +- 0.179 (SSE = 2.4 - 6^2 / 17995)
    wide = np.where(np.arange(60) % 2 == 0, 0.4, 0.8)
    t = stats.trend(np.arange(60), wide)
    assert t.change_ci == (0.0, 0.0)
    assert t.fit_ci == pytest.approx((0.019672 - 0.17901, 0.019672 + 0.17901), abs=1e-5)
    assert not facts.reward_stuck(RunData(write(tmp_path, wide, "wide")))


def test_a_rise_needs_both_intervals(tmp_path):
    # 0 on steps 0-19, then 1, 0, 1, 0, ... (1 at steps 20, 22, ..., 28): Mann-Kendall says up (p = 0.008).
    # Least squares: sum (i - 14.5) y_i = 120 - 72.5 = 47.5, Sxx = 2247.5, change = 29 x 0.021135 = 0.6129;
    # SSE = 25/6 - 47.5^2 / 2247.5 = 3.16277, stderr 0.0070893, CI 0.6129 +- 2.0484 x 29 x 0.0070893 = 0.1918 ..
    # 1.0340. Theil-Sen: 310 of 435 slopes are 0 (sorted ranks 15..324) and the CI takes ranks 162 and 272: 0 .. 0.
    y = np.zeros(30)
    y[20:30:2] = 1.0
    t = stats.trend(np.arange(30), y)
    assert t.direction() == "up" and t.change_ci == (0.0, 0.0)
    assert t.fit_ci == pytest.approx((0.19177, 1.03404), abs=1e-4)
    d = RunData(write(tmp_path, y))
    # the ties keep the rank interval at 0, so no proven rise; the least-squares one keeps it from "flat"
    assert not facts.rises(d, t) and not facts.reward_stuck(d)


def test_flat_rises_and_falls_read_one_interval(tmp_path):
    # a straight line 0.56 -> 0.80 and back: every pairwise slope is 0.24 / 59 and the line has no residual, so
    # both CIs are exactly the change; against the scale 0.3: rises (0.24 > 0.03), falls (-0.24 <= -0.2 x 0.3)
    line = 0.56 + 0.24 * np.arange(60) / 59
    for reward, claim in ((line, "rises"), (line[::-1], "falls"), (np.full(60, 0.6), "stuck")):
        d = RunData(write(tmp_path, reward, claim))
        t = facts.reward_trend(d)
        got = {"rises": facts.rises(d, t), "falls": facts.falls(d, t, 0.2), "stuck": facts.reward_stuck(d)}
        assert got == {k: k == claim for k in got}, claim
    assert facts.reward_trend(d).change_bounds == (0.0, 0.0)
    # noise around a level: at most one claim ever holds
    rng = np.random.default_rng(3)
    for k in range(20):
        d = RunData(write(tmp_path, 0.5 + 0.002 * k * np.arange(50) + rng.normal(0, 0.1, 50), f"n{k}"))
        t = facts.reward_trend(d)
        assert facts.rises(d, t) + facts.falls(d, t, 0.2) + facts.reward_stuck(d) <= 1


def test_long_series_are_binned_by_means_so_a_sparse_rate_that_doubles_shows():
    # 1 on every 10th step for 50,000 steps, then on every 5th: bins of 391 steps, every bin median is 0 (the old
    # median bins said "constant, no doubt"). A step of height h at the middle has least-squares change 1.5 h
    # (cov(x, step) = h L / 8, var x = L^2 / 12): 0.15 here.
    i = np.arange(100_000)
    y = np.where(i < 50_000, i % 10 == 0, i % 5 == 0).astype(float)
    t = stats.trend(i, y)
    assert t.n == 256 and t.direction() == "up"
    lo, hi = t.fit_ci
    assert lo < 0.15 < hi and lo > 0.1
    # 255 whole bins of 391 steps and the last 295: bin 0 holds 0, 10, ..., 390 (40 ones), bin 254 (steps
    # 99314-99704) 99315, ..., 99700 (78), the rest (99705-99999) 59
    s, v = stats.binned(i, y)
    assert len(v) == 256 and v[0] == pytest.approx(40 / 391) and v[-2] == pytest.approx(78 / 391)
    assert v[-1] == pytest.approx(59 / 295) and s[-1] == pytest.approx((99_705 + 99_999) / 2)


def test_theil_sen_by_hand_on_five_points():
    """y = 0, 1, 1, 3, 2 at x = 0..4: the ten pairwise slopes (j > i: (y_j - y_i) / (j - i)) sorted are
    -1, 0, 1/3, 1/2, 1/2, 1/2, 1, 1, 1, 2; median (1/2 + 1/2) / 2 = 1/2. sigma^2 = (5*4*15 - 2*1*9) / 18 = 282/18 (one tie of two in y), so
    1.96 sigma = 7.758 and the interval ranks are round((10 -+ 7.758) / 2) (- 1 low): 0 and 9."""
    slope, lo, hi = stats.theil_sen(np.arange(5.0), np.array([0.0, 1, 1, 3, 2]))
    assert slope == 0.5
    assert (lo, hi) == (-1.0, 2.0)


@pytest.mark.parametrize("case", ["noise", "trend", "sparse_ties", "binary", "unsorted_steps", "repeated_steps"])
def test_theil_sen_and_line_fit_give_scipys_numbers(case):
    """The trend's own Theil-Sen and least-squares line are scipy's theilslopes and linregress (its t interval),
    on series of every shape the rules meet: 240 points (a binned run), ties, unsorted or repeated steps."""
    from scipy import stats as sps

    rng = np.random.default_rng(7)
    steps = np.arange(240.0)
    y = {"noise": rng.normal(size=240), "trend": 0.01 * steps + rng.normal(size=240),
         "sparse_ties": (rng.random(240) < 0.1).astype(float), "binary": rng.integers(0, 2, 240).astype(float),
         "unsorted_steps": rng.normal(size=240), "repeated_steps": rng.normal(size=240)}[case]
    if case == "unsorted_steps":
        steps = rng.permutation(steps)
    if case == "repeated_steps":
        steps = np.repeat(np.arange(120.0), 2)
    want = sps.theilslopes(y, steps, alpha=0.95)
    got = stats.theil_sen(steps, y)
    assert got == pytest.approx((want.slope, want.low_slope, want.high_slope), rel=1e-12, abs=1e-15)
    r = sps.linregress(steps, y)
    half = sps.t.ppf(0.975, len(y) - 2) * r.stderr
    assert stats.line_fit(steps, y) == pytest.approx((r.slope, r.slope - half, r.slope + half), rel=1e-9, abs=1e-15)


def test_mann_kendall_by_hand_on_five_points():
    """y = 0, 1, 1, 3, 2 at x = 0..4: of the ten pairs 8 are concordant, 1 discordant (3 -> 2) and 1 tied in y
    (1, 1), so S = 7 and tau_b = 7 / sqrt(10 * 9). With a tie scipy takes the normal approximation: var(S) =
    (5*4*15 - 2*1*9) / 18 = 15.667 (one tie of two in y), z = 7 / 3.958 = 1.7685, p = erfc(z / sqrt 2) = 0.0770."""
    tau, p = stats.mann_kendall(np.arange(5.0), np.array([0.0, 1, 1, 3, 2]))
    assert tau == pytest.approx(7 / math.sqrt(90), rel=1e-12)
    assert p == pytest.approx(math.erfc(7 / math.sqrt(282 / 18) / math.sqrt(2)), rel=1e-12)
    assert p == pytest.approx(0.0770, abs=5e-5)


@pytest.mark.parametrize("seed", range(6))
def test_mann_kendall_gives_scipys_kendalltau(seed):
    """tau_b and p equal scipy.stats.kendalltau's on the shapes the rules meet: noise, trends, ties in values
    (sparse and binary rewards), repeated and unsorted steps, short series scipy judges exactly, nearly perfect
    monotone ones, a constant side (NaN)."""
    from scipy import stats as sps

    rng = np.random.default_rng(seed)
    for _ in range(60):
        n = int(rng.choice([2, 3, 5, 10, 20, 33, 34, 60, 240, 256]))
        steps = np.arange(float(n))
        kind = rng.integers(0, 7)
        y = [rng.normal(size=n), 0.05 * steps + rng.normal(size=n), (rng.random(n) < 0.1).astype(float),
             rng.integers(0, 2, n).astype(float), steps.copy(), np.r_[steps[:-2], steps[-1], steps[-2]],
             np.full(n, 0.5)][kind]
        if rng.random() < 0.2:
            steps = rng.permutation(steps)
        if rng.random() < 0.2:
            steps = np.floor(steps / 2)
        want = sps.kendalltau(steps, y)
        got = stats.mann_kendall(steps, y)
        if math.isnan(want.statistic):
            assert math.isnan(got[0]) and math.isnan(got[1])
            continue
        assert got == pytest.approx((want.statistic, want.pvalue), rel=1e-9, abs=1e-15), (kind, n)


@pytest.mark.parametrize("seed", range(3))
def test_smooth_equals_pandas_centred_rolling_median(seed):
    """stats.smooth (odd windows by bottleneck's trailing median of the series padded with NaN, even windows and
    infs by pandas) gives pandas' rolling(window, min_periods=1, center=True).median() exactly, NaN and short
    series included."""
    rng = np.random.default_rng(seed)
    for _ in range(150):
        window = int(rng.choice([1, 2, 3, 4, 5, 7, 9]))
        x = rng.normal(size=int(rng.integers(0, 5 * window + 12)))
        if rng.random() < 0.5:
            x[rng.random(len(x)) < 0.2] = np.nan
        if rng.random() < 0.15:
            x[rng.random(len(x)) < 0.1] = -np.inf
        want = pd.Series(x, dtype=np.float64).rolling(window, min_periods=1, center=True).median().to_numpy()
        assert np.array_equal(stats.smooth(x, window), want, equal_nan=True), (window, x)
    # by hand, window 3: [1] + [1, 5] -> 3, [1, 5, 2] -> 2, [5, 2, nan] -> 3.5, [2, nan] -> 2
    assert stats.smooth(np.array([1.0, 5.0, 2.0, np.nan]), 3).tolist() == [3.0, 2.0, 3.5, 2.0]
