"""Online wandb reader, without network or account: URIs, errors from the real client, rows, meta.

A live call to the W&B server (paging through history, refreshing a running run) cannot run here;
everything before and after that call does, with the real wandb library.
"""

from __future__ import annotations

import calendar
import json
import subprocess
import sys
from pathlib import Path

import pytest
import wandb  # noqa: F401 - the dev extra: a broken install fails here, never skips
from helpers.paths import REPO

from collectors.meta import RunError, RunMeta
from collectors.readers.wandb.offline import history_row
from collectors.readers.wandb.online import fill_meta, parse_uri
from collectors.sources import detect_source, missing_hint, open_run

FAKE_KEY = "0123456789abcdef" * 2 + "01234567"  # 40 characters, the form of a wandb key; no account has it
FORM = "expected wandb://ENTITY/PROJECT/RUN_ID"


@pytest.mark.parametrize("uri, parts", [
    ("wandb://e/p/r1", ("e", "p", "r1")),
    ("wandb://my-team/grpo/abc123/", ("my-team", "grpo", "abc123")),
    ("wandb://my-team/grpo/runs/abc123", ("my-team", "grpo", "abc123")),  # as in the browser's address
])
def test_uri_good_forms(uri, parts):
    assert parse_uri(uri) == parts
    assert detect_source(uri) == "wandb-online"


@pytest.mark.parametrize("uri", ["wandb://p/r", "wandb://e/p/r/x", "wandb://e//r", "wandb://", "wandb://e/p/r x"])
def test_uri_bad_forms_name_the_uri_and_the_form(uri):
    with pytest.raises(RunError) as e:
        open_run(uri)  # rejected before wandb is imported or asked anything
    assert str(e.value) == f"{uri}: not a wandb run URI; {FORM}"


def _run_python(code: str, tmp_path: Path, **env: str) -> subprocess.CompletedProcess:
    """Python in a clean environment: HOME without ~/.netrc, no WANDB_* but those given."""
    base = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "PYTHONPATH": str(REPO)}
    return subprocess.run([sys.executable, "-c", code], env=base | env, capture_output=True, text=True,
                          timeout=120, check=False, stdin=subprocess.DEVNULL, cwd=tmp_path)


# os._exit: after a refused request, wandb-core may still be retrying, and wandb's atexit teardown waits for
# it (minutes, seen here about one run in five); the error is already printed, and wandb-core exits with us.
OPEN = """
import os
from collectors import RunError
from collectors.readers.wandb.online import WandbOnlineRun
try:
    WandbOnlineRun("wandb://e/p/r", timeout_s=2)
except RunError as e:
    print(e, flush=True)
os._exit(0)
"""


def test_no_api_key_says_how_to_provide_one(tmp_path):
    proc = _run_python(OPEN, tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout == ("wandb://e/p/r: no W&B API key found; set WANDB_API_KEY or run `wandb login` "
                           "(it writes ~/.netrc), then open the run again\n")


def test_import_cli_passes_the_uri_to_the_reader(tmp_path):
    proc = _run_python("from collectors.cli import main; raise SystemExit(main(['wandb://e/p/r', '--to', 'out']))",
                       tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.splitlines() == [("grpo-import: wandb://e/p/r: no W&B API key found; set WANDB_API_KEY or "
                                         "run `wandb login` (it writes ~/.netrc), then open the run again")]
    assert not (tmp_path / "out").exists()


def test_unreachable_server_is_one_line_without_the_key(tmp_path):
    # port 9 (discard) on loopback refuses at once, whether or not this machine has a network
    proc = _run_python(OPEN, tmp_path, WANDB_API_KEY=FAKE_KEY, WANDB_BASE_URL="http://127.0.0.1:9")
    assert proc.returncode == 0, proc.stderr[-2000:]
    lines = proc.stdout.splitlines()
    assert len(lines) == 1 and lines[0].startswith("wandb://e/p/r: ") and "127.0.0.1:9" in lines[0]
    assert FAKE_KEY not in proc.stdout + proc.stderr and "Traceback" not in proc.stdout


# A TRL run's wandb history as transformers' WandbCallback.on_log writes it (rewrite_logs puts "train/" before each
# key; it adds train/global_step; wandb counts its own _step), every second trainer step logged, then TRL's
# completions table; read back as `run.scan_history()` yields the rows (fixtures/wandb_offline.scan_history_rows).
TRL_SCRIPT = """
import wandb
from transformers.integrations.integration_utils import rewrite_logs
run = wandb.init(project="p", name="trl", dir=DIR)
for i in range(5):
    logs = {"reward": 0.0625 * (i + 1), "kl": 0.125, "completions/mean_length": 120, "epoch": 0.1 * (i + 1)}
    run.log({**rewrite_logs(logs), "train/global_step": 2 * (i + 1)})
run.log({"completions": wandb.Table(columns=["step", "prompt", "completion", "reward"],
                                    data=[["10", "1+1=", "2", 1.0], ["10", "2+2=", "5", 0.0]])})
run.finish()
"""


@pytest.fixture(scope="module")
def trl_rows(tmp_path_factory):
    from fixtures.wandb_offline import scan_history_rows, write_offline_run

    return scan_history_rows(write_offline_run(tmp_path_factory.mktemp("wb_trl"), TRL_SCRIPT))


def test_history_row_on_a_trl_row(trl_rows):
    # the step is TRL's trainer step (10), not wandb's _step (4); unmapped keys stay as they are
    row = trl_rows[4]
    assert row["_step"] == 4 and row["train/global_step"] == 10
    assert history_row(row) == {"step": 10, "reward/mean": 0.3125, "policy/kl_ref": 0.125,
                                "completions/len_mean": 120.0, "train/global_step": 10.0,
                                "train/epoch": pytest.approx(0.5), "wall_time": row["_timestamp"]}
    assert [history_row(r)["step"] for r in trl_rows[:5]] == [2, 4, 6, 8, 10]


def test_history_row_drops_the_completions_table_wandb_wrote(trl_rows):
    """TRL's completions table as wandb stores it (flattened: completions._type, .nrows, .path ...): a row of media
    only, so no row at all ({}), not a row of the table's counts."""
    table = trl_rows[5]
    assert table["completions._type"] == "table-file" and table["completions.nrows"] == 2
    assert history_row(table) == {}


def test_history_row_skips_text_media_and_wandb_keys():
    row = {"_step": 7, "_runtime": 3.0, "loss": 1.5, "grpo.kl": None, "note": "txt", "done": True,
           # a wandb.Table of completions, flattened by wandb-core like any dict; it holds numbers too
           "completions._type": "table-file", "completions.nrows": 8, "completions.ncols": 2,
           "completions.path": "media/table/completions_7.table.json"}
    out = history_row(row)
    assert out == {"step": 7, "loss/total": 1.5, "grpo.kl": None, "done": 1.0}  # a null stays a null, not a NaN
    # the same table nested as a JSON object gives the same row
    nested = {k: v for k, v in row.items() if not k.startswith("completions.")}
    nested["completions"] = {"_type": "table-file", "nrows": 8, "ncols": 2, "path": "x.json"}
    assert history_row(nested).keys() == out.keys()
    assert history_row({"_runtime": 1.0, "loss": 2.0}) is None  # no step at all


def test_fill_meta_from_a_real_public_run_never_copies_the_key(tmp_path, monkeypatch):
    from wandb.apis import public

    monkeypatch.setenv("WANDB_DIR", str(tmp_path))  # public.Run makes a folder for downloads there
    monkeypatch.setenv("WANDB_API_KEY", FAKE_KEY)
    # the RunFragment fields as the GraphQL server returns them (config is a JSON string of {"value": ...})
    attrs = {"name": "r1", "displayName": "tiny", "state": "crashed", "createdAt": "2026-12-03T11:00:00",
             "heartbeatAt": "2026-12-03T11:05:00Z",
             "config": json.dumps({"lr": {"value": 0.1, "desc": None}, "grpo": {"value": {"group_size": 8}},
                                   "_wandb": {"value": {"cli_version": "0.31.0"}}})}
    run = public.Run(None, "e", "p", "r1", attrs=attrs, lazy=False, api_key=FAKE_KEY)  # as Api.run() makes it
    meta = RunMeta(source="wandb-online")
    fill_meta(meta, run)
    assert (meta.name, meta.run_id, meta.status, meta.error) == ("tiny", "r1", "failed", "wandb state: crashed")
    assert meta.config == {"lr": 0.1, "grpo.group_size": 8}
    assert meta.start_time == calendar.timegm((2026, 12, 3, 11, 0, 0)) and meta.heartbeat - meta.start_time == 300
    assert meta.info == {"wandb_path": "e/p/r1", "wandb_state": "crashed"}
    assert FAKE_KEY not in json.dumps(meta.to_json())


def test_hints_say_why_there_are_no_samples():
    for source in ("wandb", "wandb-online"):
        assert "wandb.Table are not read" in missing_hint(source, "samples")
        assert "GrpoScopeCallback" in missing_hint(source, "samples")
        assert "config=" in missing_hint(source, "config")
