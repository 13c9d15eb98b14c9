"""The Live page backs off when a refresh takes longer than its interval (issue 39, item 8)."""

from dashboard.pace import refresh_interval


def test_the_refresh_waits_twice_what_the_last_one_took():
    assert refresh_interval(2, None) == 2  # not measured yet: as chosen
    assert refresh_interval(2, 0.4) == 2  # fast enough
    assert refresh_interval(2, 3.0) == 6  # took 3 s of a 2 s interval: 6 s, so the page reads between refreshes
    assert refresh_interval(10, 3.0) == 10
    assert refresh_interval(2, 1.01) == 3  # rounded up to a whole second
