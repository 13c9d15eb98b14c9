"""Real-browser tests: `grpo-dash` on a free port, Debian's Chromium driven headless by Playwright (the shared
fixtures and waits are in browser_fixtures.py). The tests skip only when that browser is absent outside
`make test` and CI; there a missing browser fails them. Screenshots are saved under tests/artifacts/ (git-ignored) for a person to look at
when one fails.
"""

from __future__ import annotations

import time
from pathlib import Path
from urllib.parse import quote

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
from helpers.dash_fixtures import RUN_NAMES, make_root, step_metrics

from collectors import RunWriter


@pytest.fixture(scope="module")
def root(tmp_path_factory) -> Path:
    return make_root(tmp_path_factory.mktemp("browser") / "root")


def test_runs_page_in_browser(server, page):
    page.goto(server + "/")
    wait_rendered(page, "Runs")
    page.get_by_test_id("stDataFrame").first.wait_for(timeout=RENDER_TIMEOUT_MS)
    body = page.inner_text("body")
    shot = screenshot(page, "runs_page")
    assert shot.stat().st_size > 10_000  # a blank page compresses to a few hundred bytes
    # The table is a canvas grid; its cells are not page text, but the run picker and captions are.
    page.get_by_test_id("stMultiSelect").filter(has_text="Open runs").first.click()
    options = page.get_by_role("option")
    options.first.wait_for(timeout=RENDER_TIMEOUT_MS)
    listed = " ".join(options.all_inner_texts())
    for name in RUN_NAMES:
        assert name in listed, (name, listed, body[:500])


def test_diagnosis_page_in_browser(server, page):
    page.goto(server + "/diagnosis?run=root/broken_verifier")
    wait_rendered(page, "Diagnosis")
    page.get_by_text("Reward is constant (0) over the whole run").first.wait_for(timeout=RENDER_TIMEOUT_MS)
    # evidence charts and page links draw after the script ends; wait so the screenshot shows them
    page.get_by_test_id("stPlotlyChart").first.locator(".main-svg").first.wait_for(timeout=RENDER_TIMEOUT_MS)
    link = page.get_by_test_id("stPageLink").filter(has_text="open samples").first
    link.wait_for(timeout=RENDER_TIMEOUT_MS)
    screenshot(page, "diagnosis_broken_verifier")
    assert "filter=" in (link.locator("a").first.get_attribute("href") or "")
    link.click()  # the link opens the sample browser already filtered, run kept
    wait_rendered(page, "Samples")
    shown = page.get_by_test_id("stSelectbox").filter(has_text="Show").first
    shown.wait_for(timeout=RENDER_TIMEOUT_MS)
    assert "all groups" not in shown.inner_text()
    assert "run=root%2Fbroken_verifier" in page.url or "run=root/broken_verifier" in page.url
    assert "broken_verifier" in page.inner_text("body")


def test_checklist_charts_draw_in_browser(server, page):
    """AppTest sees only the Plotly JSON; here the browser must actually draw the panels."""
    page.goto(server + "/checklist?run=root/broken_verifier")
    wait_rendered(page, "Checklist")
    chart = page.get_by_test_id("stPlotlyChart").first
    chart.locator(".main-svg").first.wait_for(timeout=RENDER_TIMEOUT_MS)
    titles = " ".join(chart.locator(".gtitle, .annotation-text").all_text_contents())
    screenshot(page, "checklist_broken_verifier")
    assert "Raw reward" in titles and "Zero-variance groups" in titles
    assert chart.locator("path.js-line").count() > 5  # one drawn line per series


def test_samples_page_shows_markup_literally(server, page):
    requested = []
    page.on("request", lambda r: requested.append(r.url))
    page.goto(server + "/samples?run=root/broken_verifier")
    wait_rendered(page, "Samples")
    page.get_by_test_id("stCode").first.wait_for(timeout=RENDER_TIMEOUT_MS)
    screenshot(page, "samples_broken_verifier")
    codes = " ".join(page.get_by_test_id("stCode").all_inner_texts())
    assert "<img src=x" in codes and "![a](http://example.com/a.png)" in codes
    assert not [u for u in requested if "example.com" in u]
    assert page.locator("img[src='x']").count() == 0


def test_path_outside_roots_refused_in_browser(server, page):
    page.goto(server + "/checklist?run=../x")
    wait_rendered(page, "Checklist")
    alert = page.get_by_test_id("stAlert").filter(has_text="refused").first
    alert.wait_for(timeout=RENDER_TIMEOUT_MS)
    assert "'../x'" in alert.inner_text()


def test_live_page_shows_new_steps_without_reload(server, root, page):
    writer = RunWriter(root / "live", name="live", handle_signals=False, flush_every=1)
    try:
        for i in range(3):
            writer.log_step(i, {"reward/mean": 0.1 * i})
        open_when_listed(page, server + "/live?run=root/live", "Live", "root/live")
        page.get_by_test_id("stMetric").filter(has_text="last step").first.wait_for(timeout=RENDER_TIMEOUT_MS)
        assert live_step(page) == 2
        loads = []
        page.on("load", lambda _: loads.append(1))
        for i in range(3, 8):
            writer.log_step(i, {"reward/mean": 0.1 * i})
        end = time.monotonic() + 15  # default refresh is every 2 s
        while time.monotonic() < end and live_step(page) != 7:
            page.wait_for_timeout(250)
        screenshot(page, "live_run")
        assert live_step(page) == 7
        assert not loads, "the page reloaded; the fragment should have refreshed it in place"
    finally:
        writer.close()


@pytest.mark.parametrize("width", [800, 1000])
def test_live_tiles_show_their_whole_values_in_a_narrow_window(server, browser, width):
    """In a window of 800 or 1,000 px with the sidebar open, the Live page's four tiles (status, last step, last
    update, reward mean) show their values whole, wrapping to a second row, never cut with an ellipsis (four
    equal columns cut "finished" and "16.2 h ago" there)."""
    ctx = browser.new_context(viewport={"width": width, "height": 900})
    try:
        pg = ctx.new_page()
        pg.goto(server + "/live?run=root/healthy")
        wait_rendered(pg, "Live")
        pg.get_by_test_id("stMetric").filter(has_text="reward mean").first.wait_for(timeout=RENDER_TIMEOUT_MS)
        # under a full parallel suite the tiles were seen one at a time once (1 of 4 read): wait for all four
        pg.wait_for_function("document.querySelectorAll('[data-testid=stMetricValue] div').length >= 4",
                             timeout=RENDER_TIMEOUT_MS)
        values = pg.evaluate("""() => Array.from(document.querySelectorAll('[data-testid=stMetricValue] div'))
                                .map(e => [e.innerText, e.scrollWidth, e.clientWidth])""")
        screenshot(pg, f"live_tiles_{width}")
        assert len(values) == 4 and values[0][0].endswith("finished"), values
        assert all(scroll <= client for _, scroll, client in values), values  # scrollWidth > clientWidth: cut
    finally:
        ctx.close()


def test_live_page_shows_new_finding_without_reload(server, root, page):
    """A run turns bad while the page is open: the finding appears in place."""
    title = "Zero-variance groups dominate"
    writer = RunWriter(root / "turns_bad", name="turns_bad", handle_signals=False, flush_every=1)
    try:
        for i in range(3):
            writer.log_step(i, step_metrics(i, 0.5, 0.1, 0.0))
        open_when_listed(page, server + "/live?run=root/turns_bad", "Live", "root/turns_bad")
        page.get_by_test_id("stMetric").filter(has_text="last step").first.wait_for(timeout=RENDER_TIMEOUT_MS)
        assert title not in page.inner_text("body")
        loads = []
        page.on("load", lambda _: loads.append(1))
        for i in range(3, 30):
            writer.log_step(i, step_metrics(i, 0.0, 1.0, 1.0))
        page.get_by_text(title).first.wait_for(timeout=15_000)
        screenshot(page, "live_new_finding")
        assert not loads
    finally:
        writer.close()


# -- payloads in every field: nothing rendered, nothing fetched, nothing run ---------------------------------------
PAYLOADS = ['<img src="http://127.0.0.9/img.png" onerror="alert(1)">', "<script>alert(2)</script>",
            '<a href="http://127.0.0.9/link">link</a>', "![pic](http://127.0.0.9/md.png)", "[md](http://127.0.0.9/md)",
            '<b onmouseover="alert(3)">bold</b>', "\x1b[31mred\x1b[0m", "$x^2$ %{y}"]
PAYLOAD = " ".join(PAYLOADS)
PAYLOAD_FOLDER = "x<img src=q onerror=alert(4)>"  # a folder name is a run key: no '/' in it
PAGES = {"": "Runs", "live": "Live", "checklist": "Checklist", "diagnosis": "Diagnosis", "samples": "Samples",
         "config": "Config", "compare": "Compare"}


@pytest.fixture(scope="module")
def payload_key(root, server, browser):
    w = RunWriter(root / PAYLOAD_FOLDER, name=PAYLOAD, handle_signals=False,
                  config={"algo.group_size": 4, "note": PAYLOAD, PAYLOADS[0]: PAYLOADS[3]})
    for i in range(12):
        w.log_step(i, {**step_metrics(i, 0.1 * (i % 3), 0.5, 0.2), PAYLOADS[2]: float(i)})
    w.log_samples([{"step": 11, "prompt_id": PAYLOADS[4], "group": 0, "sample": s, "reward": float(s % 2),
                    "passed": bool(s % 2), "advantage": s - 1.5, "num_tokens": 5, "truncated": False,
                    "prompt": PAYLOAD, "completion": PAYLOAD} for s in range(4)])
    w.close(status="failed", error=PAYLOAD)
    key = f"root/{PAYLOAD_FOLDER}"
    ctx = browser.new_context()
    try:  # the tests below open the run at once: wait until the runs table lists it
        open_when_listed(ctx.new_page(), f"{server}/live?run={quote(key, safe='')}", "Live", key)
    finally:
        ctx.close()
    return key


def _visit(pg, url: str, title: str, server: str) -> tuple[list[str], list[str]]:
    """Open `url`, wait for the page and its charts; return (dialogs that fired, requests off the server)."""
    dialogs, off = [], []
    pg.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    pg.on("request", lambda r: off.append(r.url) if not r.url.startswith((server, "data:", "blob:")) else None)
    pg.goto(url)
    wait_rendered(pg, title)
    pg.wait_for_timeout(1500)  # charts, images and fragments load after the script ends
    pg.mouse.move(300, 300)
    pg.mouse.move(700, 500)  # hover: an `onmouseover` that were live would fire now
    return dialogs, off


@pytest.mark.parametrize("path", list(PAGES))
def test_payloads_in_every_field_render_as_text_on_every_page(server, page, payload_key, path):
    from urllib.parse import quote

    runs = [payload_key, "root/healthy"] if path == "compare" else [payload_key]
    url = f"{server}/{path}?" + "&".join(f"run={quote(k, safe='')}" for k in runs)
    dialogs, off = _visit(page, url, PAGES[path], server)
    screenshot(page, f"payloads_{path or 'runs'}")
    assert dialogs == [] and off == []
    live = page.locator("img[src='q'], img[src*='127.0.0.9'], a[href*='127.0.0.9'], script:has-text('alert')")
    assert live.count() == 0, [live.nth(i).evaluate("e => e.outerHTML")[:300] for i in range(live.count())]
    # text.escape_md puts a zero-width space after a URL's scheme so Markdown makes no autolink: invisible, and
    # the text is the payload's
    body = page.inner_text("body").replace("\u200b", "")
    if path in ("live", "checklist", "diagnosis", "samples", "config"):
        assert "<b onmouseover" in body and "![pic](http://127.0.0.9/md.png)" in body, body[:2000]


@pytest.mark.parametrize("key", ["![x](http://127.0.0.9/refused.png)", "<img src=http://127.0.0.9/r.png>",
                                 "../../etc/passwd", "%2e%2e%2fetc", "/etc/passwd", "root/" + "y" * 5000])
def test_refused_run_keys_show_a_message_and_fetch_nothing(server, page, key):
    from urllib.parse import quote

    dialogs, off = _visit(page, f"{server}/checklist?run={quote(key, safe='')}", "Checklist", server)
    assert dialogs == [] and off == []
    alert = page.get_by_test_id("stAlert").first
    alert.wait_for(timeout=RENDER_TIMEOUT_MS)
    assert "refused" in alert.inner_text() or "not found" in alert.inner_text() or "longer" in alert.inner_text()
    assert "Traceback" not in page.inner_text("body")
    assert page.get_by_test_id("stException").count() == 0
