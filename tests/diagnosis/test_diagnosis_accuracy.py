"""Accuracy of the diagnosis on three labelled corpora, scored by one harness (dashboard/diagnosis/accuracy/scoring.py):
sample_runs/ against its manifest, the TRL-made runs (tests/fixtures/trl_corpus/) against theirs, and the real
published runs (../shared/fixtures/real-runs/, skipped when absent) against their expert labels.

Goals (issue 24, scored as issue 30 asks): on our two corpora every expected rule fires at warning or above,
nothing exceeds its manifest cap, only expected rules are critical and the healthy runs raise nothing above info
(OURS_NOT_YET below marks the runs that do not yet); on the real runs recall >= 0.9, precision >= 0.9 and no false critical. What
is not reached yet is marked xfail(strict=True) with its reason (tests/helpers/accuracy_not_yet.py), so a fix shows as an
XPASS to unmark.
`python scripts/score_diagnosis.py` prints the same report; `--write-doc` puts it in docs/diagnosis.md.
"""

from __future__ import annotations

import dataclasses
import json

import pytest
from helpers.accuracy_not_yet import GOALS_NOT_YET, NOT_YET  # tests/ is on sys.path

from dashboard.diagnosis.accuracy.corpora import (
    REAL_RUNS,
    SAMPLE_RUNS,
    TRL_CORPUS,
    label_cases,
    manifest_cases,
    observe,
    rule_label,
    score_cases,
)
from dashboard.diagnosis.accuracy.scoring import (
    Case,
    CaseScore,
    Observation,
    report_markdown,
    score_case,
    summary_line,
)
from dashboard.diagnosis.findings import Finding
from dashboard.diagnosis.registry import RULES, symptom_of

GOAL_RECALL, GOAL_PRECISION = 0.9, 0.9  # issue 24
HAVE_REAL = (REAL_RUNS / "labels.json").is_file()
needs_real = pytest.mark.skipif(not HAVE_REAL, reason=f"{REAL_RUNS} is absent (real runs are not in the project)")
OURS = {"sample_runs": SAMPLE_RUNS, "trl_corpus": TRL_CORPUS}

# Runs of our two corpora the diagnosis does not get right yet against their manifests (written from the mechanism
# each run was made with: grpo_core/scenarios.py, scripts/make_trl_corpus.py), and why (measured 2026-12-04 19:20
# UTC). Each marks that run's test xfail(strict=True); a rule fix shows as an XPASS, and the entry goes with it.
OURS_NOT_YET: dict[str, str] = {}


@pytest.fixture(scope="module")
def sample_score():
    score = score_cases("sample_runs", manifest_cases(SAMPLE_RUNS), rule_label)
    print("\n" + report_markdown([score]))
    return score


@pytest.fixture(scope="module")
def trl_score():
    assert (TRL_CORPUS / "manifest.json").is_file(), "tests/fixtures/trl_corpus is missing: make trl-corpus"
    score = score_cases("trl_corpus", manifest_cases(TRL_CORPUS), rule_label)
    print("\n" + report_markdown([score]))
    return score


@pytest.fixture(scope="module")
def real_score():
    if not HAVE_REAL:
        pytest.skip(f"{REAL_RUNS} is absent")
    score = score_cases("real_runs", label_cases(REAL_RUNS), symptom_of)
    print("\n" + report_markdown([score]))
    return score


def test_scoring_by_hand():
    """One case worked by hand: an alternative group hit at warning, a capped allowed label over its cap, an
    info-only expected label (a miss where hits need a warning), a critical that only 'allowed' permits."""
    case = Case("r", "r", expected=(("a", "b"), ("c",)), allowed=frozenset({"d", "e"}), cap={"d": "info"},
                critical_ok=frozenset({"a", "b", "c"}))
    obs = Observation({"b": "warning", "c": "info", "d": "warning", "e": "critical", "f": "info"})
    s = score_case(case, obs)
    assert s.hits == [("a", "b")] and s.misses == [("c",)]
    assert s.correct == {"b": "warning"}  # e is allowed but critical: counted as a false critical, d over its cap
    assert s.false_alarms == {"d": "warning", "e": "critical"} and s.false_criticals == ["e"]
    unread = score_case(case, Observation({}, error="RunError: x: no reader"))
    assert unread.misses == list(case.expected) and unread.reader_failures == ["does not open: RunError: x: no reader"]


def _our_params():
    out = []
    for corpus, folder in OURS.items():
        for name in json.loads((folder / "manifest.json").read_text())["runs"]:
            key = f"{corpus}/{name}"
            marks = [pytest.mark.xfail(strict=True, reason=OURS_NOT_YET[key])] if key in OURS_NOT_YET else []
            out.append(pytest.param(corpus, name, id=key, marks=marks))
    return out


def check_as_labelled(s: CaseScore) -> None:
    """The accuracy check of one run of our corpora: every expected rule at warning or above, nothing else above
    its cap (a healthy run: nothing above info), a critical only where expected, and the run opens."""
    assert s.errors() == [], s.errors()


@pytest.mark.parametrize(("corpus", "run"), _our_params())
def test_our_run_is_diagnosed_as_its_mechanism_says(corpus, run, request):
    score = request.getfixturevalue("sample_score" if corpus == "sample_runs" else "trl_score")
    check_as_labelled(next(c for c in score.cases if c.case.name == run))


def test_our_healthy_runs_are_checked_as_healthy():
    """Every run whose manifest expects and allows nothing is a healthy case (nothing above info), and a warning
    on one of them fails it."""
    healthy = {f"{k}/{c.name}" for k, folder in OURS.items() for c in manifest_cases(folder) if c.healthy}
    assert healthy == {"sample_runs/healthy", "trl_corpus/healthy_g8", "trl_corpus/healthy_g4_seed1",
                       "trl_corpus/healthy_g16_seed2", "trl_corpus/healthy_log5", "trl_corpus/healthy_log10"}
    case = next(c for c in manifest_cases(SAMPLE_RUNS) if c.name == "healthy")
    assert score_case(case, Observation({"entropy_collapse": "info"})).errors() == []
    assert score_case(case, Observation({"entropy_collapse": "warning"})).errors() == [
        "healthy: false alarm entropy_collapse (warning)"]


def test_our_corpora_are_scored_as_the_real_runs():
    """A severity cap per allowed rule (at most warning), expected rules hit at warning, criticals only there."""
    for folder in OURS.values():
        for c in manifest_cases(folder):
            assert c.hit_at == "warning" and c.critical_ok == {g[0] for g in c.expected}, c.name
            assert set(c.cap) == set(c.allowed) and set(c.cap.values()) <= {"info", "warning"}, c.name
            assert not c.allowed & c.critical_ok, c.name
    case = next(c for c in manifest_cases(SAMPLE_RUNS) if c.name == "low_temperature")
    s = score_case(case, Observation({"low_diversity": "info", "kl_clip_explode": "critical",
                                      "entropy_collapse": "warning"}))
    assert s.errors() == ["low_temperature: expected low_diversity not reported at warning or above",
                          "low_temperature: expected zero_variance_groups not reported at warning or above",
                          "low_temperature: false alarm entropy_collapse (warning)",
                          "low_temperature: false critical kl_clip_explode"]


def test_a_broken_rule_fails_the_accuracy_check(monkeypatch):
    """The check above can fail: kl_clip_explode patched in the registry to fire critical on every run fails the
    healthy sample run, and patched to never fire fails lr_too_high, whose fault it is."""
    cases = {c.name: c for c in manifest_cases(SAMPLE_RUNS)}
    healthy, broken = cases["healthy"], cases["lr_too_high"]
    for case in (healthy, broken):  # as the rules are: both pass
        check_as_labelled(score_case(case, observe(case, rule_label)))
    original = RULES["kl_clip_explode"]

    def always_critical(d):
        return [Finding("kl_clip_explode", "critical", "forced", original.symptom, (0, 1), (), ())]

    monkeypatch.setitem(RULES, "kl_clip_explode", dataclasses.replace(original, fn=always_critical))
    with pytest.raises(AssertionError, match="healthy: false critical kl_clip_explode"):
        check_as_labelled(score_case(healthy, observe(healthy, rule_label)))
    monkeypatch.setitem(RULES, "kl_clip_explode", dataclasses.replace(original, fn=lambda d: []))
    with pytest.raises(AssertionError, match="lr_too_high: expected kl_clip_explode not reported"):
        check_as_labelled(score_case(broken, observe(broken, rule_label)))


def test_manifest_names_existing_runs():
    for folder in (SAMPLE_RUNS, TRL_CORPUS):
        for name, spec in json.loads((folder / "manifest.json").read_text())["runs"].items():
            assert (folder / spec["path"]).is_dir(), f"{folder.name}/{name}: {spec['path']} is missing"


def _real_params():
    if not HAVE_REAL:
        return []
    names = json.loads((REAL_RUNS / "labels.json").read_text())["runs"]
    return [pytest.param(n, marks=pytest.mark.xfail(strict=True, reason=NOT_YET[n])) if n in NOT_YET else n
            for n in names]


@needs_real
@pytest.mark.parametrize("run", _real_params())
def test_real_run_is_read_and_diagnosed_as_labelled(run, real_score):
    s = next(c for c in real_score.cases if c.case.name == run)
    assert (s.misses, s.false_criticals, s.reader_failures) == ([], [], []), run


def _goal_params():
    return [pytest.param(g, marks=pytest.mark.xfail(strict=True, reason=GOALS_NOT_YET[g])) if g in GOALS_NOT_YET
            else g for g in ("recall", "precision", "false_criticals")]


@needs_real
@pytest.mark.parametrize("goal", _goal_params())
def test_real_runs_meet_the_goal(goal, real_score):
    ok = {"recall": (real_score.recall or 0) >= GOAL_RECALL,
          "precision": (real_score.precision or 0) >= GOAL_PRECISION,
          "false_criticals": real_score.false_criticals == 0}
    assert ok[goal], summary_line(real_score)


def test_first_step_ratio_appears_at_the_first_step_of_the_mismatch_run():
    runs = json.loads((SAMPLE_RUNS / "manifest.json").read_text())["runs"]
    name = next((n for n, s in runs.items() if "first_step_ratio" in s["expected_rules"]), None)
    assert name is not None, "no sample run expects first_step_ratio"
    from collectors import load_run
    from dashboard.diagnosis import diagnose

    run = load_run(SAMPLE_RUNS / runs[name]["path"])
    first = run.until(int(run.metrics["step"].min()))
    assert len(first.metrics) == 1
    assert "first_step_ratio" in {f.rule_id for f in diagnose(first).findings}
