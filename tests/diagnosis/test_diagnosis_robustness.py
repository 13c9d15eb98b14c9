"""The views of benchmarks/diagnosis_robustness.py on a sample run (what each keeps), and its scoring of a view
against the accuracy harness's own (not the benchmark's figures)."""

from __future__ import annotations

import sys

from helpers.paths import REPO

sys.path.insert(0, str(REPO / "benchmarks"))

import diagnosis_robustness as robust  # benchmarks/ is no package: its folder is on sys.path

from collectors.sources import open_run
from dashboard.diagnosis.accuracy import corpora as K
from dashboard.diagnosis.engine import diagnose


def test_every_n_keeps_the_steps_a_trainer_logging_every_n_steps_logs_and_their_samples():
    run = open_run(REPO / "sample_runs" / "healthy")
    assert run.metrics["step"].tolist() == list(range(200))  # steps 0-199
    v = robust.every(5)(run)
    assert v.metrics["step"].tolist() == list(range(0, 200, 5))  # 40 rows: 0, 5, ..., 195
    assert set(v.samples()["step"]) <= set(range(0, 200, 5)) and len(v.samples())
    assert v.meta.config == run.meta.config and v.meta.source == "grpo_core"
    assert diagnose(v).steps == 40


def test_without_drops_only_what_it_names():
    run = open_run(REPO / "sample_runs" / "healthy")
    bare, no_config = robust.without(samples=True, config=True)(run), robust.without(samples=False, config=True)(run)
    assert bare.samples() is None and bare.meta.config == {} and len(bare.metrics) == len(run.metrics)
    assert no_config.samples() is not None and no_config.meta.config == {}


def test_a_view_is_scored_as_the_harness_scores_the_runs():
    cases = [c for c in K.manifest_cases(K.SAMPLE_RUNS) if c.name in ("healthy", "broken_verifier")]
    as_logged = robust.score_view(None, "s", cases, K.rule_label)
    direct = K.score_cases("s", cases, K.rule_label)
    assert (as_logged.hits, as_logged.expected, as_logged.alarms) == (direct.hits, direct.expected, direct.alarms)
    # without samples, nothing shows the verifier's mistakes: broken_verifier's verifier_suspect is missed
    bare = robust.score_view(robust.VIEWS["no_samples"], "s", cases, K.rule_label)
    assert any("verifier_suspect" in line for line in bare.errors()) and bare.hits == direct.hits - 1
