"""`grpo-diagnose --lang zh` prints no English sentence (evidence lines, could-not-judge reasons, reader notes), and
the reports carry the reader notes and a can't-judge run's chart (issue 39, items 6 and 7)."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

import pytest
from helpers.paths import REAL_RUNS, REPO
from helpers.zh_words import english_left

from collectors import open_run
from dashboard import report
from dashboard.diagnosis import cli, diagnose, i18n

# Names the lines may keep: frameworks and tools (proper names), the keys and columns the logs name, rule ids
NAMES = {"NeMo-RL", "slime", "AReaL", "prime-rl", "ms-swift", "GRPOConfig", "dict", "gae", "truncation", "True",
         "difficulty", "normalization", "temperature", "logits", "current", "padding", "positive", "log", "none",
         "phase", "history", "truncated", "Adv", "serving", "training", "bug"}
TARGETS = ["sample_runs/broken_verifier", "sample_runs/lr_too_high", "sample_runs/entropy_collapse",
           "sample_runs/length_hacking", "sample_runs/sign_flip"]
REAL_TARGETS = ["trl_console_qwen9b_gsm8k", "verl_qwen05b_gsm8k_ppo", "custom_log_minimind", "tb_wordle_sweep",
                "trl_verilog_length_runaway", "grponorm_hard_standard_400"]


def zh_output(target: str) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        cli.main([target, "--lang", "zh", "-v"])
    return out.getvalue()


def english_lines(text: str, names: set[str]) -> list[str]:
    """Lines with an English sentence: two or more English words that are no id, name or notes term."""
    return [line for line in text.splitlines()
            if not line.startswith("== ") and len(english_left(line, names | NAMES)) >= 2]


@pytest.mark.parametrize("target", TARGETS)
def test_zh_cli_prints_no_english_sentence_on_the_sample_runs(target):
    text = zh_output(str(REPO / target))
    assert "证据：" in text or "判断" in text
    assert not english_lines(text, {Path(target).name}), english_lines(text, set())[:5]


@pytest.mark.skipif(not REAL_RUNS.is_dir(), reason="real runs not here")
@pytest.mark.parametrize("name", REAL_TARGETS)
def test_zh_cli_prints_no_english_sentence_on_real_runs(name):
    if not (REAL_RUNS / name).is_dir():
        pytest.skip(f"{name} not here")
    text = zh_output(str(REAL_RUNS / name))
    assert not english_lines(text, {name}), english_lines(text, {name})[:5]


@pytest.mark.skipif(not (REAL_RUNS / "trl_console_qwen9b_gsm8k").is_dir(), reason="real runs not here")
def test_the_reports_carry_the_reader_notes_in_both_languages():
    run = open_run(str(REAL_RUNS / "trl_console_qwen9b_gsm8k"))
    notes = [str(p) for p in run.problems]
    assert notes == ["raw_console.log: step taken from the progress bar's N/M counter at each printed dict"]
    item = report.Item("r", diagnose(run), run)
    md_en, md_zh = report.markdown([item], "en"), report.markdown([item], "zh")
    assert "step taken from the progress bar's N/M counter at each printed dict" in md_en
    assert "Reading this run: 1 note(s)" in md_en
    assert "raw\\_console.log：step 取自每个打印出的 dict 处进度条的 N/M 计数" in md_zh
    html_zh = report.html([item], "zh")
    assert "raw_console.log：step 取自每个打印出的 dict 处进度条的 N/M 计数" in html_zh


def test_a_cant_judge_runs_html_draws_the_steps_it_has():
    run = open_run(str(REPO / "sample_runs" / "healthy")).until(10)
    d = diagnose(run)
    assert d.verdict.kind == "cant_judge"
    html = report.html([report.Item("healthy", d, run)], "en")
    assert "What the run has logged so far" in html
    assert html.count('class="plotly-graph-div"') >= 1
    assert "这次训练目前记录的指标" in report.html([report.Item("healthy", d, run)], "zh")


def test_every_reader_note_of_the_corpora_has_its_chinese():
    # the notes the sample runs, the TRL corpus and (when here) the real runs produce
    targets = [p for p in sorted((REPO / "tests" / "fixtures" / "trl_corpus").glob("*")) if p.is_dir()]
    targets += [REAL_RUNS / n for n in REAL_TARGETS if (REAL_RUNS / n).is_dir()]
    missing = []
    for t in targets:
        for run in cli.open_launches(str(t)).values():
            missing += [n for n in (str(p) for p in run.problems) if not i18n.has_note_text(n, "zh")]
    assert not missing, missing[:5]
