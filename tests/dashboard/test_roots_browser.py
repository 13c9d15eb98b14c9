"""What a root guarantees, in a real browser (Debian's Chromium through Playwright, tests/helpers/browser_fixtures.py):
`grpo-dash` on the roots of tests/helpers/hostile_roots.py (stray logs and named pipes with log names beside run folders,
every kind of link out of the roots, /dev/zero), started from a folder whose .streamlit/config.toml switches off
every protection Streamlit offers. One server for the module.

- Every run is listed, and the health column is the diagnosis' verdict: read from the table's own CSV download
  (the grid is a canvas), in English and Chinese.
- Nothing outside the roots is opened: the outside folder is watched with inotify from before the server starts;
  its name, its data and the links' targets appear on no page.
- No page shows a traceback; a refused `?run=` shows the refusal and draws no run in its place.
- The server refuses a WebSocket from another origin, whatever the config.toml says.

Screenshots (tests/artifacts/roots_*.png) show the Runs page in both languages and a refused run's page.
"""

from __future__ import annotations

import base64
import csv
import os
import socket
from pathlib import Path

import pytest
from helpers.browser_fixtures import (  # noqa: F401 - the fixtures are used by name
    RENDER_TIMEOUT_MS,
    browser,
    dash_server,
    screenshot,
    wait_rendered,
)
from helpers.hostile_roots import NEVER_SHOWN, hostile_folder, make_layout
from helpers.open_watch import OpenWatch, available
from helpers.paths import REPO

# the health cell's words for each verdict, by language (dashboard.diagnosis.i18n LABELS health_*)
HEALTH = {"en": {"healthy": "✅ ok", "cant_judge": "❔ can't judge yet", "not_learning": "🔴 not learning"},
          "zh": {"healthy": "✅ 健康", "cant_judge": "❔ 还无法判断", "not_learning": "🔴 不学习"}}
PAGES = {"checklist": "Checklist", "diagnosis": "Diagnosis", "samples": "Samples", "config": "Config",
         "live": "Live", "compare": "Compare"}


@pytest.fixture(scope="module")
def layout(tmp_path_factory):
    return make_layout(tmp_path_factory.mktemp("roots"))


@pytest.fixture(scope="module")
def watch(layout, tmp_path_factory):
    """Opens of the outside folder's files, by any process, from before the server starts; None where inotify
    gives no events (the content checks still hold)."""
    if not available(tmp_path_factory.mktemp("probe")):
        yield None
        return
    w = OpenWatch(*layout.watched())
    yield w
    w.close()


@pytest.fixture(scope="module")
def server(layout, watch, tmp_path_factory):
    cwd = hostile_folder(tmp_path_factory.mktemp("cwd"))  # its config.toml switches every protection off
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    with dash_server([*map(str, layout.roots), "--lang", "en"], cwd, env) as url:
        yield url


@pytest.fixture
def page(browser):
    ctx = browser.new_context(viewport={"width": 1500, "height": 1100}, accept_downloads=True)
    # without the File System Access API the table's CSV download is a plain download Playwright receives
    ctx.add_init_script("delete window.showSaveFilePicker")
    pg = ctx.new_page()
    yield pg
    ctx.close()


def settled(pg) -> None:
    """Past the script's last element: Streamlit's running indicator gone and staying gone."""
    for _ in range(2):
        pg.get_by_test_id("stStatusWidget").wait_for(state="detached", timeout=RENDER_TIMEOUT_MS)
        pg.wait_for_timeout(400)


def nothing_outside(pg, watch, also: str = "") -> None:
    """No file outside the roots opened since the server started, and nothing of them on the page."""
    said = pg.inner_text("body") + also
    assert not [s for s in NEVER_SHOWN if s in said], said[:3000]
    assert "Traceback" not in said and pg.get_by_test_id("stException").count() == 0, said[:3000]
    if watch is not None:
        assert watch.opened() == [], watch.opened()


def runs_csv(pg) -> tuple[list[dict[str, str]], str]:
    """The Runs table as its own "Download as CSV" gives it: (rows, the file's text)."""
    grid = pg.get_by_test_id("stDataFrame").first
    grid.hover()
    with pg.expect_download(timeout=RENDER_TIMEOUT_MS) as d:
        grid.get_by_role("button", name="Download as CSV").click()
    text = Path(d.value.path()).read_text(encoding="utf-8-sig")
    return list(csv.DictReader(text.splitlines())), text


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_run_is_listed_and_the_health_column_is_the_verdict(server, layout, watch, page, lang):
    page.goto(f"{server}/?lang={lang}")
    page.get_by_test_id("stDataFrame").first.wait_for(timeout=RENDER_TIMEOUT_MS)
    page.get_by_test_id("stStatusWidget").wait_for(state="detached", timeout=RENDER_TIMEOUT_MS)
    rows, text = runs_csv(page)
    screenshot(page, f"roots_runs_{lang}")
    page.get_by_test_id("stDataFrame").first.hover()
    page.mouse.wheel(0, 2000)  # the table's last rows: the pipes and the links, for the person reading the shots
    page.wait_for_timeout(300)
    screenshot(page, f"roots_runs_{lang}_end")
    by_key = {r["key"]: r for r in rows}
    assert len(by_key) == len(rows)
    # every run beside the strays, pipes and links; each stray one more run; each pipe and link a line
    assert set(by_key) == set(layout.verdicts) | layout.strays | layout.pipes | layout.refused, sorted(by_key)
    health = [c for c in rows[0] if c not in ("name", "key", "error", "source", "status", "last_step",
                                              "last_update")]
    col = next(c for c in rows[0] if by_key["links/ok"][c] == HEALTH[lang]["healthy"])  # header translated
    assert col in health
    for key, kind in layout.verdicts.items():
        assert by_key[key][col].startswith(HEALTH[lang][kind]), (key, by_key[key][col])
    oks = {k for k, r in by_key.items() if r[col].startswith(HEALTH[lang]["healthy"])}
    assert oks == {k for k, v in layout.verdicts.items() if v == "healthy"}  # ✅ only for a run judged healthy
    error = next(c for c in rows[0] if by_key["links/zero.log"][c].startswith(
        {"en": "a link that leads outside the roots", "zh": "通向根目录之外的链接"}[lang]))  # in the language
    for key in layout.refused | layout.pipes:
        assert by_key[key][col].startswith("🚫") and by_key[key]["last_step"] == "", (key, by_key[key])
        assert by_key[key][error], key
    nothing_outside(page, watch, also=text)


def test_a_refused_run_shows_the_refusal_on_every_page_and_nothing_else(server, layout, watch, page):
    """Each page with a run whose key is refused (a link out of the roots, /dev/zero, /etc/passwd): the refusal,
    no run drawn in its place, no traceback; then each page on a run beside them, drawn."""
    refused = sorted(layout.refused)
    for i, (slug, title) in enumerate(PAGES.items()):
        key = refused[i % len(refused)]
        page.goto(f"{server}/{slug}?run={key}" + (f"&run={refused[i - 1]}" if slug == "compare" else ""))
        wait_rendered(page, title)
        page.get_by_test_id("stAlert").filter(has_text="refused").first.wait_for(timeout=RENDER_TIMEOUT_MS)
        # the picker is drawn after the refusal, empty: the script ended there, no run drawn in its place
        picker = page.get_by_test_id("stMultiSelect" if slug == "compare" else "stSelectbox").first
        picker.wait_for(timeout=RENDER_TIMEOUT_MS)
        settled(page)
        if i == 0:
            screenshot(page, "roots_refused_checklist")
        assert page.get_by_test_id("stPlotlyChart").count() == 0, (slug, key)  # no other run drawn instead
        assert page.get_by_test_id("stHeading").count() == 1, (slug, key)  # the page title, no run header
        nothing_outside(page, watch)
    for slug, title in PAGES.items():  # the runs beside them open as usual: the stray verl dump, two_steps
        runs = ["stray_dump", "links/two_steps"] if slug == "compare" else ["stray_dump"]
        page.goto(f"{server}/{slug}?" + "&".join(f"run={k}" for k in runs))
        wait_rendered(page, title)
        page.get_by_test_id("stHeading").nth(1).wait_for(timeout=RENDER_TIMEOUT_MS)  # the run's header
        settled(page)
        assert page.get_by_test_id("stAlert").filter(has_text="refused").count() == 0
        nothing_outside(page, watch)
    page.goto(f"{server}/diagnosis?run=links/passwd&lang=zh")  # the refusal in the chosen language
    page.get_by_test_id("stAlert").filter(has_text="已拒绝").first.wait_for(timeout=RENDER_TIMEOUT_MS)
    page.get_by_test_id("stSelectbox").first.wait_for(timeout=RENDER_TIMEOUT_MS)
    settled(page)
    screenshot(page, "roots_refused_diagnosis_zh")
    assert "run.json 是通向根目录之外的链接" in page.get_by_test_id("stAlert").first.inner_text()
    assert page.get_by_test_id("stPlotlyChart").count() == 0
    nothing_outside(page, watch)


def handshake(url: str, origin: str) -> int:
    """The HTTP status of a WebSocket upgrade of the app's stream from a page at `origin`."""
    host, port = url.removeprefix("http://").split(":")
    key = base64.b64encode(os.urandom(16)).decode()
    request = (f"GET /_stcore/stream HTTP/1.1\r\nHost: {host}:{port}\r\nUpgrade: websocket\r\n"
               f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n"
               f"Sec-WebSocket-Protocol: streamlit\r\nOrigin: {origin}\r\n\r\n")
    with socket.create_connection((host, int(port)), timeout=10) as s:
        s.sendall(request.encode())
        head = s.recv(4096).decode("latin-1")
    return int(head.split()[1])


def test_the_server_refuses_another_origin_whatever_its_config_toml_says(server):
    assert handshake(server, server) == 101  # the page the server serves
    assert handshake(server, "http://evil.example") != 101  # listed in the config.toml, refused all the same
    assert handshake(server, "http://attacker.test:8080") != 101
