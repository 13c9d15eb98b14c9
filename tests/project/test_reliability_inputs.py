"""Values the readers decide about on purpose: out-of-range numbers, steps that are no int64, non-UTF-8,
deep nesting, fields of the wrong type, Parquet columns of the wrong type, damaged pickles.

Each decision is one of: keep (as infinity, as NaN), leave out and count, or refuse with RunError naming the
file (and the field) in one line.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pandas.testing as pd_testing
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from helpers.paths import REPO

from collectors import RunError, RunWriter, load_run
from collectors.meta import read_meta
from collectors.readers.keymap import BAD_STEPS, chunk, map_row, merge_by_step, to_number, to_step, unscale
from collectors.readers.trl.args import read_training_args
from collectors.sources import open_run

REAL_RUNS = REPO.parent / "shared" / "fixtures" / "real-runs"


# -- numbers in metrics: kept, as infinity when beyond float ---------------------------------------------
def test_numbers_beyond_float_are_kept_as_signed_infinity():
    assert to_number(10**400) == math.inf and to_number(-(10**400)) == -math.inf
    assert to_number("1e400") == math.inf and to_number(-1e400) == -math.inf
    assert to_number(2**80) == 2.0**80  # fits a float, if not exactly
    assert math.isnan(to_number("NaN")) and math.isnan(to_number(" nan "))
    assert to_number("x") is None and to_number([1]) is None and to_number({}) is None
    row, bad = map_row({"loss": 10**400, "reward": "NaN", "kl": [], "entropy": None})
    assert row["loss/total"] == math.inf and math.isnan(row["reward/mean"]) and row["policy/entropy"] is None
    assert bad == ["kl"]


# -- steps: an int64 or the row is left out and counted ----------------------------------------------------
@pytest.mark.parametrize("value", [2**80, -(2**70), 1e400, math.nan, math.inf, 1.5, "x", "1" * 5000, None, True, [3]])
def test_a_step_that_is_no_int64_is_refused(value):
    assert to_step(value) is None


def test_integral_steps_in_any_spelling_are_kept():
    assert [to_step(v) for v in (3, 3.0, "12", " 7 ", 2**63 - 1)] == [3, 3, 12, 7, 2**63 - 1]


def test_rows_with_bad_steps_are_left_out_and_counted():
    rows = [{"step": 1, "a": 1.0}, {"step": 2**80, "a": 2.0}, {"step": math.nan, "a": 3.0}, {"step": 1, "b": 4.0},
            {"step": "3", "a": 5.0}]
    merged = merge_by_step(rows)
    frame = chunk(merged)
    assert frame["step"].tolist() == [1, 3] and frame["b"].tolist()[0] == 4.0
    assert frame.attrs[BAD_STEPS] == 2


def test_a_scale_that_is_no_number_leaves_the_key_alone():
    assert unscale("actor/lr(1e-4)", 2.0) == ("actor/lr", 2e-4)
    assert unscale("actor/lr(1.2.3)", 2.0) == ("actor/lr(1.2.3)", 2.0)
    assert unscale("x(1e308)", 1e10)[1] == math.inf  # overflow of the product is infinity, not an error


# -- run.json: refused with the file and the field named ------------------------------------------------
def _run(tmp_path):
    with RunWriter(tmp_path / "r", config={"a": 1}) as w:
        for s in range(3):
            w.log_step(s, {"loss/total": 1.0 / (s + 1)})
    return tmp_path / "r"


@pytest.mark.parametrize("text,says", [
    (b'{"name": "\xff\xfe"}', "not UTF-8 text"),
    (b'{"last_step": ' + b"1" * 5000 + b"}", "not valid JSON"),
    (b"[" * 100_000 + b"]" * 100_000, "not valid JSON (nested too deeply)"),
    (b'{"heartbeat": "yesterday"}', "field 'heartbeat'"),
    (b'{"status": "running", "heartbeat": 1e400}', "field 'heartbeat' is inf, expected a finite number"),
    (b'{"last_step": 1208925819614629174706176}', "field 'last_step'"),
    (b'{"notes": "x"}', "field 'notes'"),
    (b'{"resumes": [1]}', "field 'resumes'"),
    (b'{"name": ["x"]}', "field 'name'"),
])
def test_bad_run_json_is_refused_in_one_line_naming_the_file(tmp_path, text, says):
    folder = _run(tmp_path)
    (folder / "run.json").write_bytes(text)
    with pytest.raises(RunError) as e:
        read_meta(folder)
    assert says in str(e.value) and str(folder / "run.json") in str(e.value) and "\n" not in str(e.value)
    run = load_run(folder)  # the parts still load; the metadata is ignored and said so
    assert run.metrics["step"].tolist() == [0, 1, 2]
    assert any(p.file == "run.json" and "metadata ignored" in p.message for p in run.problems)


def test_a_config_nested_as_deep_as_json_allows_is_kept_flat(tmp_path):
    folder = _run(tmp_path)
    (folder / "run.json").write_text('{"config": ' + '{"a": ' * 900 + "1" + "}" * 900 + "}")
    assert read_meta(folder).config == {".".join(["a"] * 900): 1}


def test_a_dead_run_never_looks_alive_through_its_heartbeat(tmp_path):
    folder = _run(tmp_path)
    meta = json.loads((folder / "run.json").read_text())
    meta.update(status="running", heartbeat=time.time() - 3600)
    (folder / "run.json").write_text(json.dumps(meta))
    assert load_run(folder).status == "stale"


# -- Parquet parts with columns of another type ---------------------------------------------------------
def test_a_part_column_of_the_wrong_type_is_dropped_and_named(tmp_path):
    folder = _run(tmp_path)
    pq.write_table(pa.table({"step": pa.array([5], pa.int64()), "loss/total": pa.array(["high"]),
                             "reward/mean": pa.array([1], pa.int32())}), folder / "metrics" / "part-00000009.parquet")
    run = load_run(folder)
    assert run.metrics["step"].tolist() == [0, 1, 2, 5]
    assert run.metrics["reward/mean"].tolist()[-1] == 1.0  # an int column is cast
    assert any("'loss/total' (string)" in p.message for p in run.problems)


def test_a_part_whose_step_is_not_integer_is_skipped(tmp_path):
    folder = _run(tmp_path)
    pq.write_table(pa.table({"step": pa.array(["five"]), "loss/total": [1.0]}), folder / "metrics" / "part-00000009.parquet")
    run = load_run(folder)
    assert run.metrics["step"].tolist() == [0, 1, 2]
    assert any("column 'step' is string" in p.message for p in run.problems)


def test_sample_parts_of_different_types_still_concatenate(tmp_path):
    folder = tmp_path / "r"
    with RunWriter(folder) as w:
        w.log_step(0, {"loss/total": 1.0})
        w.log_samples([{"step": 0, "group": 0, "sample": 0, "reward": 1.0, "completion": "ok"}])
    pq.write_table(pa.table({"step": pa.array([1], pa.int32()), "group": [0], "sample": [0], "reward": pa.array(["1"]),
                             "completion": pa.array([[1, 2]])}), folder / "samples" / "part-00000009.parquet")
    run = load_run(folder)
    samples = run.samples()
    assert samples["step"].tolist() == [0, 1] and samples["completion"].tolist()[0] == "ok"
    assert samples["reward"].tolist()[1] == 1.0  # numeric text casts
    assert run.samples()["step"].tolist() == [0, 1]  # a second query still reads the part
    assert sum("'completion' (list<" in p.message for p in run.problems) == 1, run.problems



def test_a_samples_part_whose_footer_gives_the_step_another_type_is_skipped_not_fatal(tmp_path):
    """One flipped byte in a footer (fuzz case grpo 8672) made the step chunk's type UNKNOWN: pyarrow then
    aborted the whole process (a C++ exception nothing catches) when the reader asked for its statistics. The
    reader runs in a child process, so a regression fails this test instead of killing the suite."""
    folder = tmp_path / "r"
    with RunWriter(folder) as w:
        for step in (0, 1):
            w.log_step(step, {"loss/total": 1.0})
            w.log_samples([{"step": step, "group": 0, "sample": 0, "reward": 1.0, "completion": f"c{step}"}])
            w.flush()  # a part per step
    first, *_ = sorted((folder / "samples").glob("*.parquet"))
    data = bytearray(first.read_bytes())
    footer = len(data) - 8 - int.from_bytes(data[-8:-4], "little")
    assert pq.read_schema(first).names[0] == "step"
    # the first column chunk's metadata (struct field 3 of ColumnChunk) opens with field 1, its type: INT64 is
    # zigzag 4; 0x24 is a type no Parquet writer knows
    at = data.index(b"\x1c\x15\x04", footer) + 2
    data[at] = 0x24
    first.write_bytes(bytes(data))
    assert pq.ParquetFile(first).metadata.row_group(0).column(0).physical_type == "UNKNOWN"
    code = (f"from collectors import load_run\nrun = load_run({str(folder)!r})\n"
            "print(sorted(run.samples()['completion']), [p.message for p in run.problems])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False,
                         cwd=tmp_path)
    assert out.returncode == 0, out.stderr[-2000:]
    kept, problems = out.stdout.strip().split("] [")
    assert kept == "['c1'" and "unreadable Parquet part skipped" in problems, out.stdout


# -- training_args.bin: never unpickled for real, refused in one line ----------------------------------------
def test_damaged_training_args_are_refused_in_one_line(tmp_path):
    f = tmp_path / "training_args.bin"
    f.write_bytes(b"\x80\x04\x95garbage\n\nmore\x00")
    with pytest.raises(RunError, match="not a readable training-arguments pickle") as e:
        read_training_args(f)
    assert "\n" not in str(e.value)
    with zipfile.ZipFile(f, "w") as z:
        z.writestr("archive/data.pkl", b"\x80\x04N.")
    raw = f.read_bytes()
    f.write_bytes(raw[: len(raw) // 2])  # a half-synced copy
    with pytest.raises(RunError) as e:
        read_training_args(f)
    assert str(f) in str(e.value) and "\n" not in str(e.value)


def test_a_key_holding_a_lone_surrogate_becomes_a_column_name():
    frame = chunk([{"step": 1, "loss\ud800": 1.0}])  # valid JSON ("\\ud800") that no UTF-8 text can hold
    assert list(frame.columns[:2]) == ["step", "loss?"]



# -- lines no reader can take: non-UTF-8 bytes, nesting past the recursion limit, 5 MB ------------------------
LONG = 5_000_000
JSON_LINES = {  # the third line (step 3, loss 1/3, note "@") -> the odd line, what the note on it says or None
    "a text value holding bytes that are not UTF-8": (lambda line: line.replace(b'"@"', b'"caf\xe9\xff\xfe"'), None),
    "a text value of 5 MB": (lambda line: line.replace(b'"@"', b'"' + b"y" * LONG + b'"'), None),
    "a loss nested 50,000 deep": (lambda line: line.replace(b"0.3333333333333333", b"[" * 50_000 + b"]" * 50_000),
                                  "line 3: nested deeper than about 1,000 levels"),
    # as objects: pyarrow's JSON reader overflows its stack on these (the process dies), so it never sees them
    "a loss nested 50,000 deep in objects": (
        lambda line: line.replace(b"0.3333333333333333", b'{"a": ' * 50_000 + b"1" + b"}" * 50_000),
        "line 3: nested deeper than about 1,000 levels"),
    "a line of bytes that are not UTF-8": (lambda line: b"\xff\xfe\xfd\x80", "line 3: bytes that are not UTF-8 (byte 1)"),
    "a line of 5 MB that is no JSON": (lambda line: b"x" * LONG, "line 3: not valid JSON (Expecting value at character 1)"),
}


@pytest.mark.parametrize("fmt", ["generic", "verl"])
@pytest.mark.parametrize("odd", sorted(JSON_LINES))
def test_an_odd_json_line_is_read_or_skipped_by_number(tmp_path, fmt, odd):
    """A value of text is no metric (left out, the row kept); a line that is no JSON is skipped and named."""
    make, says = JSON_LINES[odd]
    wrap = (lambda s, d: {"step": s, "data": d}) if fmt == "verl" else (lambda s, d: {"step": s, **d})
    rows = [json.dumps(wrap(s, {"loss": 1.0 / s, "note": "@"})).encode() for s in (1, 2, 3, 4)]
    rows[2] = make(rows[2])
    f = tmp_path / "metrics.jsonl"  # verl's FileLogger nests the metrics under "data"; users write them flat
    f.write_bytes(b"\n".join(rows) + b"\n")
    run = open_run(f, source=fmt)
    m = run.metrics
    notes = [p.message for p in run.problems if p.file == f.name]
    if says:
        assert m["step"].tolist() == [1, 2, 4] and m["loss/total"].tolist() == [1.0, 0.5, 0.25]
        assert any(n.startswith(says) and n.endswith("; skipped") for n in notes), notes
    else:
        assert m["step"].tolist() == [1, 2, 3, 4] and m["loss/total"].tolist() == [1.0, 0.5, 1 / 3, 0.25]
        assert "text, not metrics: note; left out" in notes and "note" not in m


def test_odd_rows_in_a_csv_are_read_or_skipped(tmp_path):
    """pandas writes a cell of 5 MB (a completion logged beside the metrics); a row over pyarrow's 1 MiB block
    used to refuse the whole file. Rows of garbage are skipped and counted; bytes that are not UTF-8 become
    U+FFFD with a note."""
    import pandas as pd

    f = tmp_path / "metrics.csv"
    pd.DataFrame({"step": [1, 2, 3, 4], "loss": [1.0, 0.5, 0.25, 0.125],
                  "note": ["ok", "y" * LONG, "caf\u00e9", "ok"]}).to_csv(f, index=False)
    lines = f.read_bytes().split(b"\n")
    lines[3] = lines[3].replace("café".encode(), b"caf\xe9\xff")  # Latin-1, as an old writer left it
    lines[4:4] = [b"x" * LONG, b"[" * 50_000 + b"]" * 50_000]
    f.write_bytes(b"\n".join(lines))
    run = open_run(f)
    m = run.metrics
    assert m["step"].tolist() == [1, 2, 3, 4] and m["loss/total"].tolist() == [1.0, 0.5, 0.25, 0.125]
    notes = [p.message for p in run.problems if p.file == f.name]
    assert "line 4: bytes that are not UTF-8; replaced, so cells holding them are text" in notes
    assert "2 row(s) with 1 cells, header has 3; skipped" in notes
    assert "text, not metrics: note; left out" in notes


CONSOLE_LOGS = {"verl": "verl_qwen05b_gsm8k_ppo/main_ppo.log", "trl-console": "trl_console_gsm8k_saturating/easy_standard.log",
                "kvtext": "custom_log_minimind/grpo.log"}


@pytest.mark.parametrize("source", sorted(CONSOLE_LOGS))
def test_odd_lines_in_a_console_log_are_passed_over(tmp_path, source):
    """A console log is mostly lines that are no metrics (progress bars, warnings, printed samples): the odd
    ones are passed over like them, and every metric line around them is read."""
    real = REAL_RUNS / CONSOLE_LOGS[source]
    if not real.is_file():
        pytest.skip(f"{real} is absent (the shared corpus of real runs is not beside this checkout)")
    lines = real.read_bytes().split(b"\n")
    mid = len(lines) // 2
    f = tmp_path / real.name
    f.write_bytes(b"\n".join([*lines[:mid], b"\xff\xfe\xfd caf\xe9", b"[" * 50_000 + b"]" * 50_000,
                              b"{'loss': " * 50_000 + b"1" + b"}" * 50_000, b"x" * LONG, *lines[mid:]]))
    clean, odd = open_run(real, source=source).metrics, open_run(f, source=source).metrics
    assert len(clean) > 100
    pd_testing.assert_frame_equal(odd, clean)


# -- what a second fuzzer found (issue 28), met as a user meets it: the installed commands on real files ----------
BIN = Path(sys.executable).parent  # the console scripts pip installed beside this interpreter


def cli(name: str, *args: str, cwd: Path) -> subprocess.CompletedProcess:
    if not (BIN / name).is_file():
        pytest.skip(f"{BIN / name} is not installed (pip install -e .)")
    return subprocess.run([str(BIN / name), *args], cwd=cwd, capture_output=True, text=True, timeout=300,
                          check=False)


def diagnosed(target: Path, cwd: Path) -> dict:
    """grpo-diagnose TARGET --format json: read (exit 0, or 3 when too short to judge), no traceback."""
    out = cli("grpo-diagnose", str(target), "--format", "json", cwd=cwd)
    assert out.returncode in (0, 3) and out.stderr == "", out.stderr[-2000:]
    (d,) = json.loads(out.stdout).values()
    return d


def imported(target: Path, cwd: Path) -> tuple[object, dict]:
    """grpo-import TARGET into a fresh run folder: (the run read back, its run.json)."""
    out = cli("grpo-import", str(target), "--to", str(cwd / "imported"), cwd=cwd)
    assert out.returncode == 0 and "Traceback" not in out.stderr, out.stderr[-2000:]
    return load_run(cwd / "imported"), json.loads((cwd / "imported" / "run.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("fmt", ["verl JSONL", "verl console"])
def test_two_keys_of_a_row_renamed_alike_are_one_column_and_a_note(tmp_path, fmt):
    """Older verl logs `actor/lr(1e-4)` (0.01 x 1e-4) beside `actor/lr`; a `step` inside verl's `data` beside the
    line's own. Renamed, each pair was two columns of one name: 'DataFrame' object has no attribute 'dtype'."""
    steps = range(1, 31)
    if fmt == "verl JSONL":
        f = tmp_path / "metrics.jsonl"
        f.write_text("".join(json.dumps({"step": s, "data": {"actor/lr": 1e-6, "actor/lr(1e-4)": 0.02, "step": 99,
                                                             "critic/score/mean": 0.01 * s}}) + "\n" for s in steps))
    else:
        f = tmp_path / "main_ppo.log"
        f.write_text("".join(f"(TaskRunner pid=7) step:{s} - actor/lr:1e-06 - actor/lr(1e-4):0.02 - "
                             f"critic/score/mean:{0.01 * s}\n" for s in steps))
    d = diagnosed(f, tmp_path)
    assert d["steps"] == 30
    assert any("actor/lr logged twice in one row" in n and "one column, the first value of a row kept" in n
               for n in d["notes"]), d["notes"]
    if fmt == "verl JSONL":
        assert any("step logged twice in one row" in n for n in d["notes"]), d["notes"]
    run, _ = imported(f, tmp_path)
    m = run.metrics
    assert m["step"].tolist() == list(steps) and m["optim/lr"].tolist() == [1e-6] * 30  # the line's step, the first


@pytest.mark.parametrize("suffix", [".jsonl", ".json"])
def test_a_lone_surrogate_in_a_generic_log_is_replaced_and_noted(tmp_path, suffix):
    """JSON's `\\ud800` is valid JSON but no UTF-8 text: pandas' and pyarrow's strings refused it
    ("surrogates not allowed") and so did every file writer."""
    rows = [f'{{"step": {s}, "lo\\ud800ss": {1 / s}, "reward": {0.01 * s}, "note": "\\udc00 x"}}' for s in range(1, 31)]
    f = tmp_path / f"metrics{suffix}"
    f.write_text("\n".join(rows) + "\n" if suffix == ".jsonl" else "[" + ",\n".join(rows) + "]\n")
    d = diagnosed(f, tmp_path)
    assert d["steps"] == 30 and any("replaced by U+FFFD" in n for n in d["notes"]), d["notes"]
    run, _ = imported(f, tmp_path)
    assert run.metrics["lo\ufffdss"].tolist()[:2] == [1.0, 0.5] and "note" not in run.metrics


POISONED_CONFIG = ('{"learning_rate": 1e-06, "seed": 42, "big": 1' + "0" * 4999 + ', "deep": ' + "[" * 200 + "]" * 200
                   + ', "nested": {"ok": 1, "huge": -' + "9" * 5000 + '}, "na\\ud800me": "x\\udc00"}')


def test_a_tensorboard_config_text_with_a_huge_number_or_deep_nesting_keeps_the_rest(tmp_path):
    """transformers writes the config as the `args` text summary; a 5,000-digit integer in it raised
    "Exceeds the limit (4300 digits)", nesting past ~1,000 levels a RecursionError, and the event file was "no
    run". Now the key is skipped with a note; the config without it and every scalar are read."""
    tb = pytest.importorskip("torch.utils.tensorboard")
    for name, text in (("run", POISONED_CONFIG), ("unreadable", '{"a": ' + "[" * 50_000 + "]" * 50_000 + "}")):
        w = tb.SummaryWriter(log_dir=str(tmp_path / name))
        w.add_text("args", text, 0)
        for s in range(1, 31):
            w.add_scalar("train/reward", 0.01 * s, s)
        w.close()
    d = diagnosed(tmp_path / "run", tmp_path)
    assert d["steps"] == 30
    notes = [n.split(": ", 1)[1] for n in d["notes"] if n.startswith("args/text_summary: ")]
    assert sorted(notes) == sorted([
        "config key 'big': a number of 5,000 digits (more than 4,300); skipped",
        "config key 'deep': nested more than 32 levels deep; skipped",
        "config key 'nested.huge': a number of 5,000 digits (more than 4,300); skipped",
        "2 lone surrogate(s) (text no UTF-8 can hold) replaced by U+FFFD"]), d["notes"]
    _, meta = imported(tmp_path / "run", tmp_path)
    assert meta["config"] == {"learning_rate": 1e-06, "seed": 42, "nested.ok": 1, "na\ufffdme": "x\ufffd"}
    d = diagnosed(tmp_path / "unreadable", tmp_path)
    assert d["steps"] == 30 and "args/text_summary: nested deeper than about 1,000 levels; config not read" in \
        d["notes"], d["notes"]


def test_a_wandb_config_item_with_a_huge_number_or_deep_nesting_is_skipped_and_named(tmp_path):
    """A wandb run file whose config items hold a 5,000-digit integer, nesting past Python's recursion limit, or
    a lone surrogate: each such key skipped and named; the history is read."""
    pytest.importorskip("wandb.proto.wandb_internal_pb2")
    from helpers.fuzz.formats import history_record, wandb_frame
    from wandb.proto import wandb_internal_pb2 as pb

    items = {"lr": '{"value": 1e-06}', "big": '{"value": ' + "1" * 5000 + "}",
             "deep": '{"value": ' + "[" * 5000 + "]" * 5000 + "}", "name": '{"value": "a\\ud800b"}',
             "model": '{"value": {"layers": 2, "width": -' + "7" * 4400 + "}}"}
    config = pb.Record(config=pb.ConfigRecord(update=[pb.ConfigItem(key=k, value_json=v) for k, v in items.items()]))
    records = [config.SerializeToString()] + [history_record(s, {"train/reward": repr(0.01 * s)}) for s in range(1, 31)]
    folder = tmp_path / "wandb" / "offline-run-20260101_000000-abc"
    folder.mkdir(parents=True)
    (folder / "run-abc.wandb").write_bytes(wandb_frame(records))
    d = diagnosed(folder, tmp_path)
    assert d["steps"] == 30
    notes = [n.split(": ", 1)[1] for n in d["notes"] if n.startswith("run-abc.wandb: config")]
    assert sorted(notes) == sorted([
        "config key 'big': a number of 5,000 digits (more than 4,300); skipped",
        "config key 'deep': nested deeper than about 1,000 levels; skipped",
        "config key 'model.width': a number of 4,400 digits (more than 4,300); skipped",
        ("config: 1 lone surrogate(s) (\\u escapes of half a character, which no UTF-8 text holds) replaced by "
         "U+FFFD")]), d["notes"]
    _, meta = imported(folder, tmp_path)
    assert meta["config"] == {"lr": 1e-06, "name": "a\ufffdb", "model.layers": 2}


def test_a_logged_key_named_like_the_step_is_left_out_with_a_note(tmp_path):
    """`train/step` is our `step` once renamed: beside the row's own step it made two `step` columns and the
    merge of a step's rows raised ("Grouper for 'step' not 1-dimensional")."""
    f = tmp_path / "metrics.jsonl"
    f.write_text("".join(json.dumps({"step": s, "train/step": 7, "loss": 1 / s}) + "\n" for s in (1, 2, 2, 3)))
    run = open_run(f)
    assert run.metrics["step"].tolist() == [1, 2, 3] and run.metrics["loss/total"].tolist() == [1.0, 0.5, 1 / 3]
    assert "'train/step' named like the step itself; left out (the row's own step is used)" in [
        p.message for p in run.problems]


def test_a_verl_console_step_of_thousands_of_digits_is_skipped_by_line(tmp_path):
    f = tmp_path / "main_ppo.log"
    f.write_text("step:1 - critic/score/mean:0.1\nstep:" + "9" * 5000 + " - critic/score/mean:0.2\n"
                 "step:2 - critic/score/mean:0.3\n")
    run = open_run(f, source="verl")
    assert run.metrics["step"].tolist() == [1, 2] and run.metrics["reward/mean"].tolist() == [0.1, 0.3]
    assert "line 2: a step of 5,000 digits; skipped" in [p.message for p in run.problems]
