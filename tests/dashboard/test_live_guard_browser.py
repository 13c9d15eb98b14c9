"""The Live page's guard panel in a real browser (grpo-dash and headless Chromium, browser_fixtures.py):
a run watched by grpo-train's guard (grpo_core.guard.TrainGuard writing findings.jsonl and run.json, as train()
wires it) turns bad while the page is open; its findings, then its stop, appear in place without a reload: the
reason once and whole, and the run picker (outside the refreshing fragment) relabelled with the selection kept."""

from __future__ import annotations

import time
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import pytest
from helpers.browser_fixtures import (  # noqa: F401 - the fixtures are used by name
    RENDER_TIMEOUT_MS,
    browser,
    live_step,
    open_when_listed,
    page,
    screenshot,
    server,
    wait_rendered,
)
from helpers.dash_fixtures import step_metrics

from collectors import RunWriter
from dashboard.diagnosis.guard.guard import read_findings
from grpo_core.guard import TrainGuard

HEALTHY, BAD = (0.5, 0.1, 0.0), (0.0, 1.0, 1.0)  # step_metrics' reward, zero-variance and all-fail fractions


@pytest.fixture(scope="module")
def root(tmp_path_factory) -> Path:
    """The server's root: starts empty; each test writes its run while the page is open."""
    out = tmp_path_factory.mktemp("live_guard") / "root"
    out.mkdir()
    return out


def guard_panel(pg):
    return pg.get_by_test_id("stExpander").filter(has_text="while training")


def picker_text(pg) -> str:
    """What the Live page's run picker shows: the chosen run's label (icon, name, status, key), its box's text."""
    return pg.get_by_test_id("stSelectbox").first.get_by_role("combobox").input_value()


def wait_until(pg, check, timeout_s: float = 15.0) -> bool:
    """Poll `check()` until it holds (the fragment refreshes every 2 s, the runs table every 2 s)."""
    end = time.monotonic() + timeout_s
    while not check() and time.monotonic() < end:
        pg.wait_for_timeout(250)
    return check()


def test_guard_findings_then_the_stop_appear_in_place(server, root, page, browser):
    with RunWriter(root / "other", name="other", handle_signals=False) as other:  # the run the page opens on
        other.log_step(0, step_metrics(0, *HEALTHY))
    writer = RunWriter(root / "guarded", name="guarded", handle_signals=False, flush_every=1)
    said: list[str] = []
    guard = TrainGuard(stop_on="critical", every=5, budget=None, write=said.append, hold=2)
    guard.begin(writer)
    step, reason = 0, None
    try:
        for step in range(10):
            writer.log_step(step, step_metrics(step, *HEALTHY))
            guard.on_step(step, step_metrics(step, *HEALTHY))
        open_when_listed(page, server + "/live?run=root/other", "Live", "root/other")  # and so root/guarded
        # the user picks the guarded run: the selection to keep when its status changes
        page.get_by_test_id("stSelectbox").first.get_by_role("button").click()
        page.get_by_role("option").filter(has_text="root/guarded").click()
        assert wait_until(page, lambda: live_step(page) == step), live_step(page)
        assert guard_panel(page).count() == 0 and not read_findings(writer.path)  # healthy: nothing to show
        assert picker_text(page) == "🟢 guarded · running · root/guarded"
        loads = []
        page.on("load", lambda _: loads.append(1))

        # the run turns bad: the guard confirms findings and asks to stop; the trainer ends after this step
        while reason is None and step < 200:
            step += 1
            writer.log_step(step, step_metrics(step, *BAD))
            reason = guard.on_step(step, step_metrics(step, *BAD))
        assert reason is not None and reason.startswith(f"stopped by the guard after step {step}: critical finding ")
        events = read_findings(writer.path)
        found, stop = [e for e in events if e["event"] == "new"], events[-1]
        assert found and stop["event"] == "stop" and reason.endswith(stop["title"])

        # still running: the panel appears in place, collapsed; opened, it lists each event
        panel = guard_panel(page).first
        panel.wait_for(timeout=15_000)
        assert f"Guard: {len(events)} event(s) while training" in panel.inner_text()
        panel.get_by_text("Guard:").click()
        panel.get_by_text(found[0]["title"]).first.wait_for(timeout=RENDER_TIMEOUT_MS)
        text = panel.inner_text()
        for e in found:
            assert f"step {e['step']}: found: {e['title']} ({e['rule_id']})" in text, text
        assert f"step {stop['step']}: stopped the run: {stop['title']} ({stop['rule_id']})" in text
        assert live_step(page) == step
        screenshot(page, "live_guard_findings")
    finally:
        guard.end()
        writer.close("stopped" if reason else "finished", reason)

    # stopped: the status in place, and the reason once, whole, in the run header's code block, nowhere else
    status = page.get_by_test_id("stMetric").filter(has_text="status").first
    assert wait_until(page, lambda: "stopped" in status.inner_text()), status.inner_text()
    shown = page.get_by_test_id("stCode").filter(has_text=reason)
    shown.first.wait_for(timeout=RENDER_TIMEOUT_MS)
    assert shown.count() == 1 and page.inner_text("body").count(reason) == 1, page.inner_text("body")
    assert page.get_by_test_id("stAlertContentError").filter(has_text="stopped by the guard").count() == 0
    # the picker, drawn outside the fragment, follows the run; the run stays selected (page and URL)
    assert wait_until(page, lambda: picker_text(page) == "🛑 guarded · stopped · root/guarded"), picker_text(page)
    assert parse_qs(urlparse(page.url).query)["run"][0] == "root/guarded"
    assert live_step(page) == step and "stopped" in status.inner_text()
    # a window narrower than the reason's one line: the block wraps it instead of cutting it off
    page.set_viewport_size({"width": 800, "height": 1000})
    block = shown.first.locator("pre").first
    assert wait_until(page, lambda: block.evaluate("e => e.scrollWidth <= e.clientWidth"), 5.0), \
        block.evaluate("e => [e.scrollWidth, e.clientWidth]")
    screenshot(page, "live_guard_stopped")
    assert not loads, "the page reloaded; the fragment should have refreshed it in place"
    assert any("stopping the run" in s for s in said)

    # a stopped run opened afresh: the panel is open without a click
    ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
    try:
        fresh = ctx.new_page()
        fresh.goto(server + "/live?run=root/guarded")
        wait_rendered(fresh, "Live")
        guard_panel(fresh).first.get_by_text(stop["title"]).first.wait_for(timeout=RENDER_TIMEOUT_MS)
        assert "stopped the run" in guard_panel(fresh).first.inner_text()
    finally:
        ctx.close()
