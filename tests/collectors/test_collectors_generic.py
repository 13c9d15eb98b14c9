"""Generic JSONL / CSV reader: one row per step, --map overrides, family keys, bad lines named."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from helpers.paths import REPO

from collectors.meta import RunError
from collectors.readers.text.generic import GenericRun
from collectors.sources import detect_source, open_run


def test_csv_with_map_and_family_keys(tmp_path):
    f = tmp_path / "log.csv"
    f.write_text("global_step,my_reward,train/kl,junk\n1,0.5,0.1,a\n2,0.7,,3\n")
    assert detect_source(f) == "generic"
    run = GenericRun(f, {"my_reward": "reward/mean"})
    m = run.metrics
    assert list(m["step"]) == [1, 2] and list(m["reward/mean"]) == [0.5, 0.7]
    assert m["policy/kl_ref"].iloc[0] == 0.1 and math.isnan(m["policy/kl_ref"].iloc[1])
    assert any("line 2: non-numeric junk" in str(p) for p in run.problems)
    with f.open("a") as fh:
        fh.write("3,0.9,0.2,4\n")
    assert run.refresh() == 1 and run.last_step == 3


def test_jsonl_duplicates_truncated_and_no_step(tmp_path):
    f = tmp_path / "log.jsonl"
    f.write_text("".join(json.dumps(x) + "\n" for x in [{"step": 1, "reward": 1.0}, {"step": 2, "reward": 2.0},
                                                         {"step": 2, "reward": 3.0}, {"loss": 1}])
                 + '{"step": 3, "rew\n')
    run = open_run(f)
    m = run.metrics
    assert list(m["step"]) == [1, 2] and m["reward/mean"].iloc[1] == 3.0  # the last write of a step wins
    msgs = " ".join(map(str, run.problems))
    assert "log.jsonl: 1 step(s) logged more than once (2); the last write is kept" in msgs
    assert "line 4: no integer step" in msgs and "line 5: not valid JSON" in msgs and "log.jsonl" in msgs


def test_a_step_whose_keys_come_on_two_lines_is_one_step_in_parts(tmp_path):
    # train metrics, then eval metrics at the same step (a custom logger's two calls): no repeat, nothing lost,
    # whether both lines are read at once or the second arrives with the next refresh
    f = tmp_path / "log.jsonl"
    f.write_text('{"step": 1, "reward": 0.1, "kl": 0.01}\n{"step": 2, "reward": 0.2}\n')
    run = open_run(f)
    assert run.problems == []
    with f.open("a") as fh:
        fh.write('{"step": 2, "kl": 0.02}\n{"step": 3, "reward": 0.3, "kl": 0.03}\n')
    assert run.refresh() == 2
    for r in (run, open_run(f)):
        assert r.metrics["reward/mean"].tolist() == [0.1, 0.2, 0.3]
        assert r.metrics["policy/kl_ref"].tolist() == [0.01, 0.02, 0.03]
        assert r.problems == [], r.problems
    # the same key of a step written again is a repeat: noted, its last write kept, the other key untouched
    with f.open("a") as fh:
        fh.write('{"step": 3, "kl": 0.04}\n')
    run.refresh()
    for r in (run, open_run(f)):
        assert r.metrics["policy/kl_ref"].tolist() == [0.01, 0.02, 0.04] and r.metrics["reward/mean"].iloc[2] == 0.3
        assert [p.message for p in r.problems] == ["1 step(s) logged more than once (3); the last write is kept"]


def test_a_step_column_named_in_another_case_is_the_step(tmp_path):
    # a CSV saved from a spreadsheet or written by hand: "Step", "Reward", "KL"; and a JSONL with "Global_Step"
    f = tmp_path / "log.csv"
    f.write_text("Step,Reward,KL\n1,0.1,0.01\n2,0.2,0.02\n")
    assert detect_source(f) == "generic"
    m = open_run(f).metrics
    assert m["step"].tolist() == [1, 2] and m["reward/mean"].tolist() == [0.1, 0.2]
    assert m["policy/kl_ref"].tolist() == [0.01, 0.02]
    g = tmp_path / "log.jsonl"
    g.write_text('{"Global_Step": 5, "reward": 0.5}\n{"Global_Step": 6, "reward": 0.6}\n')
    assert open_run(g).metrics["step"].tolist() == [5, 6]
    # a name as written wins over one in another case
    h = tmp_path / "both.csv"
    h.write_text("Step,step,reward\n9,1,0.1\n9,2,0.2\n")
    assert open_run(h).metrics["step"].tolist() == [1, 2]


def test_synonyms_counts_as_fraction_and_zero_columns_not_measured(tmp_path):
    f = tmp_path / "metrics.jsonl"
    rows = [{"step": s, "mean_reward": 0.5 * s, "avg_gen_tokens": 100 + s, "entropy": 0.0, "approx_kl": 0.0,
             "truncated_count": s, "rollout_count": 4, "accuracy": 0.25} for s in (1, 2, 3)]
    f.write_text("".join(json.dumps(r) + "\n" for r in rows))
    run = open_run(f)
    m = run.metrics
    assert list(m["reward/mean"]) == [0.5, 1.0, 1.5] and list(m["completions/len_mean"]) == [101, 102, 103]
    assert list(m["completions/truncated_frac"]) == [0.25, 0.5, 0.75] and list(m["reward/pass_rate"]) == [0.25] * 3
    assert "policy/entropy" not in m and "policy/kl_ref" not in m  # logged as 0.0: the trainer did not compute them
    assert run.not_measured == ["policy/entropy", "policy/kl_ref"]
    assert any("0 on every row, so not measured" in str(p) and "metrics.jsonl" in str(p) for p in run.problems)
    with f.open("a") as fh:  # a later non-zero value makes it a measurement again, whole column back
        fh.write(json.dumps({"step": 4, "mean_reward": 2.0, "entropy": 0.7}) + "\n")
    assert run.refresh() == 1
    assert list(run.metrics["policy/entropy"].fillna(-1)) == [0.0, 0.0, 0.0, 0.7]
    assert run.not_measured == ["policy/kl_ref"]


def test_user_map_wins_and_nan_is_told_from_null(tmp_path):
    f = tmp_path / "log.jsonl"
    f.write_text('{"step": 1, "accuracy": 0.5, "score": NaN}\n{"step": 2, "accuracy": 0.7, "score": null}\n'
                 '{"step": 3, "accuracy": 0.9, "score": 1.0}\n')
    run = GenericRun(f, {"accuracy": "eval/pass_rate", "score": "reward/mean"})
    m = run.metrics
    assert list(m["eval/pass_rate"]) == [0.5, 0.7, 0.9] and "reward/pass_rate" not in m
    assert run.nan_at == {"reward/mean": {1}}  # step 2 logged null: not measured, not a NaN


def test_json_list_of_dicts_merges_eval_rows_of_a_step(tmp_path):
    f = tmp_path / "log_history.json"
    f.write_text(json.dumps([{"loss": 0.1, "reward": 0.2, "step": 1}, {"loss": 0.3, "reward": 0.4, "step": 2},
                             {"eval_reward": 0.9, "step": 2}, {"train_runtime": 5.0, "step": 2}]))
    assert detect_source(f) == "generic"
    run = open_run(f)
    m = run.metrics
    assert list(m["step"]) == [1, 2] and list(m["loss/total"]) == [0.1, 0.3]
    assert m["eval/reward_mean"].iloc[1] == 0.9 and "train_runtime" not in m  # the summary is no metric
    assert run.meta.info["train_summary"] == {"train_runtime": 5.0}


def test_numeric_strings_and_a_type_change_fall_back_to_line_by_line(tmp_path):
    f = tmp_path / "log.jsonl"
    f.write_text('{"step": 1, "reward": 0.5}\n{"step": 2, "reward": "0.75"}\n{"step": 3, "reward": "n/a"}\n')
    run = open_run(f)
    assert list(run.metrics["reward/mean"].fillna(-1)) == [0.5, 0.75, -1]
    assert any("line 3: non-numeric reward; left null" in str(p) for p in run.problems)


def test_a_folder_of_logs_is_one_run_per_log_and_a_config_beside_is_read(tmp_path):
    from collectors.sources import launches_of

    (tmp_path / "a.jsonl").write_text('{"step": 1, "reward": 0.1}\n{"step": 2, "reward": 0.2}\n')
    (tmp_path / "b.csv").write_text("step,reward\n1,0.5\n")
    (tmp_path / "notes.txt").write_text("nothing to read here\n")
    (tmp_path / "config_grpo.yaml").write_text("group_size: 5\noptim:\n  lr: 5.0e-6\n")
    assert detect_source(tmp_path) == "generic"
    assert sorted(Path(t).name for t in launches_of(tmp_path)) == ["a.jsonl", "b.csv"]
    run = open_run(tmp_path / "a.jsonl")
    assert run.meta.config == {"group_size": 5, "optim.lr": 5e-6} and run.meta.info["config_source"] == "config_grpo.yaml"
    (tmp_path / "config_grpo.yaml").write_text("group_size: [5\n")
    run = open_run(tmp_path / "a.jsonl")
    assert run.meta.config == {} and any(p.file == "config_grpo.yaml" and "not readable" in p.message
                                         for p in run.problems)


def test_every_synonym_is_documented():
    from collectors.readers.synonyms import RATIOS, SYNONYMS

    doc = (REPO / "docs" / "importing.md").read_text()
    table = doc[doc.index("## Names: the synonym table"):doc.index("## Key-value text logs")]
    for theirs, ours in SYNONYMS.items():
        assert f"`{theirs}`" in table and f"`{ours}`" in table, theirs
    for num, den, _ in RATIOS:
        assert f"`{num}` / `{den}`" in table


def test_a_constant_column_is_kept_and_named_apart_from_placeholder_zeros(tmp_path):
    f = tmp_path / "log.csv"
    lines = ["step,reward,entropy,lr,clipfrac"] + [f"{s},{0.1 * s},0.0,1e-06,0" for s in (1, 2, 3)]
    f.write_text("\n".join(lines) + "\n")
    run = open_run(f)
    m = run.metrics
    assert "policy/entropy" not in m and run.not_measured == ["policy/entropy"]  # a placeholder: left out
    assert list(m["optim/lr"]) == [1e-6] * 3 and list(m["policy/clipfrac"]) == [0.0] * 3  # readings: kept
    assert run.constant == {"optim/lr": 1e-6, "policy/clipfrac": 0.0}
    notes = sorted(p.message for p in run.problems)
    assert notes == ["entropy (policy/entropy): 0 on every row, so not measured; left out of the metrics",
                     ("the same value on every row, kept as measured (a fixed learning rate, a clip fraction "
                     "never hit): lr (optim/lr) = 1e-06, clipfrac (policy/clipfrac) = 0")]
    with f.open("a") as fh:  # the learning rate moves: no longer constant, the note names the clip fraction only
        fh.write("4,0.4,0.0,2e-06,0\n")
    assert run.refresh() == 1
    assert run.constant == {"policy/clipfrac": 0.0}
    assert [p.message for p in run.problems if p.message.startswith("the same value")] == [
        ("the same value on every row, kept as measured (a fixed learning rate, a clip fraction never hit): "
        "clipfrac (policy/clipfrac) = 0")]


@pytest.mark.filterwarnings("error::pytest.PytestUnraisableExceptionWarning")
def test_a_csv_that_is_not_utf8_is_read_and_named_without_an_ignored_exception(tmp_path):
    f = tmp_path / "log.csv"
    # a ragged row holding Latin-1 bytes (pyarrow decodes a ragged row's text before its handler sees it)
    f.write_bytes(b"step,reward\n1,0.5\n2,0.6,caf\xe9\n3,0.7\n")
    run = GenericRun(f)
    assert run.metrics["step"].tolist() == [1, 3] and run.metrics["reward/mean"].tolist() == [0.5, 0.7]
    assert [p.message for p in run.problems] == [
        "line 3: bytes that are not UTF-8; replaced, so cells holding them are text",
        "1 row(s) with 3 cells, header has 2; skipped"]
    g = tmp_path / "head.csv"
    g.write_bytes(b"step,r\xe9ward\n1,0.5\n")
    with pytest.raises(RunError, match="head.csv: the header is not UTF-8 text"):
        GenericRun(g)
