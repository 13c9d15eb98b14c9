"""The three labelled corpora the accuracy harness scores (scoring.py), read from their files.

- sample_runs/manifest.json and tests/fixtures/trl_corpus/manifest.json: rule ids (docs/TEAM-CONTRACT.md),
  `expected_rules` must fire at any severity, `allowed_rules` may fire at any severity, any other critical is
  false, and the healthy run (symptom "none") may raise nothing above info.
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

from dashboard.diagnosis.engine import diagnose
from dashboard.diagnosis.registry import symptom_of
from dashboard.diagnosis.scoring import Case, CorpusScore, Observation, score_corpus, worst_severity

ROOT = Path(__file__).resolve().parents[2]
SAMPLE_RUNS = ROOT / "sample_runs"
TRL_CORPUS = ROOT / "tests" / "fixtures" / "trl_corpus"
REAL_RUNS = ROOT.parent / "shared" / "fixtures" / "real-runs"


def manifest_cases(folder: Path) -> list[Case]:
    """Cases from a manifest.json in the form of sample_runs/manifest.json (labels are rule ids)."""
    runs = json.loads((folder / "manifest.json").read_text())["runs"]
    out = []
    for name, spec in runs.items():
        expected = tuple((r,) for r in spec["expected_rules"])
        allowed = frozenset(spec.get("allowed_rules", []))
        out.append(Case(name, str(folder / spec["path"]), expected, allowed,
                        critical_ok=allowed | set(spec["expected_rules"]), hit_at="info",
                        healthy=spec.get("symptom") == "none"))
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
    """The one-line verdict as text, whatever shape the engine gives it (absent: None)."""
    v = getattr(diagnosis, "verdict", None)
    if v is None or isinstance(v, str):
        return v
    if hasattr(v, "to_dict"):
        return " ".join(str(x) for x in v.to_dict().values() if isinstance(x, str))
    return str(v)


def observe(case: Case, to_label: Callable[[str], str | None], opener: Callable[[str], Any] | None = None
            ) -> Observation:
    """Open and diagnose the case's run; labels through `to_label` (identity for rule ids, symptom_of)."""
    if opener is None:
        from collectors import open_run as opener
    try:
        run = opener(case.path)
        d = diagnose(run)
    except Exception as e:  # noqa: BLE001 - a run that does not open is a scored miss, reported as unreadable
        return Observation({}, error=f"{type(e).__name__}: {e}")
    labels = worst_severity(((f.rule_id, f.severity) for f in d.findings), to_label)
    return Observation(labels, steps=d.steps, verdict=verdict_text(d))


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
