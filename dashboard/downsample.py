"""Downsampling for drawing long series without losing spikes.

A 100,000-step run drawn point by point is slow in the browser and no more readable than 2,000 points per
series, but every-n-th-point thinning hides exactly the one-step spikes a diagnosis is about. MinMaxLTTB
(tsdownsample, compiled) keeps each bucket's min and max and then picks the visually largest triangles, so
a single spike always survives. Without tsdownsample a per-bucket min/max in numpy does the same job.
"""

from __future__ import annotations

import numpy as np

try:
    from tsdownsample import MinMaxLTTBDownsampler
except ImportError:  # pragma: no cover - exercised by the fallback test with the backend forced
    MinMaxLTTBDownsampler = None

DEFAULT_POINTS = 2000  # per series; a chart 1,000-2,000 px wide shows no more than this


def minmax_indices(y: np.ndarray, n_out: int) -> np.ndarray:
    """Indices of the first, last, and each bucket's min and max of `y` (finite values), sorted."""
    n = len(y)
    if n <= n_out:
        return np.arange(n)
    n_buckets = max(1, (n_out - 2) // 2)
    edges = np.linspace(1, n - 1, n_buckets + 1).astype(np.int64)
    starts, ends = edges[:-1], edges[1:]
    keep = ends > starts
    starts, ends = starts[keep], ends[keep]
    # reduceat over the bucket starts gives each bucket's extreme; argmin/argmax need a per-bucket pass,
    # done here on a padded 2-D view so that it stays vectorised.
    width = int((ends - starts).max())
    cols = starts[:, None] + np.arange(width)[None, :]
    valid = cols < ends[:, None]
    cols = np.where(valid, cols, starts[:, None])
    block = y[cols]
    lo = cols[np.arange(len(cols)), np.where(valid, block, np.inf).argmin(axis=1)]
    hi = cols[np.arange(len(cols)), np.where(valid, block, -np.inf).argmax(axis=1)]
    return np.unique(np.concatenate([[0, n - 1], lo, hi]))


def spike_preserving_indices(x: np.ndarray, y: np.ndarray, n_out: int = DEFAULT_POINTS,
                             backend: str = "auto") -> np.ndarray:
    """Indices into (x, y) to draw: at most about `n_out`, every local extreme of a bucket kept.

    Non-finite y (NaN for "not logged this step", inf) are left out of the selection; the caller marks
    infinities separately. `x` must be increasing. backend: "auto", "tsdownsample" or "numpy".
    """
    y = np.asarray(y, dtype=np.float64)
    finite = np.flatnonzero(np.isfinite(y))
    if len(finite) <= n_out:
        return finite
    yf = y[finite]
    use_ts = backend == "tsdownsample" or (backend == "auto" and MinMaxLTTBDownsampler is not None)
    if use_ts:
        xf = np.asarray(x, dtype=np.float64)[finite]
        picked = MinMaxLTTBDownsampler().downsample(xf, yf, n_out=max(n_out, 4)).astype(np.int64)
    else:
        picked = minmax_indices(yf, n_out)
    return finite[picked]


def union_indices(x: np.ndarray, ys: list[np.ndarray], n_out: int = DEFAULT_POINTS,
                  backend: str = "auto") -> np.ndarray:
    """One shared set of row indices for several series of a panel, so a unified hover shows them all."""
    if not ys:
        return np.arange(0)
    parts = [spike_preserving_indices(x, y, n_out, backend) for y in ys]
    return np.unique(np.concatenate(parts)) if parts else np.arange(0)
