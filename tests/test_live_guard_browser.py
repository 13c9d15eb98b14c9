"""The Live page's guard panel in a real browser (grpo-dash and headless Chromium, as in test_dashboard_browser.py):
a run watched by grpo-train's guard (grpo_core.guard.TrainGuard writing findings.jsonl and run.json, as train()
wires it) turns bad while the page is open; its findings, then its stop, appear in place without a reload."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from dash_fixtures import step_metrics
from test_dashboard_browser import (  # noqa: F401 - the fixtures are used by name
    RENDER_TIMEOUT_MS,
    browser,
    live_step,
    page,
    screenshot,
    server,
    wait_rendered,
)

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


def test_guard_findings_then_the_stop_appear_in_place(server, root, page, browser):  # noqa: F811 - fixtures
    writer = RunWriter(root / "guarded", name="guarded", handle_signals=False, flush_every=1)
    said: list[str] = []
    guard = TrainGuard(stop_on="critical", every=5, budget=None, write=said.append, hold=2)
    guard.begin(writer)
    step, reason = 0, None
    try:
        for step in range(10):
            writer.log_step(step, step_metrics(step, *HEALTHY))
            guard.on_step(step, step_metrics(step, *HEALTHY))
        time.sleep(2.5)  # the runs table caches discovery for 2 s
        page.goto(server + "/live?run=root/guarded")
        wait_rendered(page, "Live")
        page.get_by_test_id("stMetric").filter(has_text="last step").first.wait_for(timeout=RENDER_TIMEOUT_MS)
        assert guard_panel(page).count() == 0 and not read_findings(writer.path)  # healthy: nothing to show
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

    # stopped: the status and the reason in an error box, in place
    status = page.get_by_test_id("stMetric").filter(has_text="status").first
    end = time.monotonic() + 15  # the fragment refreshes every 2 s
    while time.monotonic() < end and "stopped" not in status.inner_text():
        page.wait_for_timeout(250)
    assert "stopped" in status.inner_text()
    alert = page.get_by_test_id("stAlertContentError").filter(has_text="stopped by the guard").first
    alert.wait_for(timeout=RENDER_TIMEOUT_MS)
    assert reason in alert.inner_text()
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
