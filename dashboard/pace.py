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


# A run whose writer recorded its end: nothing will be written, so its page does not refresh at all (a finished
# run refreshed every 2 s was greyed out in the shots of issue 39, for nothing).
ENDED = ("finished", "failed", "stopped")
# A run that went quiet without recording an end (a `running` run whose heartbeat stopped, or a log read without
# a writer's record, status `unknown`) may be written again (a long step, a job resumed): its page looks again this
# often, drawing nothing unless the run moved. 30 s: half the default stale window (collectors.meta.STALE_AFTER_S,
# 60 s), so a run that comes back is followed within that window's time.
WAKE_S = 30


def refreshing(status: str, last_update: float | None, now: float, stale_after_s: float) -> bool:
    """Whether the Live page refreshes a run on a timer: its writer is running (status `running`), or it is a log
    with no writer's record (status `unknown`) whose files changed within the last `stale_after_s` seconds. Times
    in unix seconds."""
    if status == "running":
        return True
    if status != "unknown" or last_update is None or not math.isfinite(last_update):
        return False
    return now - last_update <= stale_after_s


def wakes(status: str) -> bool:
    """Whether a run not refreshing is looked at again every WAKE_S seconds: one with no end recorded."""
    return status not in ENDED
