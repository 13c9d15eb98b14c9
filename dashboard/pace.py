"""How often the Live page refreshes: the interval the user chose, or longer while a refresh takes longer.

A fragment rerun every 2 s that takes 3 s on a busy machine is queued behind itself: the page stayed greyed out
(stale) in 90 of 92 samples (issue 39). Pure: no streamlit.
"""

from __future__ import annotations

import math

# The refresh waits at least this many times what the last one took, so the page is drawn and readable between
# refreshes for at least half the time.
BACKOFF = 2.0


def refresh_interval(chosen: float, took: float | None) -> int:
    """Seconds between refreshes: `chosen`, or BACKOFF x the last refresh's `took` seconds (rounded up) when that
    is longer. took None: not measured yet."""
    if took is None or not math.isfinite(took):
        return int(chosen)
    return int(max(chosen, math.ceil(BACKOFF * took)))
