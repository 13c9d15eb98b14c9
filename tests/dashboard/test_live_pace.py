"""The Live page backs off when a refresh takes longer than its interval (issue 39, item 8)."""

from dashboard.pace import refresh_interval


def test_the_refresh_waits_twice_what_the_last_one_took():
    assert refresh_interval(2, None) == 2  # not measured yet: as chosen
    assert refresh_interval(2, 0.4) == 2  # fast enough
    assert refresh_interval(2, 3.0) == 6  # took 3 s of a 2 s interval: 6 s, so the page reads between refreshes
    assert refresh_interval(10, 3.0) == 10
    assert refresh_interval(2, 1.01) == 3  # rounded up to a whole second


def test_only_a_run_being_written_refreshes():
    from dashboard.pace import WAKE_S, refreshing, wakes

    now = 1_000_000.0
    assert refreshing("running", now - 5, now, 60)
    for ended in ("finished", "failed", "stopped"):  # its writer recorded the end: drawn once, never looked at again
        assert not refreshing(ended, now - 1, now, 60) and not wakes(ended)
    assert not refreshing("stale", now - 120, now, 60) and wakes("stale")  # quiet without an end: may come back
    # a log with no writer's record: refreshed while its files change, looked at every WAKE_S once quiet
    assert refreshing("unknown", now - 59, now, 60)
    assert not refreshing("unknown", now - 61, now, 60) and wakes("unknown")
    assert not refreshing("unknown", None, now, 60) and not refreshing("unknown", float("nan"), now, 60)
    assert WAKE_S <= 60  # a run that comes back is followed within the stale window
