"""The Runs table's "last update" of a published or imported run is the run's own time, not the time its files
were cloned or imported (issue 39, item 9; docs/dashboard.md)."""

from __future__ import annotations

import json
import time

from collectors import open_run
from collectors.cli import main as grpo_import
from collectors.store.load import native_info

LAST = 1.6e9 + 10 * 29  # 2020-09-13: the log's last wall time


def write_log(tmp_path):
    log = tmp_path / "log.jsonl"
    log.write_text("".join(json.dumps({"step": i, "reward": 0.1 * i, "wall_time": 1.6e9 + 10 * i}) + "\n"
                           for i in range(30)))
    return log


def test_a_published_log_is_as_old_as_its_last_logged_time(tmp_path):
    run = open_run(str(write_log(tmp_path)))  # the file was written a moment ago (a clone)
    assert run.last_update == LAST


def test_an_imported_run_keeps_the_sources_time(tmp_path):
    out = tmp_path / "imported"
    assert grpo_import([str(write_log(tmp_path)), "--to", str(out)]) == 0
    assert native_info(out).last_update == LAST  # was the import's own time
    before = time.time()
    grpo_import([str(write_log(tmp_path)), "--to", str(tmp_path / "again")])
    assert native_info(tmp_path / "again").last_update < before
