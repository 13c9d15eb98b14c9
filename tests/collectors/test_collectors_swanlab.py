"""SwanLab runs written by swanlab itself (tests/fixtures/swanlab_runs.py: local mode, as verl's tracker logs):
a run folder and its `swanlog/` open with verl's keys under the canonical names, the config from
files/config.yaml, the status from the finish record; the checklist charts draw them and the diagnosis judges
them. The reader needs no swanlab; writing the runs does (the dev extra), so without it these skip."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from fixtures.swanlab_runs import have_swanlab, verl_rows, write_run

from collectors.meta import RunError
from collectors.sources import detect_source, launches_of, open_run
from dashboard.diagnosis import diagnose

needs_swanlab = pytest.mark.skipif(not have_swanlab(), reason="swanlab writes the fixtures: pip install 'grposcope[dev]'")


@pytest.fixture(scope="module")
def swanlog(tmp_path_factory):
    logdir = tmp_path_factory.mktemp("swan") / "swanlog"
    write_run(logdir, "local")
    return logdir


@needs_swanlab
def test_a_local_run_opens_with_verl_keys_config_and_status(swanlog):
    (run_dir,) = swanlog.glob("run-*")
    assert detect_source(swanlog) == "swanlab" and launches_of(swanlog) == [str(run_dir)]
    run = open_run(swanlog)
    m = run.metrics
    assert run.problems == [] and run.status == "finished" and run.meta.name == "qwen2_7b_function_rm"
    assert m["step"].tolist() == list(range(1, 31))  # swanlab.log(..., step=step) as verl logs
    assert m["reward/mean"].tolist() == [0.0] * 30  # critic/score/mean: a proto3 zero, left out on the wire
    assert m["policy/entropy"].tolist() == pytest.approx([0.9 - 0.001 * s for s in range(1, 31)])
    assert m["completions/len_mean"].iloc[-1] == 330.0 and m["completions/truncated_frac"].iloc[0] == 0.02
    assert m["policy/kl_ref"].iloc[0] == 0.0005 and "critic/rewards/mean" in m  # no canonical twin: kept as is
    assert "val/generations" not in m  # text media: no metric
    c = run.meta.config
    assert c["FRAMEWORK"] == "verl" and c["actor_rollout_ref.rollout.n"] == 5
    assert c["algorithm.adv_estimator"] == "grpo" and c["actor_rollout_ref.actor.optim.lr"] == 1e-6
    assert run.meta.start_time is not None and run.meta.end_time >= run.meta.start_time


@needs_swanlab
def test_its_checklist_charts_are_drawn_and_the_run_is_diagnosed(swanlog):
    from dashboard.charts import checklist_figure

    run = open_run(swanlog)
    fig = checklist_figure(run.metrics)
    drawn = {t.name for t in fig.data if t.y is not None and len(t.y)}
    assert {"reward/mean", "policy/entropy", "completions/len_mean"} <= drawn or len(drawn) >= 3, drawn
    found = {f.rule_id: f.severity for f in diagnose(run).findings}
    assert found.get("reward_constant") == "critical"  # a reward of 0 on every step, from step 1


@needs_swanlab
def test_the_dashboards_database_beside_the_runs_is_no_run(swanlog):
    # local mode keeps its dashboard's SQLite database under the same suffix: swanlog/runs.swanlab
    db = swanlog / "runs.swanlab"
    assert db.is_file() and detect_source(db) != "swanlab"


@needs_swanlab
def test_an_offline_run_and_a_run_still_writing(tmp_path):
    run_dir = write_run(tmp_path / "swanlog", "offline", rows=verl_rows(8))
    (record,) = run_dir.glob("run-*.swanlab")
    whole = record.read_bytes()
    record.write_bytes(whole[: len(whole) * 2 // 3])  # a writer mid-way: what is whole is read
    run = open_run(run_dir)
    first = len(run.metrics)
    assert 0 < first < 8 and run.status == "running" and len(run.eval_samples()) == 0
    record.write_bytes(whole)
    run.refresh()
    assert len(run.metrics) == 8 and run.status == "finished" and run.metrics["step"].tolist() == list(range(1, 9))
    assert run.eval_samples()["step"].tolist() == [8, 8]  # the validation table logged at the end, read on refresh


@needs_swanlab
def test_a_damaged_record_file_is_a_named_problem(tmp_path):
    run_dir = write_run(tmp_path / "swanlog", "offline", rows=verl_rows(5))
    (record,) = run_dir.glob("run-*.swanlab")
    data = bytearray(record.read_bytes())
    data[len(data) // 2] ^= 0xFF
    record.write_bytes(bytes(data))
    run = open_run(run_dir)
    assert any(p.file == record.name and "CRC" in p.message for p in run.problems)
    assert 0 < len(run.metrics) < 5  # what came before the damage


@needs_swanlab
def test_a_swanlog_of_two_runs_is_two_launches(tmp_path):
    from collectors.sources import open_runs

    first = write_run(tmp_path / "swanlog", "offline", rows=verl_rows(3))
    second = write_run(tmp_path / "swanlog", "offline", rows=verl_rows(5))
    assert launches_of(tmp_path / "swanlog") == sorted([str(first), str(second)])
    with pytest.raises(RunError, match="holds 2 separate runs"):
        open_run(tmp_path / "swanlog")
    assert sorted(len(r.metrics) for r in open_runs(tmp_path / "swanlog")) == [3, 5]


def test_the_reader_imports_no_swanlab():
    code = ("import sys; import collectors.readers.stores.swanlab; "
            "print(sorted(m for m in ('swanlab', 'google.protobuf', 'torch', 'streamlit') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert json.loads(out.stdout.strip().replace("'", '"')) == []


@needs_swanlab
@pytest.mark.parametrize("shape", ["table", "text"])
def test_verls_validation_generations_are_eval_samples(swanlog, tmp_path, shape):
    """verl's val/generations: an echarts table at the last step (newer verl: the module's run) or one Text per
    sample at step 15 (older verl), each (input, output, score) one eval sample, its prompt a group of its own;
    none is a training sample (the diagnosis reads those as rollouts)."""
    from fixtures.swanlab_runs import GENERATIONS

    run = open_run(swanlog if shape == "table" else write_run(tmp_path / "swanlog", "offline", rows=verl_rows(16),
                                                              shape="text"))
    ev = run.eval_samples()
    assert len(run.samples()) == 0 and run.problems == []
    assert ev["step"].tolist() == [30 if shape == "table" else 15] * 2
    assert ev["prompt"].tolist() == [g[0] for g in GENERATIONS]
    assert ev["completion"].tolist() == ["48 + 24 = 72\n#### 72", "3 + 5 = 8\n#### 8"]  # its own lines kept
    assert ev["reward"].tolist() == [0.0, 0.0] and ev["group"].tolist() == [0, 1] and ev["sample"].tolist() == [0, 0]


def test_swanlab_text_that_is_no_generation_and_odd_media_items(tmp_path):
    """The media helpers on what a run may hold besides verl's form: plain text is no sample; a table without
    input and output columns gives none; a file name climbing out of the run folder is not opened."""
    from collectors.readers.stores import swanlab_media as media

    assert media.text_record("Question: 2+2? Answer: 4") is None
    assert media.text_record("input: a\n\n---\n\noutput: b\n\n---\n\nscore: n/a")[:2] == ("a", "b")
    assert media.table_records('{"_swanLab": "table", "rowData": [{"x": 1}]}') == []
    assert media.table_records('{"_swanLab": "table", "rowData": [{"input": "p", "output": null, "score": "1"}]}') \
        == [(None, ("p", None, 1.0))]
    (tmp_path / "secret.txt").write_text("input: x\n---\noutput: y")
    (tmp_path / "run" / "media" / "text").mkdir(parents=True)
    assert media.item_content(tmp_path / "run", media.TEXT, "../../../secret.txt", None) is None
    assert media.item_content(tmp_path / "run", media.TEXT, "missing.txt", None) is None
    assert media.item_content(tmp_path / "run", media.TEXT, "x.txt", b"payload") == "payload"


@needs_swanlab
def test_a_run_as_it_stood_keeps_the_eval_samples_up_to_then(swanlog):
    run = open_run(swanlog)
    assert len(run.until(29).eval_samples()) == 0 and len(run.until(30).eval_samples()) == 2
