"""grpo-import and source detection across readers."""

from __future__ import annotations

import json
import math

import pytest
from fixtures.verl_logs import console_line  # tests/ is on sys.path
from helpers.paths import REPO
from transformers import TrainerState  # what writes trainer_state.json (dev extra)

from collectors import load_run
from collectors.cli import main
from collectors.sources import detect_source


def test_import_verl_jsonl_round_trips(tmp_path, capsys):
    src = tmp_path / "metrics.jsonl"
    src.write_text("".join(json.dumps({"step": s, "data": {"critic/score/mean": s / 10, "x/y": None}}) + "\n"
                           for s in range(1, 6)))
    to = tmp_path / "run"
    assert main([str(src), "--to", str(to)]) == 0
    assert "5 steps imported" in capsys.readouterr().out
    run = load_run(to)
    assert run.meta.source == "verl" and list(run.metrics["reward/mean"]) == [0.1, 0.2, 0.3, 0.4, 0.5]
    assert math.isnan(run.metrics["wall_time"].iloc[0])  # no made-up times
    assert any("imported from" in n for n in run.meta.notes)
    # a second import into the same folder is refused, the first run stays intact
    assert main([str(src), "--to", str(to)]) == 2
    assert "already holds a run" in capsys.readouterr().err
    assert len(load_run(to).metrics) == 5


def test_import_csv_with_map(tmp_path):
    src = tmp_path / "log.csv"
    src.write_text("step,acc,train/entropy\n1,0.5,2.0\n2,0.6,1.9\n")
    to = tmp_path / "run"
    assert main([str(src), "--to", str(to), "--map", "acc=reward/pass_rate"]) == 0
    m = load_run(to).metrics
    assert list(m["reward/pass_rate"]) == [0.5, 0.6] and list(m["policy/entropy"]) == [2.0, 1.9]


@pytest.mark.parametrize("argv, message", [
    (["{tmp}/missing", "--to", "{tmp}/r"], "missing: no such file or folder"),
    (["{tmp}/empty", "--to", "{tmp}/r"], "empty: no reader recognises this"),
    (["{tmp}/log.csv", "--to", "{tmp}/r", "--format", "nope"], "--format 'nope': unknown"),
    (["{tmp}/log.csv", "--to", "{tmp}/r", "--map", "bad"], "--map 'bad': expected THEIRS=OURS"),
    (["{tmp}/log.csv", "--to", "{tmp}/r", "--map", "a=b,c=d"], "--map 'a=b,c=d': one THEIRS=OURS per --map"),
    (["{tmp}/bad.jsonl", "--to", "{tmp}/r", "--format", "generic"], "bad.jsonl: nothing readable"),
])
def test_bad_input_exits_2_with_one_line(tmp_path, capsys, argv, message):
    (tmp_path / "empty").mkdir()
    (tmp_path / "log.csv").write_text("step,a\n1,2\n")
    (tmp_path / "bad.jsonl").write_text('{"step": 1, "a\n')
    assert main([a.format(tmp=tmp_path) for a in argv]) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1
    assert not (tmp_path / "r" / "run.json").exists()


def test_detection_picks_each_reader(tmp_path):
    (tmp_path / "trl" / "checkpoint-3").mkdir(parents=True)
    TrainerState(global_step=3).save_to_json(str(tmp_path / "trl" / "checkpoint-3" / "trainer_state.json"))
    (tmp_path / "verl").mkdir()
    (tmp_path / "verl" / "train.log").write_text(console_line(1, {"critic/score/mean": 0.5}))  # verl's console
    (tmp_path / "csv.csv").write_text("step,a\n1,2\n")
    (tmp_path / "other.txt").write_text("hello\n")
    assert detect_source(tmp_path / "trl") == "trl"
    assert detect_source(tmp_path / "verl") == "verl"
    assert detect_source(tmp_path / "csv.csv") == "generic"
    assert detect_source(tmp_path / "other.txt") is None


def test_a_reader_that_fails_to_import_is_reported_not_fatal(tmp_path):
    """One broken reader module: discovery of every other source still works, and the failure is named."""
    import subprocess
    import sys

    run = tmp_path / "run"
    run.mkdir()
    (run / "log.csv").write_text("step,reward\n1,0.5\n")
    target = str(run / "log.csv")
    code = ("import collectors.sources as s; s.READER_MODULES.insert(0, 'collectors.no_such_reader'); "
            f"from collectors import open_run; r = open_run({target!r}); print(len(r.metrics), s.reader_problems())")
    root = REPO
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=root, check=False)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("1 [\"reader collectors.no_such_reader could not be loaded: "
                                  "ModuleNotFoundError: No module named 'collectors.no_such_reader'\"]")


def test_grpo_diagnose_reads_every_target_forces_a_source_maps_and_carries_notes(tmp_path, capsys):
    from dashboard.diagnosis.cli import main as diagnose_main

    rows = [{"step": s, "score": 0.1 * s, "entropy": 0.0, "len": 100 + s} for s in range(1, 31)]
    log = tmp_path / "train.log"  # JSON lines under a .log name: only --source generic reads it as rows
    log.write_text("".join(json.dumps(r) + "\n" for r in rows))
    good = tmp_path / "m.jsonl"
    good.write_text(log.read_text())
    missing = tmp_path / "missing"
    argv = [str(good), str(missing), str(log), "--source", "generic", "--map", "score=reward/mean",
            "--map", "len=completions/len_mean", "--format", "json"]
    assert diagnose_main(argv) == 2  # every readable target judged, the unreadable one named, exit 2 at the end
    out = capsys.readouterr()
    doc = json.loads(out.out)
    assert set(doc) == {str(good), str(log)}
    assert "missing" in out.err and "1 of 3 target(s) could not be read" in out.err
    for name in doc:
        assert any("entropy (policy/entropy): 0 on every row, so not measured" in n for n in doc[name]["notes"])
        assert doc[name]["verdict"]["kind"] != "cant_judge"  # the mapped reward is there
    from collectors.readers.synonyms import user_map

    assert user_map() == {}  # the map went with those runs, not into later opens


def test_import_takes_source_and_map_for_a_key_value_log(tmp_path):
    src = tmp_path / "train.log"
    src.write_text("".join(f"iter {s}: Score: {s / 10}, Policy Loss: 0.5, Resp Len: {100 + s}\n" for s in range(1, 4)))
    to = tmp_path / "run"
    assert main([str(src), "--to", str(to), "--source", "kvtext", "--map", "Score=reward/mean",
                 "--map", "Resp Len=completions/len_mean"]) == 0
    m = load_run(to).metrics
    assert list(m["reward/mean"]) == [0.1, 0.2, 0.3] and list(m["completions/len_mean"]) == [101, 102, 103]
    assert list(m["loss/policy"]) == [0.5] * 3


def test_a_reader_named_for_a_folder_it_finds_nothing_in_is_a_one_line_error(tmp_path, capsys):
    """--source kvtext on a folder whose only log holds no `Name: number` lines opened an empty run and
    diagnosed 0 steps; it is now "cannot read", naming the folder and the reader, exit 2. The same log named
    itself opens, with a note saying no row was found."""
    from dashboard.diagnosis.cli import main as diagnose_main

    (tmp_path / "train.log").write_text("hello world\nnothing to see here\n")
    assert diagnose_main([str(tmp_path), "--source", "kvtext"]) == 2
    err = capsys.readouterr().err
    assert f"cannot read {tmp_path}: the kvtext reader finds nothing to read in this folder" in err
    assert diagnose_main([str(tmp_path / "train.log"), "--source", "kvtext"]) == 3  # opened, nothing to judge
    out = capsys.readouterr().out
    assert "train.log: no two lines with 3 or more `Name: number` pairs under the same names yet" in out


def test_grpo_diagnose_into_a_closed_pipe_ends_without_a_traceback():
    """`grpo-diagnose RUNS --format json | head -1`: the reader leaves after one line; the rest (140 KB, more than
    a pipe holds, so the write certainly fails) is dropped without a traceback."""
    import subprocess
    import sys

    root = REPO
    runs = [str(p) for p in sorted((root / "sample_runs").iterdir()) if p.is_dir()]
    proc = subprocess.run(f"{sys.executable} -m dashboard.diagnosis.cli {' '.join(runs)} --format json | head -1",
                          check=False, shell=True, capture_output=True, text=True, cwd=root, timeout=300)
    assert proc.stdout == "{\n"
    assert "Traceback" not in proc.stderr and "BrokenPipeError" not in proc.stderr
