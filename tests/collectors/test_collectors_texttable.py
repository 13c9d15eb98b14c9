"""The text-table reader (collectors/readers/text/texttable.py): a metrics table printed inside text. Each table
is written as its tool writes it: transformers' notebook table (NotebookTrainingTracker's rows, rendered by its
own text_to_html_table, copied as a browser copies a table: cells joined by tabs), a Markdown pipe table as
GitHub renders it, and pandas' aligned `to_string` columns. Numbers worked out by hand from the rows written."""

from __future__ import annotations

import re

import pandas as pd
import pytest

from collectors.sources import detect_source, open_run


def _notebook_table_as_text(rows: list[dict]) -> str:
    """transformers' notebook table for `rows` (as on_evaluate writes them), as text: the HTML its
    text_to_html_table renders, each row's cells joined by tabs (what copying the rendered table gives)."""
    from transformers.utils.notebook import NotebookTrainingTracker, text_to_html_table

    tracker = NotebookTrainingTracker(100, ["Step", "Training Loss", "Validation Loss"])
    for r in rows:
        tracker.write_line(dict(r))
    html = text_to_html_table(tracker.inner_table)
    lines = []
    for tr in re.findall(r"<tr[^>]*>(.*?)</tr>", html, flags=re.DOTALL):
        lines.append("\t".join(re.findall(r"<t[hd]>(.*?)</t[hd]>", tr)))
    return "\n".join(lines)


def test_the_notebook_table_saved_as_text_is_read_with_no_log_as_null(tmp_path):
    rows = [{"Step": 10, "Training Loss": "No log", "Validation Loss": 0.5, "Reward": 0.25, "Kl": 0.001},
            {"Step": 20, "Training Loss": 0.0123, "Validation Loss": 0.45, "Reward": 0.5, "Kl": 0.002},
            {"Step": 30, "Training Loss": 0.0456, "Validation Loss": 0.4, "Reward": 0.75, "Kl": 0.004}]
    text = _notebook_table_as_text(rows)
    assert text.splitlines()[1].startswith("10\tNo log\t0.500000")  # the library's own formatting (6 decimals)
    f = tmp_path / "training_output.txt"
    f.write_text("Loading checkpoint shards: 100%\n[30/30 01:02, Epoch 1/1]\n" + text + "\nTrainOutput(...)\n")
    assert detect_source(f) == "text-table"
    run = open_run(f)
    m = run.metrics.set_index("step")
    assert list(m.index) == [10, 20, 30]
    assert pd.isna(m.loc[10, "loss/total"])  # `No log`: the Trainer had no loss yet, not a zero
    assert m.loc[20, "loss/total"] == pytest.approx(0.0123) and m.loc[30, "loss/total"] == pytest.approx(0.0456)
    assert list(m["reward/mean"]) == [0.25, 0.5, 0.75]  # `Reward`: the synonym table's `reward`
    assert list(m["policy/kl_ref"]) == [0.001, 0.002, 0.004]


def test_a_markdown_pipe_table_among_prose(tmp_path):
    f = tmp_path / "results.md"
    f.write_text("# Run 3\n\nThe reward rises, then flattens.\n\n"
                 "| step | reward | kl | completion_length |\n"
                 "|---:|---:|---:|---:|\n"
                 "| 1 | 0.125 | 0.0 | 310 |\n"
                 "| 2 | 0.25 | 0.01 | 1,204 |\n"
                 "| 4 | 0.5 | 0,02 | 298.5 |\n\n"
                 "Eval came later.\n")
    assert detect_source(f) == "text-table"
    m = open_run(f).metrics.set_index("step")
    assert list(m.index) == [1, 2, 4]  # the logged steps, gaps kept
    assert list(m["reward/mean"]) == [0.125, 0.25, 0.5]
    assert list(m["completions/len_mean"]) == [310.0, 1204.0, 298.5]  # a thousands comma is the number
    assert m.loc[2, "policy/kl_ref"] == 0.01 and pd.isna(m.loc[4, "policy/kl_ref"])  # `0,02`: not read as 2


def test_aligned_columns_as_pandas_prints_them(tmp_path):
    frame = pd.DataFrame({"global_step": [5, 10, 15], "reward_mean": [0.1, 0.3, 0.6], "entropy": [1.2, 1.0, 0.8],
                          "grad_norm": [0.9, 1.1, 1.3]})
    text = frame.to_string(index=False)  # pandas' aligned columns, two spaces or more between the names
    assert "  " in text.splitlines()[0]
    f = tmp_path / "train.log"
    f.write_text("starting\n" + text + "\ndone\n")
    run = open_run(f)
    m = run.metrics.set_index("step")
    assert run.meta.source == "text-table" and list(m.index) == [5, 10, 15]
    assert list(m["reward/mean"]) == [0.1, 0.3, 0.6] and list(m["policy/entropy"]) == [1.2, 1.0, 0.8]
    assert list(m["optim/grad_norm"]) == [0.9, 1.1, 1.3]


def test_prose_with_two_spaces_and_a_short_table_are_not_tables(tmp_path):
    f = tmp_path / "notes.txt"
    f.write_text("The reward  went up  over time.\nstep  reward  kl\n1  0.5  0.0\n")  # one row: under MIN_ROWS
    assert detect_source(f) != "text-table"
