"""What the real-browser tests share: `grpo-dash` on a free port (the `server` fixture, over the test module's
own `root` fixture), Debian's Chromium driven headless by Playwright (`browser`, `page`), and waits and
screenshots. Importing this module skips the importing test module when Chromium is absent, except under
`make test` (GRPOSCOPE_REQUIRE_BROWSER=1, set by the Makefile after tests/ensure_chromium.sh) and in CI (CI=true):
there a missing browser or playwright fails the module, so a failed install never hides the browser tests.

Playwright drives the system browser at /usr/bin/chromium (installed by tests/ensure_chromium.sh); it never
downloads its own. Screenshots are saved under tests/artifacts/ (git-ignored) for a person to look at.
"""

from __future__ import annotations

import contextlib
import os
import re
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from helpers.paths import REPO

CHROMIUM = Path("/usr/bin/chromium")
ARTIFACTS = REPO / "tests" / "artifacts"
IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")
REQUIRE_ENV = "GRPOSCOPE_REQUIRE_BROWSER"  # the Makefile's test target sets it to 1
REQUIRED = IN_CI or os.environ.get(REQUIRE_ENV, "") == "1"
START_TIMEOUT_S = 60.0  # first start imports streamlit, pandas and plotly
RENDER_TIMEOUT_MS = 60_000

if not CHROMIUM.exists():
    if REQUIRED:
        pytest.fail(f"{CHROMIUM} is missing under make test / CI: tests/ensure_chromium.sh could not install it",
                    pytrace=False)
    pytest.skip(f"{CHROMIUM} is missing (run tests/ensure_chromium.sh); browser tests skipped outside make test "
                f"and CI ({REQUIRE_ENV}=1 makes this a failure)", allow_module_level=True)
if not REQUIRED:
    pytest.importorskip("playwright.sync_api", reason="the playwright package (dev extra) is not installed")
from playwright import sync_api  # under make test a missing playwright fails here


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_healthy(url: str, proc: subprocess.Popen, timeout_s: float) -> None:
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        if proc.poll() is not None:
            raise RuntimeError(f"grpo-dash exited early with code {proc.returncode}: {proc.stdout.read()}")
        try:
            with urllib.request.urlopen(url + "/_stcore/health", timeout=2) as r:
                if r.status == 200:
                    return
        except OSError:
            time.sleep(0.2)
    raise RuntimeError(f"grpo-dash did not answer at {url} within {timeout_s:.0f} s")


@contextlib.contextmanager
def dash_server(args: list[str], cwd: Path, env: dict | None = None):
    """`grpo-dash ARGS --port P` started as a user starts it (the installed entry point), in `cwd`; yields its
    URL once healthy and stops it after."""
    port = free_port()
    launcher = Path(sys.executable).with_name("grpo-dash")
    cmd = [str(launcher)] if launcher.exists() else [sys.executable, "-m", "dashboard.cli"]
    proc = subprocess.Popen([*cmd, *args, "--port", str(port)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, cwd=cwd, env=env)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(url, proc, START_TIMEOUT_S)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@pytest.fixture(scope="module")
def server(root):
    with dash_server([str(root), "--host", "127.0.0.1"], REPO) as url:
        yield url


@pytest.fixture(scope="module")
def browser():
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), headless=True,
                              args=["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"])
        yield b
        b.close()


@pytest.fixture
def page(browser):
    ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
    pg = ctx.new_page()
    yield pg
    ctx.close()


def screenshot(pg, name: str) -> Path:
    ARTIFACTS.mkdir(exist_ok=True)
    out = ARTIFACTS / f"{name}.png"
    pg.screenshot(path=str(out), full_page=True)
    return out


def wait_rendered(pg, title: str) -> None:
    """Wait past Streamlit's skeleton: the page's own title element, then the app to stop running."""
    pg.get_by_test_id("stHeading").filter(has_text=title).first.wait_for(timeout=RENDER_TIMEOUT_MS)
    pg.get_by_test_id("stStatusWidget").wait_for(state="detached", timeout=RENDER_TIMEOUT_MS)


LISTED_TIMEOUT_S = 120.0  # a ceiling for a loaded machine; the runs table's discovery cache lives 2 s


def picked_key(pg) -> str:
    """The run picker's shown label ("icon name · status · key"), or "" when the page has no picker yet."""
    box = pg.get_by_test_id("stSelectbox")
    return box.first.get_by_role("combobox").input_value() if box.count() else ""


def open_when_listed(pg, url: str, title: str, key: str) -> None:
    """Open `url` (a page with a run picker) once run `key`, written a moment ago, is listed: the runs table
    caches discovery for 2 s (dashboard/data.py runs_table), so reload until the picker shows `key`, instead of
    sleeping out the cache; AssertionError past LISTED_TIMEOUT_S."""
    end = time.monotonic() + LISTED_TIMEOUT_S
    while True:
        pg.goto(url)
        wait_rendered(pg, title)
        if picked_key(pg).endswith(key):
            return
        assert time.monotonic() < end, f"{key} not listed within {LISTED_TIMEOUT_S:.0f} s: {picked_key(pg)!r}"
        pg.wait_for_timeout(500)


def live_step(pg) -> int | None:
    metric = pg.get_by_test_id("stMetric").filter(has_text="last step").first
    text = metric.get_by_test_id("stMetricValue").inner_text()
    m = re.search(r"\d+", text)
    return int(m.group()) if m else None
