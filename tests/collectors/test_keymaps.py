"""NeMo-RL, slime, AReaL, prime-rl and ms-swift logs (tests/fixtures/framework_logs.py: written as each framework's
logger writes them) under the canonical names, and the mismatch they show judged by first_step_ratio: a per-token
gap rising from step 1 is a finding, a steady bf16-sized one is not. The key maps themselves: no two give one key
two meanings."""

from __future__ import annotations

import math

import pytest
from fixtures import framework_logs as F

from collectors.readers.keymaps import FAMILIES
from collectors.schema import METRICS
from collectors.sources import open_run
from dashboard.diagnosis import diagnose

GAP20 = 0.002 * 20  # the rising gap's last value (framework_logs.rising)


def test_every_map_targets_the_schema_and_no_key_means_two_things():
    seen: dict[str, tuple[str, str]] = {}
    for family, table in FAMILIES.items():
        for key, ours in table.items():
            assert ours in METRICS, (family, key, ours)
            if key in seen:
                assert seen[key][1] == ours, (key, seen[key], (family, ours))
            seen.setdefault(key, (family, ours))


# framework -> (what its rising-gap log reads as at its last step: {canonical column: value})
LAST = {
    "nemo_rl": {"policy/rollout_exp_logprob_abs_diff": math.exp(GAP20), "policy/rollout_kl": GAP20 ** 2 / 2,
                "policy/rollout_is_ratio_mean": 1 + GAP20 ** 2 / 2, "optim/lr": 1e-6, "policy/ratio_mean": 1.0,
                "completions/truncated_frac": 0.1, "completions/len_mean": 369.0, "reward/mean": 0.49,
                "policy/kl_ref": 0.001, "policy/entropy": 0.6 - 0.005 * 19},
    "slime": {"policy/rollout_logprob_abs_diff": GAP20, "policy/rollout_is_ratio_mean": 1 + GAP20 ** 2 / 2,
              "policy/rollout_is_masked_frac": 0.0, "policy/clipfrac": 0.002, "loss/policy": 0.01,
              "completions/truncated_frac": 0.05, "completions/len_mean": 919.0, "completions/len_max": 4096.0,
              "reward/mean": 0.59, "policy/entropy": 0.7 - 0.004 * 19},
    "areal": {"policy/rollout_kl": GAP20 ** 2 / 2, "policy/ratio_mean": 1.0, "policy/clipfrac": 0.0,
              "policy/rollout_is_masked_frac": 0.0, "reward/mean": 0.54, "completions/truncated_frac": 0.04,
              "policy/entropy": 0.65 - 0.004 * 19},
    "prime_rl": {"policy/rollout_kl": GAP20 ** 2 / 2, "policy/rollout_is_masked_frac": 0.001, "optim/lr": 1e-6,
                 "policy/entropy": 0.5 - 0.003 * 19},
    "ms_swift": {"policy/rollout_kl": GAP20 ** 2 / 2, "policy/rollout_is_weight_mean": 1.0,
                 "policy/rollout_is_masked_frac": 0.0, "reward/mean": 0.49, "groups/zero_std_frac": 0.2,
                 "completions/truncated_frac": 0.02},
}
# their own names that stay extra columns (no faithful twin), as logged
EXTRA = {"nemo_rl": ("train/probs_ratio_clamped", "train/natural_termination_rate"),
         "slime": ("train/tis_abs", "train/ois", "rollout/zero_std/count_0.0"),
         "areal": ("ppo_actor/update/behave_imp_weight/avg", "ppo_actor/update/behave_approx_kl/avg"),
         "prime_rl": ("masked_mismatch_kl/mean",),
         "ms_swift": ("train/rollout_correction/kl", "train/rollout_correction/chi2_token")}
# the step each framework starts counting from (AReaL's global_step and slime's rollout id count from 0)
FIRST = {"nemo_rl": 1, "slime": 0, "areal": 0, "prime_rl": 1, "ms_swift": 1}


@pytest.fixture(scope="module", params=sorted(LAST))
def logs(request, tmp_path_factory):
    name = request.param
    folder = tmp_path_factory.mktemp(name)
    write = getattr(F, name)
    return name, open_run(write(folder / "rising", F.rising())), open_run(write(folder / "steady", F.steady()))


def test_each_framework_maps_to_the_schema(logs):
    name, run, _ = logs
    m = run.metrics
    assert run.problems == [] and len(m) == 20 and m["step"].iloc[0] == FIRST[name]
    last = m.iloc[-1]
    for column, value in LAST[name].items():
        assert last[column] == pytest.approx(value, rel=1e-6), (name, column)
    for extra in EXTRA[name]:
        assert extra in m.columns, (name, extra)


def test_a_gap_rising_from_step_1_is_a_mismatch(logs):
    name, run, _ = logs
    (f,) = [f for f in diagnose(run).findings if f.rule_id == "first_step_ratio"]
    assert f.severity == "warning" and f.title == "The rollout engine's log-probs are far from the trainer's"
    assert any(" grows from " in e.text and "rising step after step" in e.text for e in f.evidence), name


def test_a_steady_bf16_gap_is_no_alarm(logs):
    name, _, run = logs
    d = diagnose(run)
    assert "first_step_ratio" not in {f.rule_id for f in d.findings}, name
    assert "first_step_ratio" not in {n.rule_id for n in d.not_judged}  # judged: the gap is logged


def test_ms_swift_level_follows_its_mode(tmp_path):
    # sequence_truncate spreads a clamped geometric mean over the tokens: neither a per-token weight nor a
    # product, so it keeps its own name; the clipped share is then a share of responses
    m = open_run(F.ms_swift(tmp_path / "seq", F.steady(), mode="sequence_truncate")).metrics
    assert "policy/rollout_is_weight_mean" not in m and "train/rollout_correction/is_weight_mean" in m
    assert m["policy/rollout_is_seq_masked_frac"].tolist() == [0.0] * 20


def test_the_mismatch_evidence_reads_in_chinese(logs, tmp_path):
    from dashboard.diagnosis.i18n import evidence_text, has_evidence

    _, run, _ = logs
    texts = [e.text for f in diagnose(run).findings if f.rule_id == "first_step_ratio" for e in f.evidence]
    assert texts and all(has_evidence(t, "zh") for t in texts), texts
    grow = next(t for t in texts if " grows from " in t)
    assert "逐步上升（Mann-Kendall p = " in evidence_text(grow, "zh") and " 倍" in evidence_text(grow, "zh")


def test_slime_through_wandb_counts_tied_groups_as_a_fraction(tmp_path):
    # 32 prompt groups a rollout (rollout_batch_size); slime logs a count per tied reward that occurs, none when
    # no group ties: step 0 has 4 groups all 0.0 and 2 all 1.0 -> 6 / 32; step 1 none -> 0; step 2 8 -> 0.25
    tied = [{"0.0": 4.0, "1.0": 2.0}, {}, {"0.0": 8.0}] + [{"0.0": 3.0}] * 17
    run = open_run(F.slime_wandb(tmp_path, F.rising(), tied))
    m = run.metrics
    assert run.problems == [] and m["step"].tolist() == list(range(20))  # rollout/step and train/step: one row
    assert m["groups/zero_std_frac"].tolist()[:3] == [6 / 32, 0.0, 0.25]
    assert m["policy/rollout_logprob_abs_diff"].iloc[-1] == pytest.approx(GAP20)
    assert m["completions/truncated_frac"].tolist() == [0.05] * 20
    assert "first_step_ratio" in {f.rule_id for f in diagnose(run).findings}


def test_a_jsonl_of_the_same_dicts_maps_alike(tmp_path):
    # a trainer's dicts dumped one per line (generic reader): the same maps, the same level placement
    import json

    path = tmp_path / "metrics.jsonl"
    path.write_text("".join(json.dumps({"step": s, "train/token_mult_prob_error": 1.01, "train/tis": 1.0,
                                        "mismatch_kl/all/mean": 5e-5, "ppo_actor/update/behave_approx_kl/avg": -5e-5})
                            + "\n" for s in (1, 2, 3)))
    m = open_run(path).metrics
    assert m["policy/rollout_exp_logprob_abs_diff"].tolist() == [1.01] * 3
    assert m["policy/rollout_is_ratio_mean"].tolist() == [1.0] * 3
    assert m["policy/rollout_kl"].tolist() == [5e-5] * 3  # prime-rl's; AReaL's negation does not overwrite it
