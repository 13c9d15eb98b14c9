"""The Live page's diagnosis never makes a refresh wait (issue 38, Load): the newest finished one is returned at
once, a newer one is computed in the background, one at a time, paced by how long the last one took."""

import threading

import pytest

from dashboard.live_diagnosis import GAP_FACTOR, LatestDiagnosis


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def make(clock: Clock, took: float = 0.0):
    """A LatestDiagnosis whose diagnoses are numbered 1, 2, ... and take `took` seconds of `clock`; background
    work is queued in `later`, run when the test says."""
    calls = []
    later = []

    def compute():
        clock.now += took
        calls.append(len(calls) + 1)
        return f"diagnosis {len(calls)}"

    return LatestDiagnosis(compute, clock=clock, start=later.append), calls, later


def test_the_first_is_computed_in_the_page_then_newer_ones_beside_it():
    clock = Clock()
    latest, calls, later = make(clock)
    assert latest.get("v1") == ("v1", "diagnosis 1")  # a first view lists its findings
    assert latest.get("v1") == ("v1", "diagnosis 1") and calls == [1] and later == []  # same version: no work
    assert latest.get("v2") == ("v1", "diagnosis 1")  # the run moved on: the page gets the last one at once
    assert len(later) == 1 and calls == [1]  # and a newer one is queued, not computed in the page
    assert latest.get("v3") == ("v1", "diagnosis 1") and len(later) == 1  # one at a time
    later.pop()()
    assert calls == [1, 2]
    assert latest.get("v3") == ("v2", "diagnosis 2")  # computed at the version that started it


def test_a_new_diagnosis_waits_twice_what_the_last_took():
    clock = Clock()
    latest, _calls, later = make(clock, took=3.0)
    latest.get("v1")  # took 3 s: the next may start 6 s after it ended
    clock.now += GAP_FACTOR * 3.0 - 0.5
    latest.get("v2")
    assert later == []
    clock.now += 0.5
    latest.get("v2")
    assert len(later) == 1


def test_the_engines_error_is_raised_to_the_page_and_the_next_version_tried_again():
    clock = Clock()
    outcomes = iter([ValueError("bad column"), "diagnosis 2"])

    def compute():
        out = next(outcomes)
        if isinstance(out, Exception):
            raise out
        return out

    later = []
    latest = LatestDiagnosis(compute, clock=clock, start=later.append)
    with pytest.raises(ValueError, match="bad column"):
        latest.get("v1")
    with pytest.raises(ValueError, match="bad column"):
        latest.get("v2")  # still the last finished one; a new try is queued
    later.pop()()
    assert latest.get("v2") == ("v2", "diagnosis 2")


def test_pages_arriving_together_compute_the_first_once():
    clock = Clock()
    entered, release = threading.Event(), threading.Event()
    calls = []

    def compute():
        calls.append(1)
        entered.set()
        release.wait(10)
        return "diagnosis"

    latest = LatestDiagnosis(compute, clock=clock, start=lambda fn: None)
    results = []
    pages = [threading.Thread(target=lambda: results.append(latest.get("v1"))) for _ in range(4)]
    pages[0].start()
    entered.wait(10)
    for p in pages[1:]:
        p.start()
    release.set()
    for p in pages:
        p.join(10)
    assert calls == [1] and results == [("v1", "diagnosis")] * 4


def test_a_page_waits_a_moment_for_the_newer_one_then_draws_the_last():
    clock = Clock()
    latest, _calls, _later = make(clock)
    latest._start = lambda fn: threading.Thread(target=fn).start()  # a real thread: the page really waits
    assert latest.get("v1") == ("v1", "diagnosis 1")
    fast = latest.get("v2", wait_s=5.0, compute=lambda: "figure of v2")  # done within the wait: the new one
    assert fast == ("v2", "figure of v2")
    gate = threading.Event()
    slow = latest.get("v3", wait_s=0.05, compute=lambda: gate.wait(10) and "figure of v3")
    assert slow == ("v2", "figure of v2")  # not done in time: the last one, at once
    gate.set()
    assert latest.get("v3", wait_s=5.0) == ("v3", "figure of v3")
