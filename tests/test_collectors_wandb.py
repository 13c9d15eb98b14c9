"""wandb offline reader on a real offline run made here with WANDB_MODE=offline (no network, no account)."""

from __future__ import annotations

import pytest
from fixtures.wandb_offline import write_offline_run  # tests/ is on sys.path

from collectors.readers.wandb.offline import WandbOfflineRun, wandb_file
from collectors.sources import detect_source, open_run

pytest.importorskip("wandb")

SCRIPT = """
import wandb
run = wandb.init(project="p", name="tiny", config={"lr": 0.1, "grpo": {"group_size": 8}}, dir=DIR)
for s in range(N):
    row = {"train/reward": 0.01 * s, "train/kl": 0.5, "train/global_step": s + 1, "note": "txt"}
    if s == 0:  # a completions table (media, not read) and a nested dict (wandb names it "grpo.kl_coef")
        row["completions"] = wandb.Table(columns=["prompt", "completion"], data=[["1+1=", "2"]])
        row["grpo"] = {"kl_coef": 0.05}
    wandb.log(row)
run.finish()
"""


@pytest.fixture(scope="module")
def offline_run(tmp_path_factory):
    return write_offline_run(tmp_path_factory.mktemp("wb"), SCRIPT, N=3000)


def test_history_config_and_status(offline_run):
    assert detect_source(offline_run) == "wandb"
    run = open_run(offline_run)
    m = run.metrics
    # 3000 rows span several 32 KiB blocks, so chunks split across blocks are joined
    assert len(m) == 3000 and run.problems == []
    assert list(m["step"].iloc[:3]) == [1, 2, 3]  # train/global_step, not wandb's _step
    assert m["reward/mean"].iloc[100] == pytest.approx(1.0)
    assert m["policy/kl_ref"].iloc[0] == 0.5
    assert run.meta.config["lr"] == 0.1 and run.meta.config["grpo.group_size"] == 8
    assert run.meta.status == "finished" and run.name == "tiny"
    # the table's nrows/ncols are not metrics and it gives no samples; the nested key is named as online
    assert [c for c in m.columns if c.startswith("completions")] == [] and len(run.samples()) == 0
    assert m["grpo.kl_coef"].iloc[0] == 0.05 and m["grpo.kl_coef"].isna().sum() == 2999


def test_growing_file_refresh_reads_new_chunks(offline_run, tmp_path):
    data = wandb_file(offline_run).read_bytes()
    f = tmp_path / "run-x.wandb"
    f.write_bytes(data[: len(data) // 2])
    run = WandbOfflineRun(f)
    half = len(run.metrics)
    assert 0 < half < 3000
    with f.open("ab") as fh:
        fh.write(data[len(data) // 2 :])
    assert run.refresh() >= 3000 - half
    assert len(run.metrics) == 3000


def test_corrupt_and_unknown_version(offline_run, tmp_path):
    data = bytearray(wandb_file(offline_run).read_bytes())
    data[len(data) // 2] ^= 0xFF
    f = tmp_path / "run-bad.wandb"
    f.write_bytes(bytes(data))
    run = WandbOfflineRun(f)
    assert 0 < len(run.metrics) < 3000
    assert "run-bad.wandb" in str(run.problems[0]) and "CRC" in str(run.problems[0])
    g = tmp_path / "run-new.wandb"
    g.write_bytes(b":W&B\xe1\xbe\x09" + bytes(data[7:]))
    assert "not a wandb run file of a known version" in str(WandbOfflineRun(g).problems[0])
    empty = tmp_path / "empty"
    empty.mkdir()
    assert "no run-*.wandb" in str(WandbOfflineRun(empty).problems[0])


def test_discovery_finds_offline_runs_inside_a_wandb_folder(offline_run):
    from collectors import discover_runs

    root = offline_run.parent.parent  # the folder that holds wandb/, as a user's project folder does
    found = discover_runs(root)
    assert [(r.path, r.source) for r in found] == [(offline_run, "wandb")]
