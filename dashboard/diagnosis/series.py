"""Robust series helpers the rules share. Pure numpy/pandas; every function takes 1-D arrays of length T.

Why rolling medians and runs of consecutive steps rather than single values: a GRPO batch is small, so
one step's reward or KL is noisy. A rule looks at the median of a short window, demands that a condition
hold for several consecutive steps, and merges episodes separated by less than a cooldown, so that one
noisy step neither fires a rule nor keeps it firing.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from numpy.lib.stride_tricks import sliding_window_view
from scipy import ndimage

WARMUP_STEPS = 5  # the first logged steps are skipped by trend rules: optimizer state and caches warm up
MIN_CONSECUTIVE = 5  # a condition must hold this many logged steps in a row to count
COOLDOWN_STEPS = 10  # episodes closer than this are one episode


def rolling_median(x: np.ndarray, window: int) -> np.ndarray:
    """Trailing median over `window` points, ignoring NaN; NaN where fewer than half the window is finite.

    x: (T,) -> (T,)
    """
    x = np.asarray(x, dtype=np.float64)
    lo = max(1, window // 2)
    if np.isinf(x).any():
        return pd.Series(x).rolling(window, min_periods=lo).median().to_numpy()  # pandas' rule for an inf: NaN
    if len(x) <= 2 * window:
        return _sorted_windows_median(x, window, lo)
    if np.isnan(x).any():
        return pd.Series(x).rolling(window, min_periods=lo).median().to_numpy()
    # Without NaN, scipy's rank filters give the full windows 3-20x faster than pandas on 100k points (an even
    # window's median is the mean of its two middle ranks); the first window - 1 points keep pandas' rule.
    out = median_filter(x, window)
    out[:window - 1] = _sorted_windows_median(x[:window - 1], window, lo)
    return out


def _sorted_windows_median(x: np.ndarray, window: int, lo: int, centred: bool = False) -> np.ndarray:
    """Pandas' rolling median (min_periods=lo; trailing, or centred for an odd window) of x without inf, by
    sorting every window at once: a (T, window) sort, for short series and the ends of long ones, where a pandas
    rolling object cost a live guard's check 0.1-0.2 ms per call. Equal to pandas' values (tests/test_diagnosis.py).
    x: (T,) -> (T,)"""
    if not len(x):
        return x.copy()
    left = window // 2 if centred else window - 1
    pad = np.concatenate([np.full(left, np.nan), x, np.full(window - 1 - left, np.nan)])
    s = np.sort(sliding_window_view(pad, window), axis=1)  # (T, window); NaN sorts last
    n = window - np.isnan(s).sum(axis=1)  # the values present in each window
    r = np.arange(len(x))
    med = (s[r, (n - 1) // 2] + s[r, n // 2]) / 2  # the two middle ranks of the n present (one when n is odd)
    return np.where(n >= lo, med, np.nan)


def centred_median(x: np.ndarray, window: int) -> np.ndarray:
    """Centred rolling median over an odd `window` (fewer points at the ends), NaN ignored; pandas'
    rolling(window, min_periods=1, center=True).median() without its cost. x: (T,) no inf -> (T,)"""
    x = np.asarray(x, dtype=np.float64)
    if len(x) <= 2 * window or np.isnan(x).any():
        return _sorted_windows_median(x, window, 1, centred=True)
    out = median_filter(x, window, trailing=False)  # full windows in C; the ends keep pandas' rule
    h = window // 2
    if h:  # (window 1 has no ends; out[-0:] would be all of it)
        out[:h] = _sorted_windows_median(x[:window], window, 1, centred=True)[:h]
        out[-h:] = _sorted_windows_median(x[-window:], window, 1, centred=True)[-h:]
    return out


def median_filter(x: np.ndarray, window: int, trailing: bool = True) -> np.ndarray:
    """Median of every full window of finite x, trailing (ending at each point) or centred; the points without a
    full window are the filter's 'nearest' padding, for the caller to replace. x: (T,) -> (T,)"""
    origin = (window - 1) // 2 if trailing else 0
    if window % 2:
        return ndimage.median_filter(x, size=window, origin=origin, mode="nearest")
    lo = ndimage.rank_filter(x, window // 2 - 1, size=window, origin=origin, mode="nearest")
    return (lo + ndimage.rank_filter(x, window // 2, size=window, origin=origin, mode="nearest")) / 2


def episodes(mask: np.ndarray, min_len: int = MIN_CONSECUTIVE, cooldown: int = COOLDOWN_STEPS) -> list[tuple[int, int]]:
    """Index ranges [i0, i1] (inclusive) where `mask` holds for at least `min_len` points in a row,
    after merging runs separated by fewer than `cooldown` points.

    mask: (T,) bool -> list of (i0, i1)
    """
    mask = np.asarray(mask, dtype=bool)
    if not mask.any():
        return []
    d = np.diff(np.concatenate([[0], mask.astype(np.int8), [0]]))
    starts, ends = np.nonzero(d == 1)[0], np.nonzero(d == -1)[0] - 1
    # a short gap (fewer than `cooldown` points) between two runs: the same episode continues
    keep = np.concatenate([[True], starts[1:] - ends[:-1] - 1 >= cooldown])
    first = starts[keep]
    last = ends[np.concatenate([keep[1:], [True]])]
    counts = np.add.reduceat(mask.astype(np.int64), first) if len(first) else np.array([], dtype=np.int64)
    # reduceat sums up to the next episode's start: the points between an episode's end and it are False
    return [(int(a), int(b)) for a, b, c in zip(first, last, counts) if c >= min_len]


def early_level(x: np.ndarray, window: int, warmup: int = WARMUP_STEPS) -> float:
    """The run's own early level: median of the finite points in [warmup, warmup + window).

    Used where a healthy value depends on model and task (entropy, KL, length), so a rule compares a
    run with its own start instead of an absolute floor.
    """
    seg = np.asarray(x, dtype=np.float64)[warmup:warmup + window]
    seg = seg[np.isfinite(seg)]
    return float(np.median(seg)) if len(seg) else float("nan")


def late_level(x: np.ndarray, window: int) -> float:
    """Median of the finite points in the last `window` points."""
    seg = np.asarray(x, dtype=np.float64)[-window:]
    seg = seg[np.isfinite(seg)]
    return float(np.median(seg)) if len(seg) else float("nan")


def window_for(n: int, frac: float = 0.1, lo: int = 5, hi: int = 50) -> int:
    """A window of about `frac` of the run, clamped to [lo, hi] points."""
    return int(min(hi, max(lo, round(n * frac))))


def finite(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, dtype=np.float64)
    return x[np.isfinite(x)]
