"""The table reader guesses what a log means where nobody told it (issue 36), one hand-made file per mechanism:
the step under another name or none, the reward under another name (with value checks), eval rows in the same
file, per-response lists, relaunches, printed dicts inside Markdown, companion columns; each guess is said in a
note and `--map` overrides it."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from collectors.meta import RunError
from collectors.readers.launches import RowLaunches
from collectors.readers.text import guess, responses
from collectors.readers.text.generic import GenericRun
from collectors.sources import detect_source, open_run, open_runs


def _jsonl(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _notes(run) -> str:
    return " | ".join(str(p) for p in run.problems)


# -- the step -----------------------------------------------------------------------------------------------
def test_step_under_another_name_is_found_by_name_and_values(tmp_path):
    f = _jsonl(tmp_path / "m.jsonl", [{"grpo_step": s, "loss": 0.1 * s, "reward_mean": 0.2 * s} for s in (1, 2, 3)])
    assert detect_source(f) == "generic"
    run = open_run(f)
    assert run.metrics["step"].tolist() == [1, 2, 3]
    assert run.metrics["reward/mean"].tolist() == pytest.approx([0.2, 0.4, 0.6])
    assert "guessed step: `grpo_step`" in _notes(run) and "--map grpo_step=OTHER" in _notes(run)


def test_a_path_ending_in_step_is_a_step_and_one_that_does_not_count_up_is_not(tmp_path):
    f = _jsonl(tmp_path / "m.jsonl", [{"system/step": float(s), "update": u, "reward": r}
                                      for s, u, r in ((1, 9, 0.1), (2, 3, 0.2), (3, 7, 0.3), (4, 1, 0.4))])
    run = open_run(f)
    # `update` is a step name, but 9, 3, 7, 1 falls more often than a step does: system/step is the step
    assert run.metrics["step"].tolist() == [1, 2, 3, 4]
    assert "`system/step`" in _notes(run)


def test_a_column_rising_by_a_fixed_stride_is_the_step_and_a_cumulative_count_is_not(tmp_path):
    f = tmp_path / "m.csv"
    f.write_text("tokens,n,loss,score\n100,10,1.0,0.1\n250,20,0.9,0.2\n330,30,0.8,0.3\n")
    run = open_run(f)
    assert run.metrics["step"].tolist() == [10, 20, 30]
    assert "`n` (its values rise by a fixed stride" in _notes(run)
    assert run.metrics["reward/mean"].tolist() == pytest.approx([0.1, 0.2, 0.3])  # `score`: the reward
    assert "guessed reward: `score`" in _notes(run)


def test_no_step_at_all_is_the_row_order_said_in_a_note(tmp_path):
    f = tmp_path / "m.csv"
    f.write_text("reward,loss\n0.1,2.0\n0.2,1.5\n0.3,1.0\n")
    run = open_run(f)
    assert run.metrics["step"].tolist() == [1, 2, 3]
    assert "the row order" in _notes(run) and "--map COLUMN=step" in _notes(run)


def test_map_names_the_step_and_overrides_a_guess(tmp_path):
    f = _jsonl(tmp_path / "m.jsonl", [{"grpo_step": 5 - s, "my_counter": s, "reward": 0.1 * s} for s in (1, 2, 3)])
    run = GenericRun(f, {"my_counter": "step"})
    assert run.metrics["step"].tolist() == [1, 2, 3]
    assert "your --map my_counter=step" in _notes(run)


# -- the reward ---------------------------------------------------------------------------------------------
def test_a_success_rate_is_the_pass_rate_and_the_reward_when_no_reward_is_logged(tmp_path):
    f = _jsonl(tmp_path / "m.jsonl", [{"step": s, "success_rate": v, "loss": 1.0} for s, v in ((1, 0.25), (2, 0.5))])
    run = open_run(f)
    m = run.metrics
    assert m["reward/pass_rate"].tolist() == [0.25, 0.5] and m["reward/mean"].tolist() == [0.25, 0.5]
    assert "guessed reward: the pass rate" in _notes(run)


def test_a_pass_rate_name_holding_values_outside_0_1_is_kept_as_logged(tmp_path):
    f = _jsonl(tmp_path / "m.jsonl", [{"step": s, "success_rate": v, "reward": 0.5} for s, v in ((1, 25.0), (2, 50.0))])
    run = open_run(f)
    assert "reward/pass_rate" not in run.metrics and run.metrics["success_rate"].tolist() == [25.0, 50.0]
    assert "`success_rate` is named like a pass rate but holds values outside [0, 1]" in _notes(run)


def test_a_format_accuracy_is_never_the_pass_rate(tmp_path):
    f = _jsonl(tmp_path / "m.jsonl", [{"step": 1, "format_accuracy": 0.9, "answer_accuracy": 0.1, "loss": 1.0},
                                      {"step": 2, "format_accuracy": 0.8, "answer_accuracy": 0.3, "loss": 1.0}])
    m = open_run(f).metrics
    assert m["reward/pass_rate"].tolist() == [0.1, 0.3] and m["format_accuracy"].tolist() == [0.9, 0.8]


# -- record kinds -------------------------------------------------------------------------------------------
def test_rollout_train_and_eval_records_become_one_step_and_an_eval_series(tmp_path):
    rows = [{"type": "eval", "grpo_step": 0, "reward": 0.05, "answer_accuracy": 0.05}]
    for s in (1, 2):
        rows += [{"type": "rollout", "grpo_step": s, "reward": 0.1 * s, "answer_accuracy": 0.1 * s},
                 {"type": "train", "grpo_step": s, "loss": 1.0 / s, "grad_norm": 0.5}]
    rows += [{"type": "eval", "grpo_step": 2, "reward": 0.3, "answer_accuracy": 0.25}]
    run = open_run(_jsonl(tmp_path / "m.jsonl", rows))
    m = run.metrics.set_index("step")
    assert m.loc[2, "reward/mean"] == pytest.approx(0.2) and m.loc[2, "eval/reward_mean"] == 0.3  # not replaced
    assert m.loc[2, "eval/pass_rate"] == 0.25 and m.loc[1, "loss/total"] == 1.0
    assert math.isnan(m.loc[1, "eval/reward_mean"]) and m.loc[0, "eval/reward_mean"] == 0.05
    assert "guessed eval rows: `type`" in _notes(run) and "more than once" not in _notes(run)


def test_an_eval_flag_marks_eval_rows(tmp_path):
    rows = [{"step": s, "reward_mean": 0.1 * s, "loss": 1.0} for s in (10, 20)] + \
           [{"step": 20, "eval": True, "recall@10": 0.04}]
    m = open_run(_jsonl(tmp_path / "m.jsonl", rows)).metrics.set_index("step")
    assert m.loc[20, "reward/mean"] == pytest.approx(2.0) and m.loc[20, "eval/pass_rate"] == 0.04


def test_a_validation_prefixed_accuracy_is_the_eval_pass_rate_not_the_train_one(tmp_path):
    f = tmp_path / "m.csv"
    f.write_text("step,reward,validation_accuracy\n1,0.5,0.2\n2,0.6,0.3\n")
    m = open_run(f).metrics
    assert m["eval/pass_rate"].tolist() == [0.2, 0.3] and "reward/pass_rate" not in m


# -- per-response values ------------------------------------------------------------------------------------
def test_group_statistics_from_lists_worked_by_hand():
    stats = responses.group_stats([[[0, 0], [1, 0]], [[1, 1, 1, 1]], None])
    assert stats["reward/mean"].tolist()[:2] == [0.25, 1.0]
    assert stats["groups/zero_std_frac"].tolist()[:2] == [0.5, 1.0]
    assert stats["groups/all_fail_frac"].tolist()[:2] == [0.5, 0.0]
    assert stats["groups/all_pass_frac"].tolist()[:2] == [0.0, 1.0]
    assert stats["groups/reward_std_mean"].iloc[0] == 0.25 and np.isnan(stats["reward/mean"].iloc[2])


def test_a_jsonl_of_per_response_rewards_gives_the_groups(tmp_path):
    rows = [{"step": 1, "rewards": [0.0, 0.0]}, {"step": 2, "rewards": [1.0, 0.0]}, {"step": 3, "rewards": [1.0, 1.0]}]
    run = open_run(_jsonl(tmp_path / "m.jsonl", rows))
    m = run.metrics
    assert m["reward/mean"].tolist() == [0.0, 0.5, 1.0] and m["groups/zero_std_frac"].tolist() == [1.0, 0.0, 1.0]
    assert m["groups/all_fail_frac"].tolist() == [1.0, 0.0, 0.0] and "each response's reward" in _notes(run)


def test_a_key_value_log_with_counts_and_digit_strings(tmp_path):
    f = tmp_path / "train.log"
    f.write_text("".join(f"__main__ - INFO - step={s} loss=0.000000 reward={r} correct={k}/2 reward_groups={g}\n"
                         for s, r, k, g in ((1, 0.0, 0, "00"), (2, 0.5, 1, "10"), (3, 0.0, 0, "00"), (4, 1.0, 2, "11"))))
    run = open_run(f)
    m = run.metrics
    assert m["correct"].tolist() == [0.0, 0.5, 0.0, 1.0]
    assert m["groups/zero_std_frac"].tolist() == [1.0, 0.0, 1.0, 1.0]
    assert m["groups/all_pass_frac"].tolist() == [0.0, 0.0, 0.0, 1.0]


def test_digits_with_no_leading_zero_anywhere_stay_a_number():
    assert responses.response_lists(__import__("pandas").Series(["10", "11", "10"])) is None


# -- relaunches ---------------------------------------------------------------------------------------------
def test_row_launches_worked_by_hand():
    assert RowLaunches().assign([1, 2, 3, 1, 2, 1, 2, 3, 2, 3, 3]) == [1, 1, 1, 2, 2, 3, 3, 3, 3, 3, 3]


def test_relaunches_in_one_file_open_as_launches(tmp_path):
    rows = [{"step": s, "mean_reward": 0.1, "loss": 1.0} for s in (1, 2, 3)] + \
           [{"step": s, "mean_reward": 0.5, "loss": 2.0} for s in range(1, 6)]
    f = _jsonl(tmp_path / "history.jsonl", rows)
    runs = open_runs(f)
    assert [len(r.metrics) for r in runs] == [3, 5]
    assert runs[1].metrics["reward/mean"].tolist() == [0.5] * 5 and runs[1].meta.name == "history#2"
    with pytest.raises(RunError, match="holds 2 separate runs"):
        open_run(f)
    with pytest.raises(RunError, match="holds no launch '7'"):
        open_run(f"{f}#7")


# -- other wrappers and companions --------------------------------------------------------------------------
def test_printed_dicts_inside_markdown_open_with_the_trl_console_reader(tmp_path):
    f = tmp_path / "run_terminal.md"
    f.write_text("# Training Logs\n\n```text\nLoading checkpoint shards: 100%\n"
                 + "".join(f"    {{'loss': {0.1 * s:.2f}, 'reward': {0.2 * s:.2f}, 'learning_rate': 1e-05}}\n"
                           "============\n" for s in (1, 2, 3)) + "```\n")
    assert detect_source(f) == "trl-console"
    m = open_run(f).metrics
    assert m["reward/mean"].tolist() == pytest.approx([0.2, 0.4, 0.6]) and m["step"].tolist() == [1, 2, 3]


def test_companion_columns_are_no_metrics_and_blank_what_was_not_measured(tmp_path):
    f = tmp_path / "m.csv"
    f.write_text("step,reward,kl,kl_available,kl_reason\n1,0.1,0.0,False,no reference model\n"
                 "2,0.2,0.03,True,\n3,0.3,0.05,True,\n")
    run = open_run(f)
    m = run.metrics
    assert "kl_available" not in m and "kl_reason" not in m
    assert math.isnan(m["policy/kl_ref"].iloc[0]) and m["policy/kl_ref"].iloc[1] == 0.03
    assert "companion columns, not metrics: kl_available, kl_reason" in _notes(run)


def test_a_table_with_no_training_column_is_not_taken_for_a_log(tmp_path):
    f = _jsonl(tmp_path / "prompts.jsonl", [{"prompt": "2+2?", "answer": "4", "id": 1}])
    assert detect_source(f) is None
    g = tmp_path / "config.json"
    g.write_text(json.dumps({"lr": 1e-5, "group_size": 8}))
    assert detect_source(g) is None


def test_guess_kind_and_step_are_pure():
    import pandas as pd

    frame = pd.DataFrame({"split": ["train", "val", "train"], "it": [1, 1, 2], "loss": [1.0, None, 0.5]})
    assert guess.guess_kind(frame)[0] == "split"
    assert guess.eval_rows(frame, "split").tolist() == [False, True, False]
    assert guess.guess_step(frame).column is None  # `it` is no step name and does not rise by one stride


def test_a_console_dict_holding_nan_or_inf_is_read_not_skipped(tmp_path):
    f = tmp_path / "train.log"
    f.write_text("{'loss': 0.1, 'reward': 0.5, 'kl': nan}\n{'loss': 0.2, 'reward': 0.6, 'kl': inf}\n")
    run = open_run(f)
    assert run.metrics["reward/mean"].tolist() == [0.5, 0.6] and run.metrics["policy/kl_ref"].iloc[1] == math.inf
    assert run.nan_at == {"policy/kl_ref": {1}}


def test_map_makes_a_table_of_unknown_names_a_log(tmp_path):
    from collectors.readers.synonyms import set_user_map

    f = _jsonl(tmp_path / "metrics.jsonl", [{"t": 1, "hits": 0.2}, {"t": 2, "hits": 0.4}])
    g = tmp_path / "copy.jsonl"  # a second file: detection is cached per file state
    assert detect_source(f) is None
    set_user_map({"hits": "reward/mean", "t": "step"})
    try:
        g.write_bytes(f.read_bytes())
        run = open_run(g)
        assert run.metrics["reward/mean"].tolist() == [0.2, 0.4] and run.metrics["step"].tolist() == [1, 2]
    finally:
        set_user_map({})


def test_an_eval_history_beside_the_training_log_is_its_eval_series(tmp_path):
    _jsonl(tmp_path / "train_log.jsonl", [{"step": s, "reward": 0.1 * s, "loss": 1.0} for s in (1, 2, 3, 4)])
    (tmp_path / "eval_history.json").write_text(json.dumps([{"step": 2, "accuracy": 0.3}, {"step": 4, "accuracy": 0.5}]))
    runs = open_runs(tmp_path)
    assert len(runs) == 1  # not a second run of two rows
    m = runs[0].metrics.set_index("step")
    assert m["eval/pass_rate"].dropna().to_dict() == {2: 0.3, 4: 0.5}
    assert m.loc[4, "reward/mean"] == pytest.approx(0.4)
    assert "eval rows beside train_log.jsonl" in _notes(runs[0])


def test_a_tsv_and_json_lines_named_json_open(tmp_path):
    f = tmp_path / "log.tsv"
    f.write_text("iteration\tmean_reward\tloss\n1\t0.1\t2.0\n2\t0.3\t1.5\n")
    assert open_run(f).metrics["reward/mean"].tolist() == [0.1, 0.3]
    g = _jsonl(tmp_path / "metrics.json", [{"step": s, "reward": 0.1 * s} for s in (1, 2, 3)])
    assert open_run(g).metrics["reward/mean"].tolist() == pytest.approx([0.1, 0.2, 0.3])

