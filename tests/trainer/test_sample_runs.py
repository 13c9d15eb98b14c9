"""The bundled sample_runs/: every run loads cleanly with every column the trainer writes, the manifest
names existing folders and contract rule ids, and the samples stay bounded."""

import json

import pytest
from helpers.paths import REPO

from collectors import load_run
from collectors.schema import METRICS, SAMPLES
from grpo_core.scenarios import SCENARIOS

ROOT = REPO / "sample_runs"
RUNS = sorted(p.name for p in ROOT.iterdir() if p.is_dir()) if ROOT.is_dir() else []
# Absent by design: loss/kl and policy/kl_coef without a KL term (dapo preset, kl_mode none), the rollout
# correction's ratios and weights without a correction (no scenario turns one on), and the mismatch forms only
# other frameworks log (a KL estimate, the exp-gap); every other canonical column is written by grpo_core on
# every run.
OPTIONAL = {"loss/kl", "policy/kl_coef", "policy/rollout_kl", "policy/rollout_exp_logprob_abs_diff",
            *(c for c in METRICS if c.startswith("policy/rollout_is_"))}


def manifest() -> dict:
    return json.loads((ROOT / "manifest.json").read_text())


def test_there_is_a_run_for_every_scenario():
    assert set(SCENARIOS) <= set(RUNS)


@pytest.mark.parametrize("name", RUNS)
def test_run_loads_with_every_canonical_column(name):
    r = load_run(ROOT / name)
    assert r.problems == [] and r.meta.status == "finished", (r.problems, r.meta.status)
    missing = [c for c in METRICS if c not in r.metrics.columns and c not in OPTIONAL]
    assert missing == []
    assert r.metrics["step"].tolist() == list(range(len(r.metrics)))
    assert r.meta.name == name and r.meta.source == "grpo_core"
    samples = r.samples()
    assert len(samples) > 0 and set(SAMPLES) <= set(samples.columns)
    assert (samples["step"] % 10 == 0).all()  # thinned by scripts/make_sample_runs.py


def test_manifest_names_existing_folders_and_contract_rules():
    doc = manifest()
    assert doc["schema"] == 1 and set(doc["runs"]) == set(SCENARIOS)
    for name, spec in doc["runs"].items():
        assert (ROOT / spec["path"]).is_dir(), name
        assert spec["expected_rules"] == list(SCENARIOS[name].expected_rules)
        assert spec["allowed_rules"] == SCENARIOS[name].allowed_rules
        assert spec["symptom"] and spec["description"] and spec["command"].startswith("grpo-train --scenario")
    assert doc["runs"]["healthy"]["expected_rules"] == []


def test_sample_runs_stay_small():
    total = sum(f.stat().st_size for f in ROOT.rglob("*") if f.is_file())
    assert total < 8 * 2**20, f"sample_runs/ holds {total / 2**20:.1f} MiB"
