"""Posting JSON to a webhook from a background thread, so that a slow or dead endpoint never slows a step.

    poster = Poster("https://hooks.slack.com/services/...", "hooks.slack.com")
    poster.put({"text": "..."})   # returns at once: the body is queued
    poster.close(wait=5.0)        # at the end of the run: at most `wait` seconds for what is still queued

Each body is tried 1 + RETRIES times, each try at most `timeout` seconds, with a growing pause between tries.
A refusal (HTTP 4xx other than 429) is not retried: the same body would be refused again. A body that is
never delivered is reported on stderr as one line naming only the endpoint's host (the path of a Slack or
Discord webhook is its secret). The thread is a daemon: a process that ends does not wait for a dead endpoint.
"""

from __future__ import annotations

import json
import queue
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from typing import Any

TIMEOUT_S = 5.0  # per try; Slack and Discord answer a webhook in well under a second, a proxy may add a few
RETRIES = 2  # tries after the first: a restarting endpoint (a 502 during a deploy) gets ~3 s to come back
BACKOFF_S = 1.0  # the pause before retry k is BACKOFF_S * 2**k
QUEUE_MAX = 256  # bodies waiting; findings change a few times a run, so a full queue means a dead endpoint
RETRY_STATUSES = frozenset({408, 425, 429})  # besides 5xx: the endpoint asks to try again later
_STOP = object()


class Poster:
    """One endpoint, one daemon thread started with the first body. Counts: sent, failed, dropped."""

    def __init__(self, url: str, public: str, timeout: float = TIMEOUT_S, retries: int = RETRIES,
                 backoff: float = BACKOFF_S, report: Callable[[str, str, int], None] | None = None) -> None:
        """public: how the endpoint is named in messages (its host, never its secret path); report: told of an
        undelivered body as report(public, last error, tries) (default: one English line on stderr)."""
        self.url, self.public = url, public
        self.timeout, self.retries, self.backoff = float(timeout), max(0, int(retries)), float(backoff)
        self.report = report or _stderr
        self.sent = self.failed = self.dropped = 0
        self._queue: queue.Queue = queue.Queue()  # unbounded, so close() never blocks; put() keeps it short
        self._thread: threading.Thread | None = None
        self._closed = False

    def put(self, body: dict[str, Any]) -> None:
        """Queue one JSON body; never blocks (a full queue drops the body and counts it)."""
        if self._closed:
            return
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name=f"grposcope-alert {self.public}", daemon=True)
            self._thread.start()
        if self._queue.qsize() >= QUEUE_MAX:
            self.dropped += 1
            return
        self._queue.put(json.dumps(body, ensure_ascii=False, allow_nan=False).encode("utf-8"))

    def close(self, wait: float = TIMEOUT_S) -> bool:
        """No more bodies; wait at most `wait` seconds for the queued ones. True when all were handled."""
        self._closed = True
        if self._thread is None:
            return True
        self._queue.put(_STOP)
        self._thread.join(max(wait, 0.0))
        return not self._thread.is_alive()

    def _run(self) -> None:
        while (data := self._queue.get()) is not _STOP:
            error, tries = self._deliver(data)
            if error is None:
                self.sent += 1
            else:
                self.failed += 1
                self.report(self.public, error, tries)

    def _deliver(self, data: bytes) -> tuple[str | None, int]:
        """Try the body until it is taken: (None, tries), or (the last error as one line, tries)."""
        error: str | None = ""
        for attempt in range(self.retries + 1):
            if attempt:
                time.sleep(self.backoff * 2 ** (attempt - 1))
            error, again = self._try(data)
            if error is None or not again:
                break
        return error, attempt + 1

    def _try(self, data: bytes) -> tuple[str | None, bool]:
        """One POST: (None, _) when taken; (the error, whether another try may succeed) otherwise."""
        request = urllib.request.Request(self.url, data=data, method="POST",
                                         headers={"Content-Type": "application/json; charset=utf-8",
                                                  "User-Agent": "grposcope-alert"})
        try:
            # an opener of its own reads the proxy variables now: urlopen's shared opener keeps those of its first
            # call in the process (a proxy set later, as on a cluster's login node, would be skipped)
            with urllib.request.build_opener().open(request, timeout=self.timeout) as response:
                response.read(1 << 16)
            return None, False
        except urllib.error.HTTPError as e:
            return f"HTTP {e.code}", e.code >= 500 or e.code in RETRY_STATUSES
        except (urllib.error.URLError, OSError, ValueError) as e:  # refused, unreachable, timed out, bad reply
            reason = getattr(e, "reason", None) or e
            return f"{type(reason).__name__}: {reason}" if not isinstance(reason, str) else reason, True


def _stderr(public: str, error: str, tries: int) -> None:
    print(f"grposcope alert: {public}: {error} (after {tries} tries)", file=sys.stderr, flush=True)
