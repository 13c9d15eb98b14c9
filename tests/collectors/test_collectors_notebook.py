"""GRPO runs trained in notebooks (collectors/readers/trl/notebook.py): notebooks written by nbformat holding the
table transformers' own notebook tracker draws (tests/fixtures/notebooks.py), and their Markdown export."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from fixtures.notebooks import CONFIG_CELL, progress_html, write_notebook  # tests/ is on sys.path
from helpers.paths import REPO

from collectors.meta import RunError
from collectors.readers.trl.notebook import column_key, config_from_code
from collectors.sources import detect_source, launches_of, open_run, open_runs
from dashboard.diagnosis.engine import diagnose

TOO_HARD = REPO / "tests" / "fixtures" / "trl_corpus" / "too_hard" / "checkpoint-100" / "trainer_state.json"


def trl_logs(path: Path = TOO_HARD) -> list[dict]:
    """The log dicts TRL's GRPOTrainer wrote for a run of the TRL corpus (its trainer_state.json)."""
    return [d for d in json.loads(path.read_text())["log_history"] if "loss" in d]


def test_a_notebook_of_a_trl_run_reads_and_diagnoses_as_the_run(tmp_path):
    logs = trl_logs()
    nb = write_notebook(tmp_path / "grpo.ipynb", [logs], g=8, cap=256)
    assert detect_source(nb) == "trl-notebook"
    run = open_run(nb)
    m = run.metrics
    assert m["step"].tolist() == list(range(1, 101))
    # the table prints floats %.6f: values equal to 6 decimals
    assert m["reward/mean"].tolist() == [0.0] * 100
    assert m["completions/len_mean"].tolist() == pytest.approx([d["completions/mean_length"] for d in logs], abs=1e-6)
    assert m["groups/zero_std_frac"].tolist() == [1.0] * 100
    # the GRPOConfig(...) cell's literal arguments; max_prompt_length is a name there, so unknown
    assert run.meta.config == {"learning_rate": 5e-6, "num_generations": 8, "max_completion_length": 256,
                               "logging_steps": 1, "max_steps": 100, "output_dir": "outputs"}
    original = open_run(TOO_HARD.parent.parent)
    want = {f.rule_id for f in diagnose(original).findings if f.severity == "critical"}
    got = {f.rule_id for f in diagnose(run).findings if f.severity == "critical"}
    # the flat reward is there too, a warning: the tied groups' consequence (advantage 0, no gradient)
    assert want == got == {"reward_constant", "zero_variance_groups"}
    assert {f.rule_id: f.severity for f in diagnose(run).findings}["reward_flat"] == "warning"


def test_two_trainings_in_one_notebook_are_two_runs_and_no_log_cells_are_gaps(tmp_path):
    # kl first logged at step 2: the tracker adds its column then, and step 1's row stays a cell short
    first = [{"step": s, "loss": 0.0, "reward": 0.1 * s} | ({"kl": 0.01} if s % 2 == 0 else {}) for s in (1, 2, 3)]
    second = [{"step": s, "loss": 0.0, "reward": 0.5} for s in (1, 2)]
    nb = write_notebook(tmp_path / "two.ipynb", [first, second])
    assert "<td>No Log</td>" in progress_html(first)  # the tracker writes it where a step lacks a key
    assert launches_of(nb) == [f"{nb}#1", f"{nb}#2"]
    a, b = open_runs(nb)
    assert a.meta.name == "two#1" and a.metrics["reward/mean"].tolist() == pytest.approx([0.1, 0.2, 0.3])
    kl = a.metrics["policy/kl_ref"].tolist()
    assert math.isnan(kl[0]) and kl[1] == 0.01 and math.isnan(kl[2])
    assert b.metrics["reward/mean"].tolist() == [0.5, 0.5]
    with pytest.raises(RunError, match="no table 3; it holds 2"):
        open_run(f"{nb}#3")


def test_a_markdown_export_reads_as_the_notebook(tmp_path):
    # `jupyter nbconvert --to markdown`: code in ```python blocks, an HTML output kept as HTML
    logs = trl_logs()
    md = tmp_path / "grpo.md"
    md.write_text(f"# GRPO\n\n```python\n{CONFIG_CELL.format(g=4, cap=128, steps=100)}```\n\n"
                  f"```python\ntrainer.train()\n```\n\n{progress_html(logs)}\n")
    run = open_run(md)
    assert run.meta.source == "trl-notebook" and len(run.metrics) == 100
    assert run.meta.config["num_generations"] == 4 and run.meta.config["max_completion_length"] == 128


def test_a_damaged_notebook_is_one_line_naming_it(tmp_path):
    nb = write_notebook(tmp_path / "grpo.ipynb", [trl_logs()[:5]])
    nb.write_text(nb.read_text()[:-40])  # cut off: no longer JSON
    with pytest.raises(RunError) as e:
        open_run(nb)
    assert str(e.value).startswith(f"{nb}: not a notebook: not valid JSON") and "\n" not in str(e.value)


def test_a_cell_whose_outputs_are_no_list_is_skipped(tmp_path):
    # make fuzz's case: a key renamed into "outputs" gave a cell outputs of 1 (TypeError before)
    nb = write_notebook(tmp_path / "grpo.ipynb", [trl_logs()[:5]])
    data = json.loads(nb.read_text())
    data["cells"][0]["outputs"] = 1
    nb.write_text(json.dumps(data))
    assert open_run(nb).metrics["step"].tolist() == [1, 2, 3, 4, 5]


def test_headers_and_code_as_the_table_and_the_cell_write_them():
    assert column_key("completions / mean_length") == "completions/mean_length"
    assert column_key("Training Loss") == "loss" and column_key("Step") == "step"
    code = ["x = 3\n%time foo()\ncfg = GRPOConfig(num_generations = x, beta = 0.04, use_vllm = True, lr = 1e-5 * 2)"]
    assert config_from_code(code) == {"beta": 0.04, "use_vllm": True}  # x is a name, 1e-5 * 2 an expression
