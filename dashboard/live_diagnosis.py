"""The Live page's diagnosis: the newest one finished, recomputed beside the pages, never inside their refresh.

Why (issue 38, benchmarks/README.md "Live page lag"): with ten Live pages on a run written at 20 steps/s every
refresh met a new run version, so one page diagnosed the run (reading every sample part) while the nine others
waited on the cache's lock for that version: 69% of the pages' time went there, and the "last step" tile lagged
the writer by a median 3 s, p95 7.5 s. Here a page gets the last finished diagnosis at once; a newer one is
computed by one background thread per run, started by a page that sees the run has moved on. Only the first
diagnosis of a run is computed in the page (its first view should list its findings), once for all pages.
The Live page's checklist figure is kept the same way (dashboard/data.py live_figure), the page waiting for the
newer one only a moment (`wait_s`): building it took 0.2-0.5 s of a refresh, and the chart was greyed out
(Streamlit's stale look) until it came (issue 39). Pure: no streamlit.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Hashable
from typing import Any

# A new diagnosis starts no sooner than this many times the last one's duration after that one ended: the
# background work then takes at most a third of the one core the server's Python runs on (one GIL), whatever the
# run's length; the same factor as the Live page's own back-off (pace.BACKOFF).
GAP_FACTOR = 2.0


class LatestDiagnosis:
    """The newest diagnosis of one run. `compute()` diagnoses the run as it is now; `get(version)` returns
    (version it was computed at, diagnosis) and starts a newer one in the background when `version` differs."""

    def __init__(self, compute: Callable[[], Any], clock: Callable[[], float] = time.monotonic,
                 start: Callable[[Callable[[], None]], None] | None = None) -> None:
        """clock: seconds (tests pass their own); start: runs a callable in the background (tests run it when they
        choose); default a daemon thread."""
        self._compute, self._clock = compute, clock
        self._start = start or (lambda fn: threading.Thread(target=fn, daemon=True, name="live-diagnosis").start())
        self._lock = threading.Condition()  # guards the fields below; notified when one is done
        self._first = threading.Lock()  # the first diagnosis, computed in a page: once for all pages
        self._done: tuple[Hashable, Any, BaseException | None] | None = None  # version, diagnosis, its error
        self._running = False
        self._not_before = 0.0

    def get(self, version: Hashable, wait_s: float = 0.0,
            compute: Callable[[], Any] | None = None) -> tuple[Hashable, Any]:
        """(version, diagnosis) of the newest diagnosis finished. Raises the error the engine raised on it.

        wait_s: seconds (of the real clock) to wait for `version`'s own when it is not done yet; compute: what
        makes the result of `version` when one is started by this call (default: the one given at creation)."""
        work = compute or self._compute
        if self._done is None:
            with self._first:
                if self._done is None:
                    self._run(version, work)
        with self._lock:
            newer = self._done[0] != version and not self._running and self._clock() >= self._not_before
            if newer:
                self._running = True
        if newer:
            self._start(lambda: self._run(version, work))
        with self._lock:
            if wait_s > 0 and self._running:
                self._lock.wait_for(lambda: not self._running, timeout=wait_s)
            done = self._done
        if done[2] is not None:
            raise done[2]
        return done[0], done[1]

    def _run(self, version: Hashable, compute: Callable[[], Any]) -> None:
        began = self._clock()
        try:
            result = (version, compute(), None)
        except Exception as e:  # noqa: BLE001 - kept and raised to the page that asks, as the engine's failure
            result = (version, None, e)
        ended = self._clock()
        with self._lock:
            self._done = result
            self._running = False
            self._not_before = ended + GAP_FACTOR * (ended - began)
            self._lock.notify_all()
