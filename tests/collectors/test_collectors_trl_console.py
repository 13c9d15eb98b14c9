"""TRL console logs, on the console of a real GRPOTrainer run on CPU (tests/fixtures/trl/make_trl_console.py,
stdout and stderr into one file as `> train.log 2>&1` makes it): steps from tqdm's trace, eval dicts, the
train summary, the fallbacks when the bars are gone, and a live refresh."""

from __future__ import annotations

import json
import math
import re
import subprocess
import sys

import pytest
from helpers.paths import REPO

from collectors.readers.trl.console import TrlConsoleRun, parse_dict
from collectors.sources import detect_source, open_run

SCRIPT = REPO / "tests" / "fixtures" / "trl" / "make_trl_console.py"


@pytest.fixture(scope="module")
def console(tmp_path_factory):
    out = tmp_path_factory.mktemp("trl_console")
    with (out / "train.log").open("wb") as log:
        proc = subprocess.run([sys.executable, str(SCRIPT), str(out), "--steps", "4", "--logging-steps", "2"],
                              stdout=log, stderr=subprocess.STDOUT, check=False, timeout=900)
    assert proc.returncode == 0, (out / "train.log").read_text(errors="replace")[-3000:]
    return out


def test_console_log_gives_the_trainer_state_rows(console):
    log = console / "train.log"
    assert detect_source(log) == "trl-console"
    run = open_run(log)
    assert run.meta.source == "trl-console"  # TRL's GRPOTrainer printed it: its own keys (reward_std ...) say so
    m = run.metrics
    # the printed GRPOConfig gives the settings the diagnosis reads (collectors/readers/trl/printed_args.py)
    assert {k: run.meta.config.get(k) for k in ("max_completion_length", "num_generations", "beta")} == {
        "max_completion_length": 8, "num_generations": 4, "beta": 0.04}
    state = json.loads((console / "trl_out" / "checkpoint-4" / "trainer_state.json").read_text())["log_history"]
    train = [h for h in state if "loss" in h]
    evals = [h for h in state if "eval_loss" in h]
    assert list(m["step"]) == [h["step"] for h in train] == [2, 4]
    for h, (_, row) in zip(train, m.iterrows(), strict=True):  # the console rounds to 4 significant digits
        assert math.isclose(row["reward/mean"], h["reward"], rel_tol=1e-3, abs_tol=1e-6)
        assert math.isclose(row["optim/lr"], h["learning_rate"], rel_tol=1e-3)
        assert math.isclose(row["policy/kl_ref"], h["kl"], rel_tol=1e-3, abs_tol=1e-8)
    on_eval = m.set_index("step")["eval/reward_mean"].dropna()
    assert list(on_eval.index) == [h["step"] for h in evals] == [4]
    assert math.isclose(on_eval.iloc[-1], evals[-1]["eval_reward"], rel_tol=1e-3)
    assert "train_runtime" in run.meta.info["train_summary"] and run.meta.status == "finished"
    # tqdm redraws at most every 0.1 s: on a fast machine the bar skips the logged steps and the reader falls
    # back to the printed logging_steps; either way the source of the step is said, naming the file
    assert any(("progress bar's N/M counter" in str(p) or "printed logging_steps=2" in str(p))
               and "train.log" in str(p) for p in run.problems)


def test_without_bars_the_printed_logging_steps_is_used_and_said(console, tmp_path):
    text = (console / "train.log").read_bytes()
    no_bars = b"\n".join(s for s in re.split(rb"[\r\n]", text) if s.strip() and b"it/s]" not in s
                         and b"s/it]" not in s)
    f = tmp_path / "train.log"
    f.write_bytes(no_bars + b"\n")
    run = TrlConsoleRun(f)
    assert list(run.metrics["step"]) == [2, 4]
    assert any("assumed from the printed logging_steps=2" in p.message for p in run.problems)
    f.write_bytes(no_bars.replace(b"logging_steps=2", b"") + b"\n")
    run = TrlConsoleRun(f)
    assert list(run.metrics["step"]) == [1, 2]
    assert any("step assumed" in p.message and "1, 2, ..." in p.message for p in run.problems)


def test_live_refresh_reads_the_new_dicts_only(console, tmp_path):
    text = (console / "train.log").read_bytes()
    cut = text.index(b"{'loss'", text.index(b"{'loss'") + 1)  # before the second training dict
    f = tmp_path / "train.log"
    f.write_bytes(text[:cut])
    run = TrlConsoleRun(f)
    assert list(run.metrics["step"]) == [2]
    with f.open("ab") as fh:
        fh.write(text[cut:])
    run.refresh()
    assert list(run.metrics["step"]) == [2, 4] and "eval/reward_mean" in run.metrics


def test_string_values_of_older_trl_and_no_code_runs():
    assert parse_dict(b"{'loss': '0.002', 'reward': '0.5', 'completion_length': '229.8'}") == {
        "loss": "0.002", "reward": "0.5", "completion_length": "229.8"}
    assert parse_dict(b"{'loss': __import__('os').getpid()}") is None


def test_a_cut_dict_is_named_and_no_step_note_without_dicts(tmp_path):
    f = tmp_path / "train.log"
    f.write_text("{'loss': 0.1, 'reward': [1, 2\n{'loss': 0.2, 'reward': '0.3'}\n")
    run = TrlConsoleRun(f)
    assert list(run.metrics["reward/mean"]) == [0.3]
    assert any(p.message.startswith("line 1: a log dict that does not parse") for p in run.problems)
    g = tmp_path / "other.log"
    g.write_text("nothing printed by a Trainer\n")
    assert TrlConsoleRun(g).problems == []


def test_the_step_is_the_count_redrawn_after_the_write_not_a_stale_one(tmp_path):
    """tqdm skips redraws within 0.1 s, so the bar drawn before a write may still say 1/4 at step 2: the redraw
    right after the printed dict says 2/4. A nested eval bar's close (spaces, cursor up) is no write. The bars
    of a line not yet ended by a newline are read as they come, so a live view is not a print behind."""
    bar = " {p}%|#  | {n}/4 [00:00<00:00,  5.51it/s]"
    clear = "\r" + " " * 45 + "\r"
    log = ("logging_steps=3\n" + "\r" + bar.format(p=25, n=1) + clear + "{'loss': 0.1, 'reward': 0.5}\n"
           + "\r" + bar.format(p=50, n=2) + "\n\r  0%|  | 0/2 [00:00<?, ?it/s]\x1b[A\r" + " " * 45 + "\x1b[A\n"
           + "\r" + bar.format(p=75, n=3) + clear)
    f = tmp_path / "train.log"
    f.write_text(log)
    run = TrlConsoleRun(f)
    assert list(run.metrics["step"]) == [2]  # not 1 (the stale bar), not 3 (the printed logging_steps)
    assert any("progress bar's N/M counter" in p.message for p in run.problems)
    with f.open("a") as fh:
        fh.write("{'loss': 0.2, 'reward': 0.6}\n\r" + bar.format(p=100, n=4) + "\r")  # the redraw ends at the next
    run.refresh()
    assert list(run.metrics["step"]) == [2, 4] and list(run.metrics["reward/mean"]) == [0.5, 0.6]


def test_printed_dicts_without_a_key_of_trls_own_are_a_trainer_console_until_one_comes(tmp_path):
    """Dicts as transformers' Trainer prints them for any trainer (loss, reward, learning_rate): the run is not
    claimed as TRL's (whose one-update-per-rollout the diagnosis would assume); a dict with TRL's `reward_std`
    makes it TRL's on the next read."""
    log = tmp_path / "train.log"
    log.write_text("".join(f"{{'loss': 0.01, 'reward': 0.{i}, 'learning_rate': 1e-06, 'kl': 0.0{i}, "
                           f"'completions/len_mean': 10{i}.0}}\n" for i in range(1, 4)))  # a canonical name: anyone's
    run = open_run(log)
    assert run.meta.source == "trainer-console" and list(run.metrics["reward/mean"]) == [0.1, 0.2, 0.3]
    assert list(run.metrics["completions/len_mean"]) == [101.0, 102.0, 103.0]
    assert run.meta.info["step_from"] == "order"  # no bars, no logging_steps: the steps are positions
    with log.open("a") as fh:
        fh.write("{'loss': 0.01, 'reward': 0.4, 'reward_std': 0.2, 'learning_rate': 1e-06, 'kl': 0.04}\n")
    assert run.refresh() == 1 and run.meta.source == "trl-console"
    assert run.metrics["reward/std"].iloc[-1] == 0.2


def test_a_non_number_logged_at_every_step_is_one_note_however_the_log_is_read(tmp_path):
    """A key holding a non-number beside its numbers at every other dict, the console read live two dicts at a
    time (as a buffered redirect hands them over): one note naming the key, its first lines and how many more,
    not one note per read. 50 reads: lines 1, 3, 5 and 47 more."""
    log = tmp_path / "train.log"

    def two(i: int) -> str:
        return (f"{{'loss': 0.1, 'reward': 0.{i}, 'reward_std': 0.1, 'kl': 'n/a'}}\n"
                f"{{'loss': 0.1, 'reward': 0.{i}5, 'reward_std': 0.1, 'kl': 0.0{i % 9 + 1}}}\n")

    log.write_text(two(0))
    run = open_run(log)
    for i in range(1, 50):
        with log.open("a") as fh:
            fh.write(two(i))
        run.refresh()
    notes = [str(p) for p in run.problems if "non-numeric" in str(p)]
    assert notes == ["train.log: line 1, 3, 5 and 47 more: non-numeric kl; left null"]
    m = run.metrics
    assert len(m) == 100 and m["policy/kl_ref"].isna().sum() == 50
