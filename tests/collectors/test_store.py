"""The run store: round trip, live tail, crash safety, bad input, compaction, resume, discovery."""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from helpers.paths import REPO

from collectors import RunError, RunWriter, discover_runs, load_run
from collectors.meta import RunMeta, write_meta
from collectors.store.parts import list_parts


def _sample_rows(step: int, n: int = 4) -> list[dict]:
    return [{"step": step, "prompt_id": f"p{step % 3}", "group": i // 2, "sample": i % 2, "reward": float(i % 2),
                 "passed": bool(i % 2), "advantage": (-1.0) ** i, "num_tokens": 5 + i, "truncated": i == 3,
                 "prompt": "1+1=", "completion": ["2", "naïve 🙂", "<b>x</b>", None][i]} for i in range(n)]


def _spawn(code: str, *args: str) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=str(REPO))
    return subprocess.Popen([sys.executable, "-c", textwrap.dedent(code), *args], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


# -- round trip ----------------------------------------------------------------------------------
def test_round_trip_metrics_and_samples(tmp_path):
    run_dir = tmp_path / "r"
    with RunWriter(run_dir, name="rt", config={"algo": {"eps": 0.2, "mode": "group"}}, flush_every=3) as w:
        for step in range(7):
            w.log_step(step, {"reward/mean": step / 10, "completions/len_max": step * 3, "flag/ok": step % 2 == 0,
                              "weird/nan": math.nan, "weird/inf": -math.inf if step == 2 else math.inf})
            w.log_samples(_sample_rows(step))
    run = load_run(run_dir)
    m = run.metrics
    assert m["step"].tolist() == list(range(7)) and m["step"].dtype == np.int64
    assert list(m.columns[:3]) == ["step", "wall_time", "reward/mean"]  # canonical first
    assert m["reward/mean"].tolist() == [s / 10 for s in range(7)]
    assert m["completions/len_max"].tolist() == [float(s * 3) for s in range(7)]
    assert m["flag/ok"].tolist() == [1.0, 0.0, 1.0, 0.0, 1.0, 0.0, 1.0]
    assert m["weird/nan"].isna().all()
    assert m.loc[2, "weird/inf"] == -math.inf and m.loc[3, "weird/inf"] == math.inf
    assert run.meta.status == "finished" and run.meta.config == {"algo.eps": 0.2, "algo.mode": "group"}
    assert run.problems == []
    s = run.samples()
    assert len(s) == 28
    first = s[s["step"] == 0].reset_index(drop=True)
    assert first["completion"].tolist()[:3] == ["2", "naïve 🙂", "<b>x</b>"] and first["completion"].isna()[3]
    assert first["passed"].tolist() == [False, True, False, True]
    assert first["truncated"].tolist() == [False, False, False, True]
    assert first["num_tokens"].tolist() == [5, 6, 7, 8] and str(first["num_tokens"].dtype) == "int64"
    assert run.samples(step_min=2, step_max=3)["step"].unique().tolist() == [2, 3]


def test_null_metric_stays_null_and_new_columns_are_kept(tmp_path):
    with RunWriter(tmp_path / "r", flush_every=2) as w:
        w.log_step(0, {"reward/mean": 0.1})
        w.log_step(1, {"reward/mean": 0.2, "eval/pass_rate": 0.5})
        w.log_step(2, {"reward/mean": None})
        w.log_step(3, {"reward/mean": 0.4})
    m = load_run(tmp_path / "r").metrics
    assert m["eval/pass_rate"].isna().tolist() == [True, False, True, True]
    assert m["reward/mean"].isna().tolist() == [False, False, True, False]


# -- live tail -----------------------------------------------------------------------------------
LIVE_WRITER = """
import sys, time
from collectors import RunWriter
with RunWriter(sys.argv[1], flush_interval_s=0.5) as w:
    print("ready", flush=True)
    for step in range(120):
        w.log_step(step, {"reward/mean": step})
        time.sleep(0.01 if step < 60 else 0.05)
"""


def test_live_reader_sees_every_step_once_in_order_while_it_is_written(tmp_path):
    """Polled while the writer flushes every 0.5 s: every step arrives, in order, none twice, and the reader saw
    steps before the run finished (it tails, it does not wait for the end). No wall-clock bound: the loop waits on
    the condition, with a generous ceiling for a loaded machine."""
    run_dir = tmp_path / "live"
    proc = _spawn(LIVE_WRITER, str(run_dir))
    assert proc.stdout.readline().strip() == "ready"
    run = load_run(run_dir)
    seen: list[int] = []
    seen_running = 0  # steps read while run.json still said running
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        before = len(run.metrics)
        run.refresh()
        new = run.metrics.iloc[before:]
        seen += new["step"].tolist()
        if run.meta.status == "running":
            seen_running = len(seen)
        if run.meta.status == "finished" and len(seen) >= 120:
            break
        time.sleep(0.1)
    proc.wait(timeout=60)
    assert seen == list(range(120))  # every step, in order, none twice
    assert seen_running > 0


def test_refresh_reads_only_new_parts_and_survives_merges(tmp_path):
    run_dir = tmp_path / "r"
    w = RunWriter(run_dir, flush_every=1, handle_signals=False)
    reader = None
    for step in range(300):
        w.log_step(step, {"reward/mean": float(step)})
        if reader is None:
            reader = load_run(run_dir)
        elif step % 7 == 0:  # merges of 8 and 64 parts happen between polls
            reader.refresh()
    w.close()
    reader.refresh()
    assert reader.metrics["step"].tolist() == list(range(300))
    assert reader.problems == []
    assert len(list_parts(run_dir / "metrics")[0]) <= 7 * 3


# -- crash ---------------------------------------------------------------------------------------
CRASH_WRITER = """
import sys, time
from collectors import RunWriter
w = RunWriter(sys.argv[1], flush_every=10_000, flush_interval_s=3600)
step = 0
while True:
    w.log_step(step, {"reward/mean": step, "big/x": step * 2})
    w.log_samples([dict(step=step, group=0, sample=0, reward=1.0, completion="x" * 2000)])
    if step % 25 == 24:
        w.flush()
        print("flushed", step, flush=True)
    step += 1
"""


def test_sigkill_leaves_a_loadable_run_with_every_flushed_step(tmp_path):
    run_dir = tmp_path / "crash"
    proc = _spawn(CRASH_WRITER, str(run_dir))
    last_flushed = -1
    while last_flushed < 400:
        line = proc.stdout.readline()
        assert line, proc.stderr.read()
        last_flushed = int(line.split()[1])
    proc.send_signal(signal.SIGKILL)  # most likely in the middle of writing or merging a part
    proc.wait(timeout=10)
    run = load_run(run_dir)
    steps = run.metrics["step"].tolist()
    assert run.problems == []
    assert steps == list(range(len(steps))) and len(steps) >= last_flushed + 1
    assert run.meta.status == "running"  # SIGKILL leaves no chance to record a status ...
    assert run.meta.effective_status(now=time.time() + 3600) == "stale"  # ... so it turns stale
    assert len(run.samples()) == len(steps)


SIGTERM_WRITER = """
import sys, time
from collectors import RunWriter
with RunWriter(sys.argv[1], flush_every=10_000, flush_interval_s=3600) as w:
    for step in range(10_000):
        w.log_step(step, {"reward/mean": step})
        if step == 50:
            print("ready", flush=True)
        time.sleep(0.001)
"""


def test_sigterm_flushes_and_records_failed(tmp_path):
    run_dir = tmp_path / "term"
    proc = _spawn(SIGTERM_WRITER, str(run_dir))
    assert proc.stdout.readline().strip() == "ready"
    proc.send_signal(signal.SIGTERM)
    proc.wait(timeout=20)
    run = load_run(run_dir)
    assert run.meta.status == "failed" and "SIGTERM" in run.meta.error
    assert len(run.metrics) >= 51  # nothing buffered was lost


def test_exception_inside_with_records_failed_with_the_error(tmp_path):
    with pytest.raises(ZeroDivisionError), RunWriter(tmp_path / "r", flush_every=100) as w:
        w.log_step(0, {"reward/mean": 1.0})
        _ = 1 / 0
    run = load_run(tmp_path / "r")
    assert run.meta.status == "failed" and run.meta.error.startswith("ZeroDivisionError")
    assert run.metrics["step"].tolist() == [0]


# -- bad input -----------------------------------------------------------------------------------
def _small_run(path: Path, steps: int = 10, flush_every: int = 2) -> Path:
    with RunWriter(path, flush_every=flush_every) as w:
        for s in range(steps):
            w.log_step(s, {"reward/mean": float(s)})
    return path


def test_not_a_run_folder(tmp_path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(RunError, match=r"empty: not a run folder \(no run.json and no metrics/\)"):
        load_run(tmp_path / "empty")
    with pytest.raises(RunError, match="nope: not a folder"):
        load_run(tmp_path / "nope")


def test_truncated_part_is_skipped_and_reported(tmp_path):
    run_dir = _small_run(tmp_path / "r")
    victim = sorted((run_dir / "metrics").glob("part-*.parquet"))[1]
    data = victim.read_bytes()
    victim.write_bytes(data[: len(data) // 2])
    run = load_run(run_dir)
    assert len(run.metrics) == 8  # the other parts still load
    assert [p.file for p in run.problems] == [f"metrics/{victim.name}"]
    assert "unreadable Parquet part skipped" in run.problems[0].message
    run.refresh()  # reported once, not on every poll
    assert len(run.problems) == 1


def test_missing_and_invalid_run_json(tmp_path):
    run_dir = _small_run(tmp_path / "r")
    (run_dir / "run.json").write_text("{ not json")
    run = load_run(run_dir)
    assert len(run.metrics) == 10 and run.meta.status == "unknown"
    assert str(run.problems[0]).startswith("run.json: not valid JSON (Expecting property name")
    (run_dir / "run.json").unlink()
    run = load_run(run_dir)
    assert len(run.metrics) == 10
    assert str(run.problems[0]) == "run.json: missing; loaded the parts without metadata (status unknown)"


def test_run_json_with_bad_status(tmp_path):
    run_dir = _small_run(tmp_path / "r")
    meta = json.loads((run_dir / "run.json").read_text())
    meta["status"] = "exploded"
    (run_dir / "run.json").write_text(json.dumps(meta))
    run = load_run(run_dir)
    assert "field 'status' is 'exploded'" in run.problems[0].message


def test_duplicated_and_out_of_order_steps(tmp_path):
    with RunWriter(tmp_path / "r", flush_every=2) as w:
        for step, value in [(3, 0.3), (1, 0.1), (2, 0.2), (1, 0.15), (4, 0.4)]:
            w.log_step(step, {"reward/mean": value})
    run = load_run(tmp_path / "r")
    assert run.metrics["step"].tolist() == [1, 2, 3, 4]
    assert run.metrics["reward/mean"].tolist() == [0.15, 0.2, 0.3, 0.4]  # the last write of step 1 wins
    assert str(run.problems[0]) == "metrics: 1 step(s) logged more than once (1); the last write is kept"


def test_a_step_written_in_two_parts_keeps_both_and_is_no_repeat(tmp_path):
    # MetricsTable, as TensorBoard and wandb readers feed it: a step's scalars in two chunks (two flushes), the
    # second without a `_seq` of its own; each column keeps its value, and only a column written twice is a repeat
    from collectors.run import MetricsTable

    t = MetricsTable()
    t.append(pd.DataFrame({"step": [1, 2], "reward/mean": [0.1, 0.2], "policy/kl_ref": [0.01, np.nan]}))
    t.append(pd.DataFrame({"step": [2, 3], "policy/kl_ref": [0.02, 0.03], "reward/mean": [np.nan, 0.3]}))
    assert t.frame()["policy/kl_ref"].tolist() == [0.01, 0.02, 0.03]
    assert t.frame()["reward/mean"].tolist() == [0.1, 0.2, 0.3] and t.duplicate_steps == []
    t.append(pd.DataFrame({"step": [2], "policy/kl_ref": [0.05]}))  # a later chunk: its write wins
    assert t.frame()["policy/kl_ref"].tolist() == [0.01, 0.05, 0.03] and t.duplicate_steps == [2]


def test_stray_file_in_metrics_is_reported(tmp_path):
    run_dir = _small_run(tmp_path / "r")
    (run_dir / "metrics" / "notes.txt").write_text("hi")
    (run_dir / "metrics" / ".part-00000099.parquet.123.tmp").write_text("half")  # an atomic write in progress
    run = load_run(run_dir)
    assert [str(p) for p in run.problems] == ["metrics/notes.txt: not a part file; ignored"]


def test_writer_rejects_bad_values_and_foreign_folders(tmp_path):
    with RunWriter(tmp_path / "r") as w:
        with pytest.raises(ValueError, match=r"metric 'reward/mean' at step 3: expected a number, got the string 'high'"):
            w.log_step(3, {"reward/mean": "high"})
        with pytest.raises(ValueError, match="log_samples: missing required column.*reward"):
            w.log_samples([{"step": 1, "group": 0, "sample": 0}])
        w.log_step(4, {"reward/mean": 1.0})
    assert load_run(tmp_path / "r").metrics["step"].tolist() == [4]  # what was written before is kept
    (tmp_path / "home").mkdir()
    (tmp_path / "home" / "thesis.tex").write_text("precious")
    with pytest.raises(RunError, match="not empty and holds no run.json"):
        RunWriter(tmp_path / "home")
    assert (tmp_path / "home" / "thesis.tex").read_text() == "precious"


def test_nan_and_inf_in_config_and_metrics_do_not_break_json(tmp_path):
    with RunWriter(tmp_path / "r", config={"lr": math.nan, "clip": math.inf}) as w:
        w.log_step(0, {"loss/total": math.nan})
    run = load_run(tmp_path / "r")
    assert run.meta.config == {"lr": "nan", "clip": "inf"}
    json.loads((tmp_path / "r" / "run.json").read_text())  # strict JSON on disk


# -- compaction ----------------------------------------------------------------------------------
def test_twenty_thousand_steps_leave_few_files(tmp_path):
    run_dir = tmp_path / "long"
    with RunWriter(run_dir) as w:
        for step in range(20_000):
            w.log_step(step, {"reward/mean": step * 1e-4, "policy/entropy": 1.0})
    files = list((run_dir / "metrics").iterdir())
    assert len(files) <= 36, [f.name for f in files]
    m = load_run(run_dir).metrics
    assert m["step"].tolist() == list(range(20_000))
    assert np.allclose(m["reward/mean"].to_numpy(), np.arange(20_000) * 1e-4)


def test_superseded_parts_left_by_a_crash_in_a_merge_are_not_read_twice(tmp_path):
    run_dir = _small_run(tmp_path / "r", steps=16, flush_every=1)  # 16 flushes: two level-1 merges
    merged = sorted((run_dir / "metrics").glob("part-*-c1.parquet"))
    assert [p.name for p in merged] == ["part-00000000-00000007-c1.parquet", "part-00000008-00000015-c1.parquet"]
    # Recreate one input part as if the process died after the merge, before deleting its inputs.
    table = pq.read_table(merged[0])
    pq.write_table(table.slice(0, 1), run_dir / "metrics" / "part-00000000.parquet")
    run = load_run(run_dir)
    assert run.metrics["step"].tolist() == list(range(16)) and run.problems == []


# -- resume --------------------------------------------------------------------------------------
def test_resume_relogged_steps_replace_older_rows(tmp_path):
    run_dir = tmp_path / "r"
    with RunWriter(run_dir, flush_every=1) as w:
        for s in range(10):
            w.log_step(s, {"reward/mean": 0.0})
            w.log_samples(_sample_rows(s, 2))
    with RunWriter(run_dir, flush_every=1) as w:  # resumed from a checkpoint of step 6
        for s in range(7, 12):
            w.log_step(s, {"reward/mean": 1.0})
            w.log_samples(_sample_rows(s, 3))
    run = load_run(run_dir)
    assert run.metrics["step"].tolist() == list(range(12))
    assert run.metrics["reward/mean"].tolist() == [0.0] * 7 + [1.0] * 5
    assert run.problems == []
    assert any("re-logged after the resume" in n for n in run.meta.notes)
    assert run.meta.notes[0].startswith("resumed at") and run.meta.notes[0].endswith("after step 9")
    per_step = run.samples().groupby("step").size()
    assert per_step.loc[6] == 2 and per_step.loc[8] == 3  # step 8's samples come from the newer session


# -- discovery -----------------------------------------------------------------------------------
def test_discover_runs_reports_status_and_stale(tmp_path):
    _small_run(tmp_path / "a" / "done")
    live = RunWriter(tmp_path / "b" / "live", handle_signals=False)
    live.log_step(5, {"reward/mean": 1.0})
    live.flush()
    dead = tmp_path / "b" / "dead"
    dead.mkdir(parents=True)
    write_meta(dead, RunMeta(name="dead", status="running", start_time=time.time() - 7200,
                             heartbeat=time.time() - 3600, last_step=42))
    (tmp_path / "not_a_run").mkdir()
    infos = {i.name: i for i in discover_runs(tmp_path)}
    live.close()
    assert set(infos) == {"done", "live", "dead"}
    assert infos["done"].status == "finished" and infos["done"].last_step == 9
    assert infos["live"].status == "running" and infos["live"].last_step == 5
    assert infos["dead"].status == "stale" and infos["dead"].last_step == 42
    assert infos["done"].source == "grpo_core"


def test_samples_are_read_lazily_by_step_range(tmp_path):
    run_dir = tmp_path / "r"
    with RunWriter(run_dir, flush_every=1) as w:
        for s in range(40):
            w.log_step(s, {"reward/mean": 0.0})
            w.log_samples(_sample_rows(s, 2))
            w.flush()
    run = load_run(run_dir)
    part = min((run_dir / "samples").glob("part-*.parquet"))
    part.write_bytes(b"garbage")  # a part outside the range asked for is not even opened
    got = run.samples(step_min=39, step_max=39)
    assert got["step"].tolist() == [39, 39] and run.problems == []


def test_run_format_doc_lists_every_canonical_name_with_its_meaning():
    from collectors.schema import METRICS, SAMPLES

    doc = (REPO / "docs" / "run-format.md").read_text()
    for name, meaning in METRICS.items():
        assert f"| `{name}` | {meaning} |" in doc, name
    for name, (kind, meaning) in SAMPLES.items():
        assert f"| `{name}` | {kind} | {meaning} |" in doc, name


def test_hand_written_run_as_documented_loads(tmp_path):
    run = tmp_path / "by_hand"
    (run / "metrics").mkdir(parents=True)
    (run / "run.json").write_text(json.dumps({"schema_version": 1, "name": "by hand", "source": "my_trainer",
                                              "status": "finished", "config": {"algo": {"group_size": 8}}}))
    pq.write_table(pa.table({"step": [0, 1, 2], "reward/mean": [0.1, 0.2, 0.4]}), run / "metrics" / "part-00000000.parquet")
    loaded = load_run(run)
    assert loaded.metrics["reward/mean"].tolist() == [0.1, 0.2, 0.4]
    assert loaded.meta.config == {"algo.group_size": 8} and loaded.problems == []


def test_until_is_a_frozen_prefix_and_leaves_the_run_alone(tmp_path):
    from collectors import RunWriter, load_run

    w = RunWriter(tmp_path / "r", name="r", config={"a": 1}, handle_signals=False)
    for i in range(10):
        w.log_step(i, {"reward/mean": 0.1 * i})
    for step in (2, 8):
        w.log_samples([{"step": step, "prompt_id": "p", "group": 0, "sample": 0, "reward": 1.0, "passed": True,
                        "advantage": 0.0, "num_tokens": 3, "truncated": False, "prompt": "q", "completion": "a"}])
    w.close()
    run = load_run(tmp_path / "r")
    past = run.until(4)
    assert list(past.metrics["step"]) == [0, 1, 2, 3, 4] and list(past.samples()["step"]) == [2]
    assert past.meta.config == {"a": 1} and past.refresh() == 0
    assert len(run.metrics) == 10 and list(run.samples()["step"]) == [2, 8]


def test_a_lone_surrogate_in_a_text_is_kept_as_a_replacement_character(tmp_path):
    """Bytes a custom trainer decoded with `surrogateescape` hold lone surrogates, which are no UTF-8: the
    samples are written with U+FFFD in their place instead of the flush failing and losing the batch."""
    w = RunWriter(tmp_path / "r", config={})
    w.log_step(1, {"reward/mean": 0.5})
    w.log_samples([{"step": 1, "group": 0, "sample": 0, "reward": 1.0, "completion": "42 \udcff!",
                    "judge_note": "raw \udc80"}])
    w.close()
    s = load_run(tmp_path / "r").samples()
    assert s["completion"].tolist() == ["42 \ufffd!"] and s["judge_note"].tolist() == ["raw \ufffd"]
