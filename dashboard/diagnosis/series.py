"""Robust series helpers the rules share. Pure numpy/pandas; every function takes 1-D arrays of length T.

Why rolling medians and runs of consecutive steps rather than single values: a GRPO batch is small, so
one step's reward or KL is noisy. A rule looks at the median of a short window, demands that a condition
hold for several consecutive steps, and merges episodes separated by less than a cooldown, so that one
noisy step neither fires a rule nor keeps it firing.
"""

from __future__ import annotations

import bottleneck as bn
import numpy as np
import pandas as pd

WARMUP_STEPS = 5  # the first logged steps are skipped by trend rules: optimizer state and caches warm up
MIN_CONSECUTIVE = 5  # a condition must hold this many logged steps in a row to count
COOLDOWN_STEPS = 10  # episodes closer than this are one episode


def rolling_median(x: np.ndarray, window: int) -> np.ndarray:
    """Trailing median over `window` points, ignoring NaN; NaN where fewer than half the window is finite:
    pandas' rolling(window, min_periods=window // 2).median() to the bit (tests/diagnosis/test_diagnosis.py).

    bottleneck's move_median (a double heap in C) does it 10x faster than pandas or scipy's rank filters at the
    sizes a live guard judges (a few hundred points, several series a check; benchmarks/README.md, Guard); a
    series with an inf takes pandas' own rule for it (NaN).
    x: (T,) -> (T,)
    """
    x = np.asarray(x, dtype=np.float64)
    lo = max(1, window // 2)
    if np.isinf(x).any():
        return pd.Series(x).rolling(window, min_periods=lo).median().to_numpy()
    if lo > len(x):  # no window holds enough points (an empty series included)
        return np.full(len(x), np.nan)
    # a window longer than the series sees what one of the series' length sees, at every point
    return bn.move_median(x, min(window, len(x)), min_count=lo)


def centred_median(x: np.ndarray, window: int) -> np.ndarray:
    """Centred rolling median over an odd `window` (fewer points at the ends), NaN ignored: pandas'
    rolling(window, min_periods=1, center=True).median() without its cost, as the trailing median of the
    series followed by window // 2 NaNs, read window // 2 points later. x: (T,) no inf -> (T,)"""
    x = np.asarray(x, dtype=np.float64)
    h = window // 2
    padded = np.concatenate([x, np.full(h, np.nan)]) if h else x
    if not len(padded):
        return padded.copy()
    return bn.move_median(padded, min(window, len(padded)), min_count=1)[h:]


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
