"""grpo-dash --source NAME: each root is one run read by that reader, as grpo-diagnose --source reads a RUN."""

from __future__ import annotations

import pandas as pd
import pytest

from collectors.meta import RunError
from dashboard import cli, paths


def _csv_run(folder):
    folder.mkdir()
    pd.DataFrame({"step": [1, 2, 3], "reward": [0.1, 0.2, 0.3]}).to_csv(folder / "metrics.csv", index=False)
    return folder


def test_cli_passes_the_reader_to_the_app(tmp_path, monkeypatch):
    run = _csv_run(tmp_path / "r")
    monkeypatch.setenv(paths.SOURCE_ENV, "stale-from-the-shell")
    env = cli.environment(cli.parse_args([str(run / "metrics.csv"), "--source", "generic"]))
    assert env[paths.SOURCE_ENV] == "generic" and env[paths.ROOTS_ENV] == str(run)
    assert paths.SOURCE_ENV not in cli.environment(cli.parse_args([str(run)]))  # no --source: nothing forced


def test_cli_refuses_an_unknown_reader_and_a_source_without_roots(capsys):
    with pytest.raises(SystemExit):
        cli.parse_args(["x", "--source", "tensorbored"])
    assert "--source tensorbored: unknown reader; known: generic, grpo, kvtext" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        cli.parse_args(["--source", "generic"])
    assert "--source applies to the ROOTs given" in capsys.readouterr().err


@pytest.mark.filterwarnings("ignore::UserWarning")  # streamlit caches called outside a streamlit run
def test_the_app_reads_each_root_with_the_forced_reader(tmp_path, monkeypatch):
    from dashboard import data

    run = _csv_run(tmp_path / "r")
    monkeypatch.setenv(paths.ROOTS_ENV, str(run))
    monkeypatch.setenv(paths.SOURCE_ENV, "generic")
    table = data.all_runs()
    # the generic reader names the folder's CSV as the run: its key is the file's, and it opens
    assert table[["key", "source", "last_step", "error"]].values.tolist() == [["r/metrics.csv", "generic", 3, None]]
    snap = data.snapshot(paths.resolve_run(data.roots(), "r/metrics.csv"))
    assert snap.run.meta.source == "generic" and snap.metrics["step"].tolist() == [1, 2, 3]

    # another reader forced on the same folder finds nothing it reads (no `Name: number` lines): the runs
    # table says so on the folder's line, and opening it is the reader's one-line error, not an empty run
    monkeypatch.setenv(paths.SOURCE_ENV, "kvtext")
    data.st.cache_resource.clear()
    row = data.all_runs().iloc[0]
    assert row["source"] == "kvtext" and row["key"] == "r" and pd.isna(row["last_step"])
    assert row["error"].endswith("r: the kvtext reader finds nothing to read in this folder")
    with pytest.raises(RunError, match="the kvtext reader finds nothing to read in this folder"):
        data.snapshot(paths.resolve_run(data.roots(), "r"))
    data.st.cache_resource.clear()
