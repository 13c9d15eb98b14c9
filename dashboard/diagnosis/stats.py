"""Statistics the rules judge with, in one place: a run is compared with its own noise and logging cadence.

Real runs log every 1-10 steps, have 2-16 responses per group and rewards on any scale, so fixed absolute
tolerances on window medians do not transfer between runs. Here:
- `noise`: the run's point-to-point noise, from the median absolute first difference (robust to trends and
  to a few spikes);
- `trend`: Mann-Kendall (Kendall's tau-b of value against step and its p-value: `mann_kendall`, the numbers
  of `scipy.stats.kendalltau` from the pairs Theil-Sen already forms) for "does it move at all"; Theil-Sen
  (`theil_sen`, the numbers of `scipy.stats.theilslopes` from three order statistics instead of a full sort)
  and a least-squares line (`line_fit`, linregress's closed form, t interval on its slope) for "by how much,
  how sure". Theil-Sen's interval is built from the ranks of the pairwise slopes, so a
  discrete reward with many ties (0 on most steps) makes most slopes exactly 0 and collapses it to 0 .. 0:
  certainty from the ties, not from precision. The least-squares interval comes from the residual variance,
  which ties do not shrink, but one spike moves it. "The reward does not move", "rises" and "falls" are read
  on `Trend.change_bounds`, the hull of both intervals: a claim needs both;
- `runs_of` / `sustained`: a condition that holds on consecutive logged points, so one logged spike that
  returns at once is told apart from a level that stays.
Change points (ruptures) were considered and not used: what the rules need is "did it move, which way,
how sure" and "how long did it stay", which the tests above answer with a significance level.

Pure numpy/scipy; every function takes 1-D float arrays of length T (NaN = not logged at that step).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats as sps

from dashboard.diagnosis import series

ALPHA = 0.05  # significance level of the trend test
MIN_TREND_POINTS = 10  # Mann-Kendall's normal approximation and a Theil-Sen CI need about 10 points
MAX_TREND_POINTS = 256  # longer series are binned (mean per bin): Theil-Sen is O(n^2) and 100k steps are common
MAD_TO_STD = 1.4826  # MAD x this = std for Gaussian noise


def finite(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, dtype=np.float64)
    return x[np.isfinite(x)]


def spread(x: np.ndarray) -> float:
    """Robust std of the values (MAD x 1.4826); NaN when empty. x: (T,) -> float"""
    f = finite(x)
    if not len(f):
        return float("nan")
    return float(MAD_TO_STD * np.median(np.abs(f - np.median(f))))


def noise(x: np.ndarray) -> float:
    """Robust point-to-point noise of a series: MAD of first differences x 1.4826 / sqrt(2).

    A first difference removes a slow trend, and for independent noise of std s it has std s*sqrt(2), hence
    the division. NaN with fewer than 3 finite points. x: (T,) -> float
    """
    f = finite(x)
    if len(f) < 3:
        return float("nan")
    d = np.diff(f)
    return float(MAD_TO_STD * np.median(np.abs(d - np.median(d))) / math.sqrt(2.0))


def binned(steps: np.ndarray, x: np.ndarray, max_points: int = MAX_TREND_POINTS) -> tuple[np.ndarray, np.ndarray]:
    """(steps, values) at finite points, reduced to at most `max_points` bin means of k consecutive points each.

    Means, not medians: the medians of a reward that is 0 on most steps are all 0 again (ties that hide a rate
    that doubles), and means of consecutive points are the batch means that temper the serial correlation of
    logged steps. A spike moves one bin; the rank tests hardly notice, the least-squares interval widens.
    steps, x: (T,) -> (B,), (B,) with B <= max_points
    """
    steps = np.asarray(steps, dtype=np.float64)
    x = np.asarray(x, dtype=np.float64)
    ok = np.isfinite(x)
    steps, x = steps[ok], x[ok]
    if len(x) <= max_points:
        return steps, x
    k = -(-len(x) // max_points)
    full = (len(x) // k) * k  # whole bins by reshape; the remainder (fewer than k points) is one more bin
    sb, xb = steps[:full].reshape(-1, k).mean(axis=1), x[:full].reshape(-1, k).mean(axis=1)
    if full < len(x):
        sb, xb = np.append(sb, steps[full:].mean()), np.append(xb, x[full:].mean())
    return sb, xb


@dataclass(frozen=True)
class Trend:
    """A monotone trend of a series over its steps: Mann-Kendall's tau and p, Theil-Sen's slope and its CI, and
    the least-squares slope with its t interval; claims about the change read both (`change_bounds`)."""

    n: int  # points tested (after binning)
    tau: float  # Kendall's tau of value vs step, in [-1, 1]
    p: float  # two-sided p-value of "no monotone trend"
    slope: float  # Theil-Sen slope, value per step
    slope_lo: float  # its confidence interval (1 - ALPHA); collapses to 0 .. 0 on tied values
    slope_hi: float
    first_step: float
    last_step: float
    fit_slope: float  # least-squares slope through the same points, value per step
    fit_lo: float  # its (1 - ALPHA) t interval, n - 2 degrees of freedom
    fit_hi: float

    @property
    def span(self) -> float:
        return self.last_step - self.first_step

    @property
    def change(self) -> float:
        """The trend's total change over the run (slope x steps covered)."""
        return self.slope * self.span

    @property
    def change_ci(self) -> tuple[float, float]:
        return self.slope_lo * self.span, self.slope_hi * self.span

    @property
    def fit_ci(self) -> tuple[float, float]:
        """The (1 - ALPHA) interval of the least-squares line's change over the run (slope x steps covered): a
        width that ties cannot shrink, unlike `change_ci`."""
        return self.fit_lo * self.span, self.fit_hi * self.span

    @property
    def change_bounds(self) -> tuple[float, float]:
        """The smallest interval holding both change CIs, Theil-Sen's and the least-squares line's. A claim about
        the change (flat, rises, falls) holds only when both support it: the rank interval is not moved by a
        spike, the least-squares one is not shrunk by ties."""
        (a, b), (c, e) = self.change_ci, self.fit_ci
        return min(a, c), max(b, e)

    @property
    def z(self) -> float:
        """A signed z-like score of the trend (the normal quantile of the p-value, with tau's sign)."""
        p = min(max(self.p, 1e-300), 1.0)
        return float(math.copysign(sps.norm.isf(p / 2), self.tau)) if self.tau else 0.0

    def direction(self, alpha: float = ALPHA) -> str:
        """"up" or "down" when the trend is significant at `alpha`, else "flat"."""
        if not (self.p < alpha) or self.tau == 0:
            return "flat"
        return "up" if self.tau > 0 else "down"


def trend(steps: np.ndarray, x: np.ndarray, min_points: int = MIN_TREND_POINTS) -> Trend | None:
    """Mann-Kendall + Theil-Sen + a least-squares line on the finite points of `x` against `steps`; None with
    fewer than `min_points`.

    steps, x: (T,) -> Trend | None. Series longer than MAX_TREND_POINTS are tested on bin means (`binned`).
    """
    s, v = binned(steps, x)
    if len(v) < min_points:
        return None
    if np.ptp(v) == 0:  # every point the same: no move, and no doubt about it
        return Trend(len(v), 0.0, 1.0, 0.0, 0.0, 0.0, float(s[0]), float(s[-1]), 0.0, 0.0, 0.0)
    fit, fit_lo, fit_hi = line_fit(s, v)
    diffs, ties = _pair_diffs(s, v), (_tie_stats(s), _tie_stats(v))  # both tests read the pairs and the ties
    tau, p = mann_kendall(s, v, diffs, ties)
    slope, lo, hi = theil_sen(s, v, diffs=diffs, ties=ties)
    tau = 0.0 if not np.isfinite(tau) else float(tau)
    p = 1.0 if not np.isfinite(p) else float(p)
    return Trend(len(v), tau, p, slope, lo, hi, float(s[0]), float(s[-1]), fit, fit_lo, fit_hi)


def _pair_diffs(steps: np.ndarray, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(dx, dy) over every pair i < j: steps[j] - steps[i] and x[j] - x[i]. (n,) -> two (n(n-1)/2,)"""
    steps, x = np.asarray(steps, dtype=np.float64), np.asarray(x, dtype=np.float64)
    i, j = _pairs(len(x))
    return steps[j] - steps[i], x[j] - x[i]


def mann_kendall(steps: np.ndarray, x: np.ndarray, diffs: tuple[np.ndarray, np.ndarray] | None = None,
                 ties: tuple[tuple[int, int, int], tuple[int, int, int]] | None = None) -> tuple[float, float]:
    """(tau_b, two-sided p) of x against steps: `scipy.stats.kendalltau`'s numbers (its default 'auto' method;
    tests/diagnosis/test_diagnosis_stats.py compares them). S = concordant - discordant pairs is read off the signs of the
    pairwise differences; p from the normal approximation with the tie-corrected variance, or scipy's exact
    distribution where scipy would use it (no ties, and n <= 33 or at most one pair out of order). scipy's
    wrapper cost a live guard's check about 0.4 ms per trend (benchmarks/README.md, "Guard").
    steps, x: (n,) finite; diffs: _pair_diffs(steps, x), ties: (_tie_stats(steps), _tie_stats(x)) when the
    caller has them -> 2 floats (NaN, NaN when one side is all ties)."""
    steps, x = np.asarray(steps, dtype=np.float64), np.asarray(x, dtype=np.float64)
    n = len(x)
    dx, dy = diffs if diffs is not None else _pair_diffs(steps, x)
    tot = n * (n - 1) // 2
    # signs as int8 (a pair's concordance is their product): arrays an eighth of float64's, which matters right
    # after a training step, when every fresh buffer of the n(n-1)/2 pairs costs page faults
    sx, sy = _sign8(dx), _sign8(dy)
    both = sx * sy
    s_xy = int(np.count_nonzero(both > 0)) - int(np.count_nonzero(both < 0))  # concordant - discordant
    (xtie, x0, x1), (ytie, y0, y1) = ties if ties is not None else (_tie_stats(steps), _tie_stats(x))
    if n < 2 or xtie == tot or ytie == tot:
        return float("nan"), float("nan")
    tau = min(1.0, max(-1.0, s_xy / math.sqrt(tot - xtie) / math.sqrt(tot - ytie)))
    joint = int(np.count_nonzero((sx == 0) & (sy == 0)))  # pairs tied on both sides
    dis = (tot - xtie - ytie + joint - s_xy) // 2
    if xtie == 0 and ytie == 0 and (n <= 33 or min(dis, tot - dis) <= 1):
        return tau, float(sps.kendalltau(steps, x).pvalue)  # scipy's exact distribution of S
    m = n * (n - 1.0)
    var = (m * (2 * n + 5) - x1 - y1) / 18 + 2 * xtie * ytie / m + x0 * y0 / (9 * m * (n - 2))
    return tau, math.erfc(abs(s_xy) / math.sqrt(var) / math.sqrt(2.0))


def _sign8(d: np.ndarray) -> np.ndarray:
    """The sign of each difference as int8 (-1, 0, 1). (m,) float -> (m,) int8"""
    return (d > 0).view(np.int8) - (d < 0).view(np.int8)


def _tie_stats(v: np.ndarray) -> tuple[int, int, int]:
    """Over the groups of equal values of sizes t: (sum t(t-1)/2, sum t(t-1)(t-2), sum t(t-1)(2t+5))."""
    _, counts = np.unique(v, return_counts=True)
    t = [int(c) for c in counts[counts > 1]]
    return (sum(c * (c - 1) // 2 for c in t), sum(c * (c - 1) * (c - 2) for c in t),
            sum(_tie_term(c) for c in t))


def theil_sen(steps: np.ndarray, x: np.ndarray, alpha: float = ALPHA,
              diffs: tuple[np.ndarray, np.ndarray] | None = None,
              ties: tuple[tuple[int, int, int], tuple[int, int, int]] | None = None) -> tuple[float, float, float]:
    """(slope, lo, hi): Theil-Sen's slope (median of the pairwise slopes) and Sen's (1968) rank interval at
    1 - alpha, with his variance corrected for ties in both coordinates. steps, x: (n,) finite -> 3 floats

    The same numbers as `scipy.stats.theilslopes` (tests/diagnosis/test_diagnosis_stats.py compares them), for a
    fraction of its cost: scipy sorts all n(n-1)/2 slopes, while the median and the two interval ranks are
    three order statistics, which `np.partition` finds in linear time (a live guard runs this at every check;
    measured in benchmarks/README.md, "Guard").
    """
    steps, x = np.asarray(steps, dtype=np.float64), np.asarray(x, dtype=np.float64)
    n = len(x)
    dx, dy = diffs if diffs is not None else _pair_diffs(steps, x)
    # pairs at the same step have no slope (the sign is handled by dividing dy by dx); with distinct steps, the
    # usual case, no pair is dropped and no masked copies are made (each is a fresh 256 KB buffer at 256 points)
    keep = dx != 0
    slopes = dy / dx if keep.all() else dy[keep] / dx[keep]
    big = len(slopes)
    if not big:
        return float("nan"), float("nan"), float("nan")
    (*_, step_ties), (*_, x_ties) = ties if ties is not None else (_tie_stats(steps), _tie_stats(x))
    var = (_tie_term(n) - step_ties - x_ties) / 18.0
    if var < 0:  # ties in both coordinates beyond what the correction allows: no interval, as scipy says
        return float(np.median(slopes)), float("nan"), float("nan")
    sigma = math.sqrt(var)
    z = _z_half(alpha)  # > 0
    hi_rank = min(int(np.round((big + z * sigma) / 2.0)), big - 1)
    lo_rank = max(int(np.round((big - z * sigma) / 2.0)) - 1, 0)
    mid = [(big - 1) // 2, big // 2]
    slopes.partition(sorted({lo_rank, hi_rank, *mid}))  # in place: slopes is this function's own array
    return float(slopes[mid].mean()), float(slopes[lo_rank]), float(slopes[hi_rank])


def _tie_term(t: int) -> int:
    """t(t-1)(2t+5): n's term of the variance of Kendall's S, and each tie group's correction to it."""
    return t * (t - 1) * (2 * t + 5)


@functools.lru_cache(maxsize=64)
def _pairs(n: int) -> tuple[np.ndarray, np.ndarray]:
    """Index pairs (i, j), i < j, of n points; cached, as the binned series of a run keep the same length."""
    i, j = np.triu_indices(n, 1)
    return i, j


@functools.lru_cache(maxsize=8)
def _z_half(alpha: float) -> float:
    return float(sps.norm.isf(alpha / 2.0))


@functools.lru_cache(maxsize=1024)
def _t_half(alpha: float, dof: int) -> float:
    return float(sps.t.ppf(1 - alpha / 2.0, dof))


def line_fit(steps: np.ndarray, x: np.ndarray) -> tuple[float, float, float]:
    """(slope, lo, hi): the least-squares slope of `x` on `steps` and its (1 - ALPHA) t interval on n - 2 degrees
    of freedom. A perfect line has stderr 0, hence lo = hi = slope. steps, x: (n,) finite, n >= 3 -> 3 floats

    The closed form (slope = Sxy / Sxx, stderr = sqrt(SSE / (n - 2) / Sxx)), as `scipy.stats.linregress` gives
    it, without its wrapper's cost (tests compare the two).
    """
    steps, x = np.asarray(steps, dtype=np.float64), np.asarray(x, dtype=np.float64)
    n = len(x)
    ds, dv = steps - steps.mean(), x - x.mean()
    sxx = float(ds @ ds)
    if sxx == 0.0:
        return float("nan"), float("nan"), float("nan")
    slope = float(ds @ dv) / sxx
    sse = max(0.0, float(dv @ dv) - slope * slope * sxx)
    half = _t_half(ALPHA, n - 2) * math.sqrt(sse / (n - 2) / sxx)
    return slope, slope - half, slope + half


def runs_of(mask: np.ndarray) -> list[tuple[int, int]]:
    """Index ranges [i0, i1] (inclusive) of consecutive True points. mask: (T,) bool -> list of (i0, i1)"""
    m = np.asarray(mask, dtype=bool)
    if not m.any():
        return []
    d = np.diff(np.concatenate([[0], m.astype(np.int8), [0]]))
    starts, ends = np.nonzero(d == 1)[0], np.nonzero(d == -1)[0] - 1
    return list(zip(starts.tolist(), ends.tolist()))


def sustained(mask: np.ndarray, min_points: int) -> np.ndarray:
    """`mask` with runs shorter than `min_points` consecutive points removed: a spike that returns at once is
    not a level. mask: (T,) bool -> (T,) bool"""
    out = np.zeros(len(mask), dtype=bool)
    for i0, i1 in runs_of(mask):
        if i1 - i0 + 1 >= min_points:
            out[i0:i1 + 1] = True
    return out


def smooth(x: np.ndarray, window: int = 5) -> np.ndarray:
    """Centred rolling median over `window` points (fewer at the ends), NaN ignored: a level without lag, in
    which a lone spike does not show. x: (T,) -> (T,)"""
    x = np.asarray(x, dtype=np.float64)
    if window % 2 == 0 or np.isinf(x).any():  # pandas' own rule: an even window's centre, an inf's NaN
        return pd.Series(x).rolling(window, min_periods=1, center=True).median().to_numpy()
    return series.centred_median(x, window)


def first_level(x: np.ndarray, k: int = 3) -> float:
    """The level a series starts at: median of its first `k` finite points (NaN when none). x: (T,) -> float"""
    f = finite(x)[:k]
    return float(np.median(f)) if len(f) else float("nan")


def is_constant(x: np.ndarray) -> bool:
    """True when every finite value is the same (and there is at least one)."""
    f = finite(x)
    return bool(len(f)) and bool(np.all(f == f[0]))


def lattice_size(x: np.ndarray, max_n: int, tol: float = 1e-3) -> int | None:
    """The smallest n <= max_n such that every finite value of x is a multiple of 1/n (within `tol`, a printed
    value's rounding), else None: the step means of a 0/1 reward over n responses are k/n. x: (T,) -> int"""
    f = finite(x)
    if not len(f):
        return None
    for n in range(1, max_n + 1):
        if np.all(np.abs(f * n - np.round(f * n)) <= tol * n):
            return n
    return None


def tied_share(p: np.ndarray, g: float) -> np.ndarray:
    """Share of groups of g independent 0/1 rewards at pass rate p whose rewards are all equal: p^g + (1 - p)^g.
    Responses to one prompt are not independent (prompts differ in difficulty), and p^g + (1 - p)^g is convex in
    p, so over prompts of varying difficulty the observed share is at least this. p: (T,) -> (T,)"""
    p = np.clip(np.asarray(p, dtype=np.float64), 0.0, 1.0)
    return p ** g + (1.0 - p) ** g



def median_low(x: np.ndarray, alpha: float = ALPHA) -> float:
    """The lower end of the median's 1 - alpha confidence interval from the order statistics (the binomial sign
    interval of scipy.stats.quantile_test): a level held by few points is known only that well, so a bar judged on
    it must be cleared by this end, not by the median alone. -inf for too few points. (T,) -> float
    Hand-worked: 14 points 0.5625 0.5625 0.625 0.625 0.6875 0.6875 0.6875 0.8125 0.8125 0.875 0.875 0.875 0.9375 1:
    median 0.75; the 95% interval rests on the 3rd and 12th values, so its lower end is 0.625."""
    v = finite(np.asarray(x, dtype=float))
    if len(v) == 0:
        return -math.inf
    low = sps.quantile_test(v, q=float(np.median(v)), p=0.5).confidence_interval(1 - alpha).low
    return float(low) if np.isfinite(low) else -math.inf


def share_low(k: int, n: int, alpha: float = ALPHA) -> float:
    """The lower end of the 1 - alpha Clopper-Pearson interval of a share of k in n (scipy.stats.binomtest): 20 in
    20 -> 0.83, 10 in 10 -> 0.69. 0 for n = 0."""
    return float(sps.binomtest(int(k), int(n)).proportion_ci(1 - alpha).low) if n > 0 else 0.0
