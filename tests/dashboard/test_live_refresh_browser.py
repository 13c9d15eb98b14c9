"""The Live page is never greyed out by its own refresh (issue 39, item 8), in a real browser (grpo-dash and headless
Chromium, browser_fixtures.py).

Streamlit marks an element it is about to redraw with `data-stale="true"` and fades it (opacity 0.33 from 0.5 s
on). A finished run used to refresh every 2 s all the same, and a screenshot of it came out greyed; now a run whose
end is recorded never refreshes (no element is ever marked), and a run being written by a RunWriter refreshes in
place with every element at full opacity, in English and in Chinese."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest
from helpers.browser_fixtures import (  # noqa: F401 - the fixtures are used by name
    browser,
    live_step,
    page,
    screenshot,
    server,
    wait_rendered,
)
from helpers.dash_fixtures import step_metrics, write_healthy

from collectors import RunWriter

# What a page sample reads: how many elements are marked stale, and how many of them are drawn faded.
SAMPLE_JS = """() => { const s = [...document.querySelectorAll('[data-stale="true"]')];
  return [s.length, s.filter(e => Number(getComputedStyle(e).opacity) < 0.99).length]; }"""
SAMPLE_S = 5.0  # past two refreshes at the default 2 s
TITLES = {"en": "Live", "zh": "实时"}


@pytest.fixture(scope="module")
def root(tmp_path_factory) -> Path:
    """A finished run, and (written by the live test while the page is open) a running one."""
    out = tmp_path_factory.mktemp("live_refresh") / "root"
    write_healthy(out / "done")
    return out


def sample(pg, seconds: float = SAMPLE_S) -> list[tuple[int, int]]:
    """(marked stale, faded) every 100 ms for `seconds`."""
    out, end = [], time.monotonic() + seconds
    while time.monotonic() < end:
        out.append(tuple(pg.evaluate(SAMPLE_JS)))
        pg.wait_for_timeout(100)
    return out


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_finished_run_is_drawn_once(server, page, lang):
    page.goto(f"{server}/live?run=root/done&lang={lang}")
    wait_rendered(page, TITLES[lang])
    said = {"en": "not refreshing: this run has ended (finished)", "zh": "不再刷新：该运行已结束（已完成）"}[lang]
    page.get_by_text(said).wait_for()
    assert page.get_by_test_id("stSlider").count() == 0  # no refresh to set
    seen = sample(page)
    assert seen and all(s == (0, 0) for s in seen), seen  # never marked, let alone faded: nothing reran
    screenshot(page, f"live_finished_{lang}")


def write_live(folder: Path, stop: threading.Event, every_s: float = 0.25) -> None:
    """A run written as a trainer writes it: a step of the checklist's metrics every `every_s` seconds."""
    with RunWriter(folder, name="live", handle_signals=False, flush_interval_s=every_s) as w:
        step = 0
        while not stop.is_set():
            w.log_step(step, step_metrics(step, min(0.9, 0.1 + 0.01 * step), 0.2, 0.1))
            step += 1
            stop.wait(every_s)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_live_run_refreshes_in_place_never_greyed(server, root, page, lang):
    stop = threading.Event()
    writer = threading.Thread(target=write_live, args=(root / f"live_{lang}", stop), daemon=True)
    writer.start()
    try:
        time.sleep(1.0)  # its first flush: the run is listed, running
        page.goto(f"{server}/live?run=root/live_{lang}&lang={lang}")
        wait_rendered(page, TITLES[lang])
        tile = "last step" if lang == "en" else "最后一步"
        first = page.get_by_test_id("stMetric").filter(has_text=tile).first
        first.wait_for()
        step0 = live_step_of(page, tile)
        seen = sample(page)
        assert live_step_of(page, tile) > step0  # it refreshed, in place
        assert all(faded == 0 for _, faded in seen), seen  # and no element was ever drawn greyed out
        assert page.get_by_test_id("stSlider").count() == 1
        screenshot(page, f"live_running_{lang}")
    finally:
        stop.set()
        writer.join(10)


def live_step_of(pg, tile: str) -> int:
    if tile == "last step":
        return live_step(pg) or 0
    text = pg.get_by_test_id("stMetric").filter(has_text=tile).first.get_by_test_id("stMetricValue").inner_text()
    return int("".join(c for c in text if c.isdigit()) or 0)
