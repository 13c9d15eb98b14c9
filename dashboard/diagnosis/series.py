"""Robust series helpers the rules share. Pure numpy/pandas; every function takes 1-D arrays of length T.

Why rolling medians and runs of consecutive steps rather than single values: a GRPO batch is small, so
one step's reward or KL is noisy. A rule looks at the median of a short window, demands that a condition
hold for several consecutive steps, and merges episodes separated by less than a cooldown, so that one
noisy step neither fires a rule nor keeps it firing.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

WARMUP_STEPS = 5  # the first logged steps are skipped by trend rules: optimizer state and caches warm up
MIN_CONSECUTIVE = 5  # a condition must hold this many logged steps in a row to count
COOLDOWN_STEPS = 10  # episodes closer than this are one episode


def rolling_median(x: np.ndarray, window: int) -> np.ndarray:
    """Trailing median over `window` points, ignoring NaN; NaN where fewer than half the window is finite.

    x: (T,) -> (T,)
    """
    s = pd.Series(np.asarray(x, dtype=np.float64))
    return s.rolling(window, min_periods=max(1, window // 2)).median().to_numpy()


def episodes(mask: np.ndarray, min_len: int = MIN_CONSECUTIVE, cooldown: int = COOLDOWN_STEPS) -> list[tuple[int, int]]:
    """Index ranges [i0, i1] (inclusive) where `mask` holds for at least `min_len` points in a row,
    after merging runs separated by fewer than `cooldown` points.

    mask: (T,) bool -> list of (i0, i1)
    """
    mask = np.asarray(mask, dtype=bool)
    runs: list[list[int]] = []
    i, n = 0, len(mask)
    while i < n:
        if mask[i]:
            j = i
            while j + 1 < n and mask[j + 1]:
                j += 1
            if runs and i - runs[-1][1] - 1 < cooldown:
                runs[-1][1] = j  # a short gap: the same episode continues
            else:
                runs.append([i, j])
            i = j + 1
        else:
            i += 1
    return [(a, b) for a, b in runs if int(mask[a:b + 1].sum()) >= min_len]


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
