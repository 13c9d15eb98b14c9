"""The rldoctor adapter of benchmarks/bench_vs_rldoctor.py on small cases worked by hand (not the benchmark).

rldoctor is in the dev extra (pyproject `bench`), so `make test` installs it: imported hard.
"""

from __future__ import annotations

import sys

import pandas as pd
import pytest
import rl_doctor
from helpers.paths import REPO

sys.path.insert(0, str(REPO / "benchmarks"))

import bench_vs_rldoctor as bench  # benchmarks/ is no package: its folder is on sys.path
import rldoctor_adapter as adapter

from dashboard.diagnosis.accuracy.scoring import Case, Observation, score_case


def tiny_run():
    """20 TRL-named rows: 10% of completions clipped at every step, a flat length of 100, the gradient norm
    alternating 1.0 / 1.1 and logged as NaN at step 12; no reward, entropy, KL or clip fraction."""
    rows = [{"step": s, "completions/mean_length": 100.0, "completions/clipped_ratio": 0.10,
             "grad_norm": float("nan") if s == 12 else (1.0 if s % 2 else 1.1)} for s in range(1, 21)]
    return rl_doctor.run_from_records(rows, name="tiny")


def test_the_table_names_every_rldoctor_detector_and_only_symptoms_of_the_vocabulary():
    assert adapter.check_table() == []
    assert {c.detector for c in adapter.CHECKS} == set(rl_doctor.detectors.available())


def test_findings_map_to_symptoms_check_by_check():
    # Worked by hand from rldoctor's thresholds: length_pathology sees a truncation rate of 0.10 (median of the
    # last quarter), >= 0.05 and < 0.15: warning; growth 0%, so no length check. gradient_pathology sees one
    # non-finite norm: critical; no zero norm, no vanishing (median of the first 5: 1.0, of the last 3: 1.1), no spike (nothing
    # above 3x the median): only non_finite. Every other detector lacks its input and is skipped.
    findings = rl_doctor.diagnose(tiny_run()).findings
    fired = {f.detector: f.severity for f in findings if f.severity >= rl_doctor.Severity.INFO}
    assert fired == {"length_pathology": rl_doctor.Severity.WARNING,
                     "gradient_pathology": rl_doctor.Severity.CRITICAL}
    assert adapter.findings_to_symptoms(findings) == {"truncation": "warning", "non_finite": "critical"}


def test_one_observation_is_scored_as_ours_are():
    # Expected truncation, length_effect allowed, only truncation may be critical. Reported: truncation (warning)
    # and non_finite (critical): 1 of 1 expected group hit; 2 alarms, 1 correct; non_finite is a false critical.
    case = Case("tiny", "unused", expected=(("truncation",),), allowed=frozenset({"length_effect"}),
                critical_ok=frozenset({"truncation"}))
    obs = Observation(adapter.findings_to_symptoms(rl_doctor.diagnose(tiny_run()).findings), steps=20)
    s = score_case(case, obs)
    assert s.hits == [("truncation",)] and s.misses == []
    assert s.correct == {"truncation": "warning"}
    assert s.false_alarms == {"non_finite": "critical"} and s.false_criticals == ["non_finite"]


def test_a_run_rldoctor_cannot_open_misses_all_it_expects(tmp_path):
    (tmp_path / "train.log").write_text("step 1 loss 0.5\n")
    case = Case("console", str(tmp_path), expected=(("truncation",), ("reward_flat", "no_learning")))
    obs = adapter.observe_rldoctor(case)
    assert obs.error is not None and str(tmp_path) in obs.error and "no file rldoctor reads" in obs.error
    assert score_case(case, obs).misses == list(case.expected)


def test_rule_labels_become_symptoms():
    # a and b report symptom x (one group), the audit none (dropped); c is allowed at info, d at warning, both
    # reporting y: cap warning; x is expected, so it has no cap even where a rule of it is capped.
    to_symptom = {"a": "x", "b": "x", "audit": None, "c": "y", "d": "y", "e": "x"}.get
    case = Case("m", "p", expected=(("a",), ("b",), ("audit",)), allowed=frozenset({"c", "d", "e"}),
                cap={"c": "info", "d": "warning", "e": "info"}, critical_ok=frozenset({"a", "b", "audit"}))
    out = adapter.symptom_case(case, to_symptom)
    assert out.expected == (("x",),)
    assert out.allowed == frozenset({"x", "y"}) and out.cap == {"y": "warning"}
    assert out.critical_ok == frozenset({"x"})


def test_the_newest_checkpoint_is_what_a_user_points_rldoctor_at(tmp_path):
    for n in (5, 10, 40):
        (tmp_path / f"checkpoint-{n}").mkdir()
        (tmp_path / f"checkpoint-{n}" / "trainer_state.json").write_text("{}")
    (tmp_path / "metrics.csv").write_text("step,reward\n")
    (tmp_path / "eval.json").write_text("[]")
    assert [p.relative_to(tmp_path).as_posix() for p in adapter.target_candidates(tmp_path)] == [
        "checkpoint-40/trainer_state.json", "checkpoint-10/trainer_state.json", "checkpoint-5/trainer_state.json",
        "metrics.csv", "eval.json"]


@pytest.mark.parametrize("onset,expected", [(37, 37), (1, 1), (100, 100), (101, None)])
def test_first_detection_finds_the_first_step_between_cuts(onset, expected):
    # 100 logged steps 1..100 (more than the 60 cuts): a finding present from `onset` on is found at `onset`
    # by the cuts and the bisection between them; one the whole run never reports is None.
    steps = [float(s) for s in range(1, 101)]
    calls = []

    def found(s):
        calls.append(s)
        return s >= onset

    assert bench.first_detection(steps, found) == expected
    assert len(calls) <= bench.GRID + 2  # the whole run, the cuts, one bisection step (cuts <= 2 steps apart)


def test_our_rows_reach_rldoctor_under_names_it_reads():
    # policy/kl_ref is our KL to the reference (rldoctor's `kl`); loss/kl, the KL loss term its suffix match would
    # take for the KL, goes; wall_time and the unlogged (NaN) cell go; of the config, the facts it reads.
    frame = pd.DataFrame({"step": [1, 2], "wall_time": [0.0, 1.0], "policy/kl_ref": [0.01, 0.02],
                          "loss/kl": [0.0004, 0.0008], "completions/len_mean": [5.0, float("nan")]})
    rows, config = adapter.native_records(frame, {"rollout.group_size": 8, "task.digits": 2, "steps": 200})
    assert rows == [{"step": 1, "kl": 0.01, "response_len_mean": 5.0}, {"step": 2, "kl": 0.02}]
    assert config == {"group_size": 8, "max_steps": 200}
    run = rl_doctor.run_from_records(rows, config=config)
    assert run.config.group_size == 8 and run.finite("kl")[1].tolist() == [0.01, 0.02]


def test_the_real_runs_split_by_name_into_the_original_32_and_the_31_added():
    assert len(bench.ORIGINAL_32) == 32 and len(bench.ADDED_37) == 31
    assert not bench.ORIGINAL_32 & bench.ADDED_37
    cases = [Case(n, n) for n in ("trl_trading_agent", "custom_math_g2_zeroloss", "tb_wordle_sweep", "a_later_run")]
    parts = {label: [c.name for c in sub] for label, sub in bench.subsets("real_runs", cases)}
    # a run named in neither list (one added to labels.json later) is in the whole corpus only
    assert parts == {"": ["trl_trading_agent", "custom_math_g2_zeroloss", "tb_wordle_sweep", "a_later_run"],
                     "original 2: ": ["trl_trading_agent", "tb_wordle_sweep"], "added 1: ": ["custom_math_g2_zeroloss"]}
    assert [label for label, _ in bench.subsets("sample_runs", cases)] == [""]


def test_the_two_lists_are_the_labelled_real_runs():
    import json

    from helpers.paths import REAL_RUNS

    labels = REAL_RUNS / "labels.json"
    if not labels.is_file():
        pytest.skip("the real runs are not beside the project")
    names = set(json.loads(labels.read_text())["runs"])
    assert bench.ORIGINAL_32 | bench.ADDED_37 <= names
