"""The three labelled corpora the accuracy harness scores (scoring.py), read from their files.

- sample_runs/manifest.json and tests/fixtures/trl_corpus/manifest.json: rule ids (docs/TEAM-CONTRACT.md),
  scored as the real runs are: `expected_rules` must fire at warning or above and are the only rules that may be
  critical; `allowed_rules` maps each rule that may fire to its cap (the highest severity it may get); any
  other warning or critical is a false alarm. A healthy run expects and allows nothing: it may raise nothing
  above info.
- ../shared/fixtures/real-runs/labels.json: symptom ids (its README's vocabulary), `expected` as groups of
  alternatives reported at warning or above, `allowed`, `cap`, `reader`; only expected symptoms may be critical.

`observe` opens a run with the collectors and diagnoses it; a run that does not open is an Observation with
the error (scored as misses), never an exception.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from dashboard.diagnosis.accuracy.scoring import Case, CorpusScore, Observation, score_corpus, worst_severity
from dashboard.diagnosis.engine import diagnose
from dashboard.diagnosis.registry import symptom_of

ROOT = Path(__file__).resolve().parents[3]
SAMPLE_RUNS = ROOT / "sample_runs"
TRL_CORPUS = ROOT / "tests" / "fixtures" / "trl_corpus"
REAL_RUNS = ROOT.parent / "shared" / "fixtures" / "real-runs"


def manifest_cases(folder: Path) -> list[Case]:
    """Cases from a manifest.json in the form of sample_runs/manifest.json (labels are rule ids)."""
    runs = json.loads((folder / "manifest.json").read_text())["runs"]
    out = []
    for name, spec in runs.items():
        caps = spec.get("allowed_rules", {})
        if not isinstance(caps, dict) or not set(caps.values()) <= {"info", "warning"}:
            raise ValueError(f"{folder.name}/manifest.json: {name}: allowed_rules must map each rule to its cap, "
                             f"'info' or 'warning' (only expected rules may be critical); got {caps!r}")
        expected = tuple((r,) for r in spec["expected_rules"])
        out.append(Case(name, str(folder / spec["path"]), expected, frozenset(caps), cap=dict(caps),
                        critical_ok=frozenset(spec["expected_rules"]), hit_at="warning",
                        healthy=not expected and not caps))
    return out


def label_cases(folder: Path) -> list[Case]:
    """Cases from the real runs' labels.json (labels are symptom ids)."""
    runs = json.loads((folder / "labels.json").read_text())["runs"]
    out = []
    for name, spec in runs.items():
        expected = tuple(tuple(g) for g in spec.get("expected", []))
        out.append(Case(name, str(folder / name), expected, frozenset(spec.get("allowed", [])),
                        cap=dict(spec.get("cap", {})), critical_ok=frozenset(s for g in expected for s in g),
                        hit_at="warning", reader=dict(spec.get("reader", {}))))
    return out


def rule_label(rule_id: str) -> str:
    return rule_id


def verdict_text(diagnosis: Any) -> str | None:
    """The one-line verdict as text (absent: None)."""
    v = getattr(diagnosis, "verdict", None)
    return v if v is None or isinstance(v, str) else str(getattr(v, "text", v))


def open_all(target: str) -> list[Any]:
    """Every run a target holds: one per launch of a folder several launches wrote into, else the one run."""
    from collectors import sources

    return sources.open_runs(target)


def observe(case: Case, to_label: Callable[[str], str | None],
            opener: Callable[[str], list[Any]] = open_all) -> Observation:
    """Open and diagnose the case's run(s); labels through `to_label` (identity for rule ids, symptom_of).
    A target holding several launches is judged launch by launch; its labels are the union (worst severity)."""
    try:
        diagnoses = [diagnose(run) for run in opener(case.path)]
    except Exception as e:  # noqa: BLE001 - a run that does not open is a scored miss, reported as unreadable
        return Observation({}, error=f"{type(e).__name__}: {e}")
    pairs = [(f.rule_id, f.severity) for d in diagnoses for f in d.findings]
    verdicts = [t for d in diagnoses if (t := verdict_text(d)) is not None]
    return Observation(worst_severity(pairs, to_label), steps=sum(d.steps for d in diagnoses),
                       verdict="; ".join(verdicts) if verdicts else None, launches=len(diagnoses))


def score_cases(name: str, cases: list[Case], to_label: Callable[[str], str | None]) -> CorpusScore:
    return score_corpus(name, cases, {c.name: observe(c, to_label) for c in cases})


def score_all(real_runs: Path = REAL_RUNS) -> list[CorpusScore]:
    """Every corpus present: sample runs, the TRL-made runs, the real runs (skipped when ../shared is absent)."""
    out = []
    for name, folder in (("sample_runs", SAMPLE_RUNS), ("trl_corpus", TRL_CORPUS)):
        if (folder / "manifest.json").is_file():
            out.append(score_cases(name, manifest_cases(folder), rule_label))
    if (real_runs / "labels.json").is_file():
        out.append(score_cases("real_runs", label_cases(real_runs), symptom_of))
    return out
