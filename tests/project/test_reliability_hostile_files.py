"""Issue 38: symlink loops, giant and sparse files, a _seq or step column of nulls, a huge wandb record.

Each case once ended a page or a command in Python's words (or took all memory); see docs/reliability.md,
"Loops, giant files, unreadable files". Memory and CPU limits are set with resource.setrlimit in a
subprocess, never as wall-clock asserts.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from helpers.hostile import huge_record_run, sparse_log
from helpers.paths import REPO

from collectors.discovery import discover_runs
from collectors.readers.text.linetail import MAX_LINE, LineTail
from collectors.store.load import load_run
from dashboard import paths

HEALTHY = REPO / "sample_runs" / "healthy"


def _limited(code: str, address_mb: int = 0, cpu_s: int = 0, timeout: float = 120) -> subprocess.CompletedProcess:
    """`code` run in a fresh Python under an address-space and/or CPU-time limit."""
    head = textwrap.dedent(f"""
        import resource
        if {address_mb}:
            resource.setrlimit(resource.RLIMIT_AS, ({address_mb} << 20, {address_mb} << 20))
        if {cpu_s}:
            resource.setrlimit(resource.RLIMIT_CPU, ({cpu_s}, {cpu_s}))
    """)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    return subprocess.run([sys.executable, "-c", head + textwrap.dedent(code)], capture_output=True, text=True,
                          timeout=timeout, env=env, check=False)


# -- loops of symbolic links -----------------------------------------------------------------------------------
@pytest.fixture
def looped_root(tmp_path):
    shutil.copytree(HEALTHY, tmp_path / "healthy")
    os.symlink("b.jsonl", tmp_path / "a.jsonl")
    os.symlink("a.jsonl", tmp_path / "b.jsonl")
    return tmp_path


def test_a_loop_of_links_in_a_root_is_one_line_each_and_refused_by_key(looped_root):
    listed = {r.path.name: r.error for r in discover_runs(looped_root)}
    assert listed == {"healthy": None, "a.jsonl": "a loop of symbolic links: not opened",
                      "b.jsonl": "a loop of symbolic links: not opened"}
    roots = paths.make_roots([looped_root])
    with pytest.raises(paths.PathRefused, match=r"a\.jsonl is a loop of symbolic links"):  # was RuntimeError
        paths.resolve_run(roots, f"{roots[0].label}/a.jsonl")
    assert paths.resolve_run(roots, f"{roots[0].label}/healthy") == looped_root / "healthy"


def test_a_part_or_run_json_linked_to_itself_is_a_note_and_the_rest_loads(tmp_path):
    run = tmp_path / "run"
    shutil.copytree(HEALTHY, run)
    os.symlink("part-00000099.parquet", run / "metrics" / "part-00000099.parquet")
    (run / "run.json").unlink()
    os.symlink("run.json", run / "run.json")
    loaded = load_run(run)  # was OSError (run.json) and "cannot access local variable 'mtime'" (the part)
    assert len(loaded.metrics) == 200
    said = {p.file: p.message for p in loaded.problems}
    assert said["run.json"] == "run.json is a loop of symbolic links; metadata ignored"
    assert said["metrics/part-00000099.parquet"] == ("metrics/part-00000099.parquet is a loop of symbolic links; "
                                                     "skipped")


# -- giant and sparse files ------------------------------------------------------------------------------------
def test_a_sparse_gigabyte_log_is_read_under_a_memory_cap_with_a_note(tmp_path):
    log = sparse_log(tmp_path / "big.jsonl", 4 << 30)  # 4 GB of NULs (a hole: nothing on disk) with no line end
    out = _limited(f"""
        from collectors import open_run
        from collectors.discovery import discover_runs
        [info] = [i for i in discover_runs({str(tmp_path)!r})]
        run = open_run({str(log)!r})
        print(info.path.name, list(run.metrics["step"]), [p.message for p in run.problems])
    """, address_mb=1536)
    assert out.returncode == 0, out.stderr[-2000:]  # was a MemoryError: one read() from the offset to the end
    assert out.stdout.strip() == ("big.jsonl [1, 2] ['line 2 is longer than 16 MiB: not read (a damaged or "
                                  "sparse file?)']")


def test_a_line_past_the_cap_is_passed_over_and_the_lines_after_keep_their_numbers(tmp_path):
    log = tmp_path / "x.jsonl"
    log.write_bytes(b"one\n" + b"x" * (MAX_LINE + 5) + b"\nthree\nfour")
    said = []
    tail = LineTail(log, note=said.append)
    tail.SETTLED_S = 1e9  # still being written: the last line waits
    lines, rewritten, waiting = tail.read()
    assert lines == [(1, "one"), (2, ""), (3, "three")] and waiting and not rewritten
    assert said == ["line 2 is longer than 16 MiB: not read (a damaged or sparse file?)"]
    with log.open("ab") as f:
        f.write(b"\nfive\n")
    assert tail.read()[0] == [(4, "four"), (5, "five")] and len(said) == 1


def test_a_line_of_one_mebibyte_and_a_crlf_log_read_as_before(tmp_path):
    log = tmp_path / "x.jsonl"
    big = b'{"step": 2, "text": "' + b"y" * (5 << 20) + b'"}'
    log.write_bytes(b'{"step": 1}\r\n' + big + b"\n" + b'{"step": 3}')
    os.utime(log, (0, 0))
    block, first, _, waiting = LineTail(log).read_bytes()
    assert block == b'{"step": 1}\r\n' + big + b'\n{"step": 3}\n' and first == 1 and not waiting


def test_a_50_mb_wandb_record_is_joined_in_linear_time(tmp_path):
    d = huge_record_run(tmp_path / "wandb", 50)
    out = _limited(f"""
        from collectors import open_run
        print(len(open_run({str(d)!r}).metrics))
    """, cpu_s=10)
    assert out.returncode == 0, out.stderr[-2000:]  # joined by bytes + bytes: 28 s of CPU, killed at 10
    assert out.stdout.strip() == "31"


# -- damaged parts -------------------------------------------------------------------------------------------
def _damage(part: Path, column: str, at: list[int]) -> None:
    table = pq.read_table(part)
    values = table[column].to_pylist()
    for i in at:
        values[i] = None
    i = table.schema.get_field_index(column)
    pq.write_table(table.set_column(i, column, pa.array(values, table[column].type)), part)


def test_a_seq_column_of_nulls_takes_the_parts_number(tmp_path):
    run = tmp_path / "run"
    shutil.copytree(HEALTHY, run)
    part = run / "metrics" / "part-00000016.parquet"
    _damage(part, "_seq", list(range(pq.read_metadata(part).num_rows)))
    loaded = load_run(run)  # was "cannot convert float NaN to integer"
    assert len(loaded.metrics) == 200
    assert [p.message for p in loaded.problems] == [
        "12 empty value(s) in column '_seq'; the part's own number used as their order"]


def test_a_step_column_with_nulls_leaves_those_rows_out_and_the_rules_judge(tmp_path):
    run = tmp_path / "run"
    shutil.copytree(HEALTHY, run)
    part = run / "metrics" / "part-00000016.parquet"
    table = pq.read_table(part)
    rewards = table["reward/mean"].to_pylist()
    rewards[3] = float("nan")  # a NaN logged at the row whose step is lost
    pq.write_table(table.set_column(table.schema.get_field_index("reward/mean"), "reward/mean",
                                    pa.array(rewards, pa.float64())), part)
    _damage(part, "step", [3])
    loaded = load_run(run)
    assert int(loaded.metrics["step"].min()) == 0 and len(loaded.metrics) == 199  # was a step of -2**63
    assert loaded.nan_at == {}  # was {'reward/mean': {None}}: the non_finite rule took int(None)
    assert [p.message for p in loaded.problems] == ["1 row(s) with an empty 'step' left out"]
    from dashboard.diagnosis import diagnose

    d = diagnose(loaded)
    assert "non_finite" not in {n.rule_id if hasattr(n, "rule_id") else n for n in getattr(d, "not_judged", [])}


@pytest.mark.parametrize(("english", "zh"), [
    ("a loop of symbolic links: not opened", "符号链接的循环：没有打开"),
    ("run 'h/a.jsonl' cannot be opened (h/a.jsonl is a loop of symbolic links)",
     "训练 'h/a.jsonl' 无法打开（h/a.jsonl 是符号链接的循环）"),
    ("no permission to read locked", "没有读取 locked 的权限"),
    ("could not be read: no permission to read /x/meta.yaml", "无法读取：没有读取 /x/meta.yaml 的权限"),
])
def test_the_new_refusals_read_in_chinese(english, zh):
    from dashboard.diagnosis.i18n import path_text

    assert path_text(english, "zh") == zh
