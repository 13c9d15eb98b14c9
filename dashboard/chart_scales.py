"""Each charted metric's scale: the interval its axis always holds, so float noise is never drawn as a spike.

Plotly autoscales an axis to its values: a first-step ratio of 1 +- 1e-7 then fills a panel 0.9999998999999999 ..
1.0000001 and a truncated fraction under 1% spans 0 .. 0.008 with full-height spikes (issue 39). A metric has a
unit and a size that matters; its axis holds at least the interval below, and its own values beyond it.
Pure: no plotly, no streamlit.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Scale:
    """The interval [lo, hi] an axis holds whatever its values (None: only its values)."""

    lo: float
    hi: float


# A ratio current/old within 1e-3 of 1 is 1: fp32 round-off gives 1e-6, a bf16 rollout against fp32 training
# 1e-2 .. 1e-1 (dashboard/diagnosis/rules/first_step.py). An axis 1 +- 0.01 (the rule's FIRST_STEP_MAX_DEV, the
# deviation that matters) draws round-off as the line at 1 and a bf16 mismatch across the panel.
RATIO_SPAN = 0.01
# A fraction (of groups, of completions) is read on 0 .. 1: 0.8% truncation is a sliver, not a spike.
FRACTION = Scale(0.0, 1.0)
# The clip fraction's size that matters is PPO practice's 0.1-0.2 at a clip range of 0.2 (rules/kl.py CLIP_HIGH):
# on 0 .. 0.2 a first step clipping 0.5% of the tokens still shows, and a clip fraction of 1e-4 does not fill it.
CLIP = Scale(0.0, 0.2)
# KL to the reference in nats: a settled run sits at 0.01-0.2, an explosion goes past 0.5 (rules/kl.py); below
# 0.05 (KL_FLOOR_SETTLED) it is "near 0", so the axis holds 0 .. 0.05.
KL = Scale(0.0, 0.05)
# Entropy and length are read against their own early level (a fall below half, a growth by 1.5x): from 0.
FROM_ZERO = Scale(0.0, 0.0)
# Any axis spans at least this share of its values' magnitude: noise in the 7th digit of a constant series (a
# reward logged as 0.6000001, 0.5999999) is no trend to fill a panel with.
MIN_RELATIVE_SPAN = 0.01

SCALES: dict[str, Scale] = {
    "policy/ratio_first_step": Scale(1.0 - RATIO_SPAN, 1.0 + RATIO_SPAN),
    "policy/ratio_first_step_max_dev": Scale(0.0, RATIO_SPAN),
    "completions/truncated_frac": FRACTION,
    "groups/zero_std_frac": FRACTION,
    "groups/all_pass_frac": FRACTION,
    "groups/all_fail_frac": FRACTION,
    "reward/pass_rate": FRACTION,
    "eval/pass_rate": FRACTION,
    "policy/clipfrac": CLIP,
    "policy/clipfrac_low": CLIP,
    "policy/clipfrac_high": CLIP,
    "policy/kl_ref": KL,
    "policy/entropy": FROM_ZERO,
    "completions/len_mean": FROM_ZERO,
    "completions/len_max": FROM_ZERO,
}


def scaled_range(values: np.ndarray, columns: tuple[str, ...] = (),
                 extra: tuple[float, ...] = ()) -> tuple[float, float] | None:
    """The y range of an axis drawing `values` (any shape, NaN/inf ignored) of `columns`: their values and
    `extra` (a threshold), the interval of every column's Scale, and at least MIN_RELATIVE_SPAN of the values'
    magnitude, padded by 8% of the span (a constant: 0 .. twice it; a constant 0: 0 .. 1); from 0 for values that never go below it when their
    lowest is near 0, so no negative tick shows for a fraction or a norm. None when there is nothing to hold."""
    v = np.asarray(values, dtype=np.float64).ravel()
    v = np.concatenate([v[np.isfinite(v)], [e for e in extra if np.isfinite(e)]])
    scales = [SCALES[c] for c in columns if c in SCALES]
    if not len(v) and not scales:
        return None
    lo = min(([float(v.min())] if len(v) else []) + [s.lo for s in scales])
    hi = max(([float(v.max())] if len(v) else []) + [s.hi for s in scales])
    if hi - lo <= max(abs(hi), abs(lo)) * 1e-9:  # a constant with no scale: in the middle of an axis from 0
        # (a constant 0 on 0..1: a fraction or a norm stuck at 0 drew negative ticks on -1..1)
        return (0.0, 2 * hi) if hi > 0 else (2 * lo, 0.0) if lo < 0 else (0.0, 1.0)
    nonneg = lo >= 0
    least = MIN_RELATIVE_SPAN * max(abs(lo), abs(hi))
    if hi - lo < least:  # a constant, or noise in its last digits: in the middle of an axis of the least span
        mid = (lo + hi) / 2
        lo, hi = mid - least / 2, mid + least / 2
        if nonneg and lo < 0:
            lo, hi = 0.0, hi - lo
    pad = 0.08 * (hi - lo)
    lower = lo - pad
    if nonneg and lower < 0:
        lower = 0.0 if lo <= (hi - lo) * 0.25 else lo - min(pad, lo)
    return float(lower), float(hi + pad)
