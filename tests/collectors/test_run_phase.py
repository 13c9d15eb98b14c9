"""run.json's `phase` (what a running run does before its first step): written by RunWriter.set_phase, cleared
by the first step, checked on read, and put in words by the dashboard; the runs table's time is the run's own."""

from __future__ import annotations

import json
import shutil
import time

import pytest

from collectors import RunError, RunWriter, load_run
from collectors.meta import phase_progress, read_meta
from collectors.store.load import native_info
from dashboard.text import phase_text, update_cell


def test_set_phase_is_in_run_json_until_the_first_step(tmp_path):
    with RunWriter(tmp_path / "r", config={"steps": 5}, handle_signals=False) as w:
        w.set_phase("warm_start", 300, 2000, sampled_pass_rate=0.21, target_pass_rate=0.4)
        meta = json.loads((tmp_path / "r" / "run.json").read_text())
        assert meta["status"] == "running" and meta["config"] == {"steps": 5}
        assert meta["phase"] == {"name": "warm_start", "done": 300, "total": 2000,
                                 "detail": {"sampled_pass_rate": 0.21, "target_pass_rate": 0.4}}
        assert native_info(tmp_path / "r").phase == meta["phase"]
        w.log_step(0, {"reward/mean": 0.5})
        w.flush()
        assert json.loads((tmp_path / "r" / "run.json").read_text())["phase"] is None
    assert load_run(tmp_path / "r").meta.phase is None


def test_a_phase_of_the_wrong_type_is_refused_naming_the_field(tmp_path):
    with RunWriter(tmp_path / "r", handle_signals=False):
        pass
    meta = json.loads((tmp_path / "r" / "run.json").read_text())
    meta["phase"] = "warm start"
    (tmp_path / "r" / "run.json").write_text(json.dumps(meta))
    with pytest.raises(RunError, match=r"run.json: field 'phase' is 'warm start', expected an object or null"):
        read_meta(tmp_path / "r")
    assert [str(p) for p in load_run(tmp_path / "r").problems] == [
        "run.json: field 'phase' is 'warm start', expected an object or null; metadata ignored"]


def test_phase_in_words_in_both_languages():
    phase = {"name": "warm_start", "done": 300, "total": 2000,
             "detail": {"sampled_pass_rate": 0.2134, "target_pass_rate": 0.4}}
    assert phase_text(phase, "en") == (("supervised warm start before the first step: step 300 of at most 2000 · "
                                        "sampled pass rate 0.21 (stops at 0.4)"), 0.15)
    assert phase_text(phase, "zh") == ("第一步之前的监督预热：第 300 步，最多 2000 步 · 采样 pass rate 0.21（到 0.4 即停）",
                                       0.15)
    assert phase_text({"name": "first_rollout", "done": None, "total": None}, "zh") == ("正在采样第一批 rollout", None)
    assert phase_text({"name": "tokenising", "done": 3, "total": 4}, "en") == (
        "before the first step: tokenising · 3 of 4", 0.75)
    # a hand-written phase: what can be read of it, never an exception
    assert phase_progress({"name": "x", "done": -1, "total": "many"}) == ("x", None, None, {})
    assert phase_text({"done": 3}, "en") is None and phase_text(None, "en") is None


def test_a_copied_run_was_last_updated_when_its_heartbeat_says(tmp_path):
    with RunWriter(tmp_path / "src", handle_signals=False) as w:
        w.log_step(0, {"reward/mean": 0.5})
    meta = json.loads((tmp_path / "src" / "run.json").read_text())
    meta["heartbeat"] = meta["end_time"] = 1_000_000.0
    (tmp_path / "src" / "run.json").write_text(json.dumps(meta))
    shutil.copytree(tmp_path / "src", tmp_path / "copy")  # files as new as the copy
    assert native_info(tmp_path / "copy").last_update == 1_000_000.0 == load_run(tmp_path / "copy").last_update
    assert update_cell(1_000_000.0, now=1_000_000.0 + 18.7 * 3600) == (
        f"18.7 h ago · {time.strftime('%Y-%m-%d %H:%M:%S', time.localtime(1_000_000.0))}")
    assert update_cell(None) == ""
