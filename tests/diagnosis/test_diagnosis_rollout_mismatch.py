"""TRL's and verl's rollout-vs-training keys under our names, and the rules that read them: the first-step
check from a serving engine's gap (IS weight, log-prob and probability differences) and the truncation rule
from the terminated length. Runs are written with the real RunWriter; numbers are worked out here."""

from __future__ import annotations

import numpy as np
import pytest

from collectors import RunWriter, load_run
from collectors.readers.keymap import canonical_name
from collectors.schema import METRICS
from dashboard.diagnosis import diagnose


@pytest.mark.parametrize(("key", "ours"), [
    # TRL 1.16 GRPOTrainer (_metrics keys), as transformers' loggers prefix them or not
    ("sampling/sampling_logp_difference/max", "policy/rollout_logprob_abs_diff_max"),
    ("train/sampling/sampling_logp_difference/mean", "policy/rollout_logprob_abs_diff"),
    ("completions/mean_terminated_length", "completions/terminated_len_mean"),
    ("train/completions/mean_terminated_length", "completions/terminated_len_mean"),
    # verl with rollout.calculate_log_probs
    ("training/rollout_probs_diff_mean", "policy/rollout_prob_abs_diff"),
    ("training/rollout_probs_diff_max", "policy/rollout_prob_abs_diff_max"),
])
def test_rollout_mismatch_and_terminated_length_keys_map_to_schema_names(key, ours):
    assert ours in METRICS and canonical_name(key) == ours


@pytest.mark.parametrize("key", ["sampling/importance_sampling_ratio/min", "sampling/importance_sampling_ratio/max",
                                 # its level follows the run's config (collectors/levels.py, tests/collectors/test_levels.py)
                                 "sampling/importance_sampling_ratio/mean",
                                 "completions/min_terminated_length", "completions/max_terminated_length",
                                 "training/rollout_probs_diff_std"])
def test_keys_without_a_faithful_twin_stay_under_their_own_name(key):
    # the IS ratio's min/max are bounded by TRL's clip (or 0 where masked); no canonical terminated min/max
    assert canonical_name(key) == key


def write(tmp_path, rows: dict[str, np.ndarray], config: dict | None = None, name: str = "r"):
    n = len(next(iter(rows.values())))
    with RunWriter(tmp_path / name, name=name, config=config or {"num_generations": 8}) as w:
        for i in range(n):
            w.log_step(i + 1, {k: float(v[i]) for k, v in rows.items()})
    return load_run(tmp_path / name)


def by_rule(d, rule_id):
    hit = [f for f in d.findings if f.rule_id == rule_id]
    assert hit, [(f.rule_id, f.title) for f in d.findings]
    return hit[0]


def base(n: int) -> dict[str, np.ndarray]:
    t = np.arange(n)
    return {"reward/mean": 0.3 + 0.4 * t / n, "reward/std": np.full(n, 0.4), "completions/len_mean": np.full(n, 40.0)}


def test_an_importance_weight_far_from_1_from_the_first_step_is_an_engine_mismatch(tmp_path):
    rows = base(30)
    # TRL's IS weight mean 0.80 on every step (|0.80 - 1| = 0.20 > 0.05), the per-token log-prob gap 0.25 nats
    # on average (> 0.1) with a largest token gap of 3.5 nats
    rows |= {"policy/rollout_is_weight_mean": np.full(30, 0.80), "policy/rollout_logprob_abs_diff": np.full(30, 0.25),
             "policy/rollout_logprob_abs_diff_max": np.full(30, 3.5)}
    f = by_rule(diagnose(write(tmp_path, rows)), "first_step_ratio")
    assert f.severity == "warning" and f.title == "The rollout engine's log-probs are far from the trainer's"
    texts = [e.text for e in f.evidence]
    assert any(t.startswith("|mean IS ratio - 1|: median 0.2 > 0.05") and "first logged step 1: 0.2)" in t
               for t in texts), texts
    assert "largest |log p rollout - log p train| on one token: median 3.5" in texts
    # the same extremes with the means within numerics (IS weight 0.99, gap 0.01 nats): nothing to report
    rows |= {"policy/rollout_is_weight_mean": np.full(30, 0.99), "policy/rollout_logprob_abs_diff": np.full(30, 0.01)}
    assert "first_step_ratio" not in {f.rule_id for f in diagnose(write(tmp_path, rows, name="ok")).findings}


def test_verl_probability_gap_is_judged_in_probabilities(tmp_path):
    rows = base(25) | {"policy/rollout_prob_abs_diff": np.full(25, 0.05),
                       "policy/rollout_prob_abs_diff_max": np.full(25, 0.9)}
    f = by_rule(diagnose(write(tmp_path, rows)), "first_step_ratio")
    assert f.evidence[0].metric == "policy/rollout_prob_abs_diff" and f.evidence[0].value == 0.05
    assert f.evidence[0].threshold == 0.03
    rows["policy/rollout_prob_abs_diff"] = np.full(25, 0.003)  # a bf16 rollout's typical gap
    assert "first_step_ratio" not in {f.rule_id for f in diagnose(write(tmp_path, rows, name="bf16")).findings}


def test_a_terminated_length_of_0_says_every_completion_was_cut(tmp_path):
    # 40 steps; the cut share logged as 0.85 (below the 0.9 that says "pinned") but no completion ended on 30
    # steps (terminated length 0), so the completions are pinned at the cap on those steps
    rows = base(40) | {"completions/truncated_frac": np.full(40, 0.85),
                       "completions/terminated_len_mean": np.r_[np.zeros(30), np.full(10, 12.0)]}
    f = by_rule(diagnose(write(tmp_path, rows)), "truncation")
    assert f.title == "Completions are pinned at the length cap"
    assert "no completion ended on 30 logged steps (completions/terminated_len_mean = 0)" in [e.text for e in f.evidence]
    # the reward climbs 0.3 -> 0.7: worth a look, not a stop
    assert f.severity == "warning"
    # with terminated lengths above 0 the same cut share is "many", not "pinned"
    rows["completions/terminated_len_mean"] = np.full(40, 12.0)
    f = by_rule(diagnose(write(tmp_path, rows, name="some_end")), "truncation")
    assert f.title == "Many completions are cut at the length cap"
