"""TensorBoard's scalar downloads (collectors/readers/tensorboard/scalar_csv.py), made by TensorBoard's own scalars
plugin from event files torch's SummaryWriter wrote (tests/fixtures/tb_scalar_csv.py)."""

from __future__ import annotations

import pytest
from fixtures.tb_scalar_csv import download_scalars  # tests/ is on sys.path

from collectors.meta import RunError
from collectors.readers.tensorboard.scalar_csv import restore_tag
from collectors.sources import detect_source, launches_of, open_run, open_runs
from dashboard.diagnosis.engine import diagnose


def _logdir(root, runs: dict[str, float]):
    """One SummaryWriter per run (a sub-folder each, as TensorBoard lists runs), TRL's tags, 40 steps."""
    from torch.utils.tensorboard import SummaryWriter

    for name, clipped in runs.items():
        w = SummaryWriter(str(root / name))
        for s in range(1, 41):
            w.add_scalar("train/reward", 0.01 * s, s)
            w.add_scalar("train/completions/clipped_ratio", clipped, s)
            if s % 2 == 0:
                w.add_scalar("train/kl", 0.001 * s, s)
        w.close()
    return root


def test_the_uis_downloads_are_one_run_per_run_with_their_tags_restored(tmp_path):
    logdir = _logdir(tmp_path / "logs", {"grpo_a": 1.0, "grpo_b": 0.0})
    files = download_scalars(logdir, tmp_path / "csv")
    assert sorted(f.name for f in files)[:2] == ["run-grpo_a-tag-train_completions_clipped_ratio.csv",
                                                 "run-grpo_a-tag-train_kl.csv"]
    assert detect_source(tmp_path / "csv") == "tensorboard-csv"
    assert launches_of(tmp_path / "csv") == [f"{tmp_path / 'csv'}#grpo_a", f"{tmp_path / 'csv'}#grpo_b"]
    a, b = open_runs(tmp_path / "csv")
    assert (a.name, a.meta.source) == ("grpo_a", "tensorboard-csv")
    m = a.metrics
    assert m["step"].tolist() == list(range(1, 41))
    assert m["reward/mean"].tolist() == pytest.approx([0.01 * s for s in range(1, 41)])
    assert m["completions/truncated_frac"].tolist() == [1.0] * 40  # train_completions_clipped_ratio: TRL's key
    assert m["policy/kl_ref"].iloc[1] == pytest.approx(0.002) and m["policy/kl_ref"].isna().sum() == 20
    assert m["wall_time"].notna().all()
    assert [p.message for p in a.problems] == [
        ("the same value on every row, kept as measured (a fixed learning rate, a clip fraction never hit): "
         "train/completions/clipped_ratio (completions/truncated_frac) = 1")]
    assert {f.rule_id: f.severity for f in diagnose(a).findings}.get("truncation") in ("warning", "critical")
    assert "truncation" not in {f.rule_id for f in diagnose(b).findings}
    with pytest.raises(RunError, match="no run 'nope' among these scalar files; runs: grpo_a, grpo_b"):
        open_run(f"{tmp_path / 'csv'}#nope")


def test_a_renamed_download_is_named_by_its_file_and_a_bad_row_is_named(tmp_path):
    logdir = _logdir(tmp_path / "logs", {"only": 0.0})
    download_scalars(logdir, tmp_path / "csv", renamed={"train/reward": "train_reward.csv", "train/kl": "kl.csv",
                                                         "train/completions/clipped_ratio": "clip.csv"})
    f = tmp_path / "csv" / "train_reward.csv"
    f.write_bytes(f.read_bytes() + b"1796422384.9,41\r\n")  # a row cut short
    run = open_run(tmp_path / "csv")
    assert run.name == "csv" and run.metrics["reward/mean"].notna().sum() == 40
    # "kl" is a synonym of the KL to the reference; "clip" names nothing known and is kept as it is
    assert run.metrics["policy/kl_ref"].notna().sum() == 20 and run.metrics["clip"].eq(0.0).all()
    assert (run.problems[0].file, run.problems[0].message) == (
        "train_reward.csv", "line 42: not the 3 cells Wall time,Step,Value; left out")


@pytest.mark.parametrize(("tag", "key"), [("train_reward", "train/reward"),
                                          ("train_completions_clipped_ratio", "train/completions/clipped_ratio"),
                                          ("reward_mean", "reward/mean"), ("critic_score_mean", "critic/score/mean"),
                                          ("my_custom_tag", "my_custom_tag")])
def test_a_tag_gets_its_slashes_back_where_the_key_maps_know_it(tag, key):
    assert restore_tag(tag) == key
