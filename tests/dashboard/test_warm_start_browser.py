"""A run shows from the first second: grpo-train (the real trainer, a warm start not in the cache) opens its run
folder before the supervised warm start, and the dashboard (grpo-dash, Debian's Chromium) lists it running,
with the warm start's progress, on the Runs, Live and Diagnosis pages, in English and Chinese; a SIGTERM in the
warm start records it failed. The Runs table's time and a run's header say the same "… ago".
"""

from __future__ import annotations

import json
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers.browser_fixtures import (  # noqa: F401 - fixtures are looked up by name
    RENDER_TIMEOUT_MS,
    browser,
    open_when_listed,
    page,
    screenshot,
    server,
    wait_rendered,
)
from helpers.paths import REPO

from collectors import RunWriter

GRID = "[data-testid=stDataFrame] [role=gridcell]"
MOST = 1_000_000  # the warm start's max_steps in the trainer test


@pytest.fixture(scope="module")
def root(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("warm") / "root"


def read_json(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def progress_step(pg, pattern: str) -> int:
    """The warm start's step in the run header's progress bar ('... step 120 of at most 4000')."""
    bar = pg.get_by_test_id("stProgress").first
    bar.wait_for(timeout=RENDER_TIMEOUT_MS)
    m = re.search(pattern, bar.inner_text())
    assert m, bar.inner_text()
    return int(m.group(1))


def grid_row(pg, name: str) -> list[str]:
    """The Runs table's cells of the row whose first cell is `name` (the grid draws on a canvas; its cells are
    also an accessible table, which is read here)."""
    pg.locator(GRID).first.wait_for(state="attached", timeout=RENDER_TIMEOUT_MS)
    cells = pg.locator(GRID).all_inner_texts()
    start = cells.index(name)
    return cells[start:start + 8]


def test_the_trainer_shows_its_warm_start_from_the_first_second(server, root, browser, tmp_path):
    cache = tmp_path / "warm_cache"  # empty: the warm start trains here, as on a first `make demo`
    run = root / "demo"
    # a warm start that cannot end while the test looks at it: MOST steps (hours on any machine) and no pass-rate
    # check before the last (none can stop it early), so the SIGTERM at the end always lands in it
    cmd = [str(Path(sys.executable).with_name("grpo-train")), "--preset", "grpo", "--out", str(run),
           "--set", "steps=2", "--set", f"warm_start.cache_dir={cache}", "--set", f"warm_start.max_steps={MOST}",
           "--set", f"warm_start.check_every={MOST}", "--set", "warm_start.check_samples=64",
           "--set", "log.progress=false"]
    proc = subprocess.Popen(cmd, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
    try:
        end = time.monotonic() + 120
        # the writer creates run.json, then the trainer sets its phase (a second write, moments later)
        while not (run / "run.json").exists() or read_json(run / "run.json").get("phase") is None:
            assert proc.poll() is None, proc.stdout.read()
            assert time.monotonic() < end, "no run.json with its phase within 120 s of starting the trainer"
            time.sleep(0.2)
        meta = read_json(run / "run.json")
        assert meta["status"] == "running" and meta["last_step"] is None
        assert meta["phase"]["name"] == "warm_start" and meta["phase"]["total"] == MOST
        assert meta["config"]["warm_start.max_steps"] == MOST and meta["config"]["steps"] == 2

        pg = ctx.new_page()
        open_when_listed(pg, server + "/live?run=root/demo", "Live", "root/demo")
        first = progress_step(pg, rf"warm start before the first step: step (\d+) of at most {MOST}")
        end = time.monotonic() + 60
        later = first
        while later <= first and time.monotonic() < end:  # the Live page refreshes itself every 2 s
            pg.wait_for_timeout(1000)
            later = progress_step(pg, rf"step (\d+) of at most {MOST}")
        assert later > first, (first, later)
        screenshot(pg, "live_warm_start")

        pg.goto(server + "/diagnosis?run=root/demo")
        wait_rendered(pg, "Diagnosis")
        pg.get_by_text("can't judge yet").first.wait_for(timeout=RENDER_TIMEOUT_MS)
        assert "warm start before the first step" in pg.get_by_test_id("stProgress").first.inner_text()

        pg.goto(server + "/?lang=zh")
        wait_rendered(pg, "训练列表")
        status = grid_row(pg, "demo")[2]
        assert status.startswith("运行中 · 第一步之前的监督预热：第 "), status
        pg.goto(server + "/live?run=root/demo&lang=zh")
        progress_step(pg, rf"监督预热：第 (\d+) 步，最多 {MOST} 步")
        screenshot(pg, "live_warm_start_zh")
    finally:
        ctx.close()
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)  # in the warm start: ends at once, the run recorded failed
        out = proc.communicate(timeout=60)[0]
    meta = read_json(run / "run.json")
    assert meta["status"] == "failed", out
    assert meta["error"] == "interrupted by SIGTERM (before the first step)" and meta["phase"] is None
    assert not (run / "metrics").exists() or not any((run / "metrics").glob("part-*"))


def test_runs_table_and_header_say_the_same_ago(server, root, page):
    """A copied run's files are new (a clone's); its own heartbeat says it last wrote 5 h ago, and so do the
    Runs table's cell and the run's header."""
    src = root / "written"
    with RunWriter(src, name="copied", handle_signals=False) as w:
        w.log_step(0, {"reward/mean": 0.5})
    meta = read_json(src / "run.json")
    meta["heartbeat"] = meta["end_time"] = time.time() - 5 * 3600
    (src / "run.json").write_text(json.dumps(meta), encoding="utf-8")
    shutil.copytree(src, root / "copied")  # every file as new as the copy
    shutil.rmtree(src)
    page.goto(server + "/")
    wait_rendered(page, "Runs")
    end = time.monotonic() + 30
    while "copied" not in page.locator(GRID).all_inner_texts() and time.monotonic() < end:
        page.wait_for_timeout(1000)
        page.reload()
        wait_rendered(page, "Runs")
    cell = grid_row(page, "copied")[4]
    assert cell.startswith("5.0 h ago · "), cell
    page.goto(server + "/checklist?run=root/copied")
    wait_rendered(page, "Checklist")
    caption = page.get_by_text("updated ").first
    caption.wait_for(timeout=RENDER_TIMEOUT_MS)
    assert "updated 5.0 h ago" in caption.inner_text()
