"""Diagnosis engine on hand-made runs written to disk with the real RunWriter: each rule fires on its
symptom with the numbers worked out here, stays quiet on a healthy-looking run, and never crashes on bad input."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest
from helpers.paths import REPO

from collectors import RunWriter, load_run
from dashboard.diagnosis import RULES, NotJudged, diagnose
from dashboard.diagnosis.cli import main as diagnose_main
from dashboard.diagnosis.series import episodes, rolling_median

CORE_CONFIG = {"rollout.group_size": 8, "rollout.temperature": 1.0, "algo.adv_mode": "group", "algo.epochs": 1,
               "algo.minibatches": 1, "algo.kl_mode": "loss", "optim.lr": 5e-4, "algo.old_logprob_source": "recompute"}


def healthy_series(n: int = 120, seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    t = np.arange(n)
    reward = np.clip(0.35 + 0.35 * t / n + rng.normal(0, 0.04, n), 0, 1)
    return {"reward/mean": reward, "reward/pass_rate": reward, "reward/std": np.full(n, 0.45),
            "reward/min": np.zeros(n), "reward/max": np.ones(n),
            "groups/zero_std_frac": np.clip(0.1 + rng.normal(0, 0.05, n), 0, 1),
            "groups/all_fail_frac": np.full(n, 0.05), "groups/all_pass_frac": np.full(n, 0.05),
            "completions/len_mean": 2.5 + rng.normal(0, 0.1, n), "completions/truncated_frac": np.zeros(n),
            "policy/entropy": 0.8 - 0.2 * t / n + rng.normal(0, 0.02, n),
            "policy/kl_ref": np.r_[0.0, np.full(n - 1, 0.1) + rng.normal(0, 0.02, n - 1)],
            "policy/clipfrac": np.zeros(n), "policy/ratio_first_step": np.ones(n),
            "policy/ratio_first_step_max_dev": np.zeros(n), "policy/rollout_logprob_abs_diff": np.full(n, 5e-8),
            "adv/std": np.full(n, 0.9), "optim/grad_norm": 3 + rng.normal(0, 0.5, n),
            "loss/total": rng.normal(0, 0.01, n), "loss/policy": rng.normal(0, 0.01, n)}


def write(tmp_path, series: dict[str, np.ndarray], config=None, samples=None, name="r", evals=None):
    path = tmp_path / name
    n = len(next(iter(series.values())))
    with RunWriter(path, name=name, config=CORE_CONFIG if config is None else config) as w:
        for i in range(n):
            row = {k: float(v[i]) for k, v in series.items()}
            if evals is not None and i in evals:
                row["eval/pass_rate"] = evals[i]
            w.log_step(i, row)
        if samples is not None:
            w.log_samples(samples)
    return load_run(path)


def fired(d, severity=("warning", "critical")):
    return {f.rule_id for f in d.findings if f.severity in severity}


def by_rule(d, rule_id):
    hits = [f for f in d.findings if f.rule_id == rule_id]
    assert hits, f"{rule_id} did not fire; findings: {[(f.rule_id, f.title) for f in d.findings]}"
    return hits[0]


def test_healthy_run_raises_nothing(tmp_path):
    d = diagnose(write(tmp_path, healthy_series()))
    assert fired(d) == set(), [(f.rule_id, f.title, [e.text for e in f.evidence]) for f in d.findings]
    assert len(d.config_answers) == 5 and d.config_answers[0].answer.startswith("per prompt group")


def test_flat_all_fail_reward_points_at_zero_variance_and_difficulty(tmp_path):
    s = healthy_series()
    n = len(s["reward/mean"])
    s["reward/mean"] = s["reward/pass_rate"] = np.r_[np.full(n // 2, 0.02), np.full(n - n // 2, 0.03)]
    s["groups/zero_std_frac"] = np.full(n, 0.9)
    s["groups/all_fail_frac"] = np.full(n, 0.88)
    s["groups/all_pass_frac"] = np.full(n, 0.02)
    d = diagnose(write(tmp_path, s))
    flat = by_rule(d, "reward_flat")
    assert flat.severity == "critical" and flat.symptom == "reward does not move"
    assert [c.what for c in flat.checks] == ["the fraction of zero-variance groups", "the task difficulty",
                                             "the sampling temperature", "the verifier"]
    # 0.02 -> 0.03 is a significant step (Mann-Kendall) but far inside 0.1 x the reward's spread 0.45: flat
    assert abs(flat.evidence[0].value) < 0.015 and flat.evidence[0].threshold == pytest.approx(0.045)
    zv = by_rule(d, "zero_variance_groups")
    assert zv.severity == "critical" and "mostly all-fail" in zv.title
    assert zv.evidence[0].value == pytest.approx(0.9)
    sparse = by_rule(d, "sparse_reward")
    assert "near 0" in sparse.title
    assert "reward_constant" not in fired(d)


def test_constant_reward_points_at_the_verifier(tmp_path):
    s = healthy_series(40)
    for k in ("reward/mean", "reward/pass_rate", "reward/std", "reward/max"):
        s[k] = np.zeros(40)
    d = diagnose(write(tmp_path, s))
    f = by_rule(d, "reward_constant")
    assert f.checks[0].what == "the verifier" and f.step_range == (0, 39)


def test_first_step_ratio_fires_at_the_first_step(tmp_path):
    s = {k: v[:1] for k, v in healthy_series().items()}
    s["policy/ratio_first_step_max_dev"] = np.array([0.03])
    s["policy/rollout_logprob_abs_diff"] = np.array([3e-3])
    f = by_rule(diagnose(write(tmp_path, s)), "first_step_ratio")
    assert f.severity == "critical" and f.step_range == (0, 0)
    assert f.evidence[0].value == pytest.approx(0.03) and f.evidence[0].threshold == pytest.approx(0.01)


def test_kl_explosion_is_found_within_a_few_steps_of_its_onset(tmp_path):
    s = healthy_series(80)
    s["policy/kl_ref"] = np.r_[np.full(40, 0.1), np.full(40, 3.0)]
    run = write(tmp_path, s)
    first_seen = None
    for last in range(35, 80):  # replay the run as it grew: when does the finding first appear?
        if "kl_clip_explode" in fired(diagnose(run.until(last))):
            first_seen = last
            break
    assert first_seen is not None and 40 <= first_seen <= 43


def test_a_kl_series_under_its_lowest_bar_can_fire_no_way():
    """kl._explosion skips a series whose values all sit at or under its lowest bar (floor, settled floor, level):
    each of its masks is empty there, so the skip changes nothing. Checked on series that touch the bar, with
    NaN and with a jump of 1e6x off a tiny level."""
    from dashboard.diagnosis import stats
    from dashboard.diagnosis.rules.kl import (
        KL_CATASTROPHIC,
        SERIES,
        SUSTAIN,
        SUSTAIN_SETTLED,
        _explosion,
        _jumps,
    )

    rng = np.random.default_rng(3)
    for metric, floor, settled, level in SERIES:
        bar = min(b for b in (floor, settled, level) if b is not None)
        for x in (np.full(80, bar), rng.uniform(0, bar, 80), np.r_[np.full(40, bar * 1e-6), np.full(40, bar)],
                  np.where(rng.random(80) < 0.2, np.nan, rng.uniform(0, bar, 80))):
            assert not _jumps(x, floor, sustain=SUSTAIN).any()
            if settled is not None:
                assert not _jumps(x, floor, settled, sustain=SUSTAIN_SETTLED).any()
            if level is not None:
                assert not stats.sustained(x > level, SUSTAIN).any()
            assert not (x >= KL_CATASTROPHIC).any()
            assert _explosion(metric, np.arange(80), x, floor, settled, level) is None
        # just over the bar it is judged (and a sustained jump off a tiny level fires)
        x = np.r_[np.full(40, bar * 1e-3), np.full(40, bar * 1.01)]
        assert _explosion(metric, np.arange(80), x, floor, settled, level) is not None


def test_kl_explosion_at_llm_scale_is_found_and_a_noisy_small_kl_is_not(tmp_path):
    # LLM runs sit far below our toy's KL: 0.01 nats for 60 steps, then 0.4 (40x) must fire
    s = healthy_series(100)
    s["policy/kl_ref"] = np.r_[np.full(60, 0.01), np.full(40, 0.4)]
    # while the reward keeps climbing through it, it is worth knowing, no more
    f = by_rule(diagnose(write(tmp_path, s, name="llm_up")), "kl_clip_explode")
    assert f.severity == "info" and "while the reward keeps rising" in f.title
    s["reward/mean"] = 0.5 + np.random.default_rng(1).normal(0, 0.04, 100)
    f = by_rule(diagnose(write(tmp_path, s, name="llm")), "kl_clip_explode")
    assert f.severity == "warning" and f.step_range[0] == 60  # from the first of 3 points in a row at 0.4
    assert "jumps to 0.4" in f.evidence[0].text
    # ... but a tiny KL wobbling 0.002 <-> 0.03 (15x) stays under the settled 0.05-nat floor
    s["policy/kl_ref"] = np.where(np.arange(100) % 20 < 10, 0.002, 0.03)
    assert "kl_clip_explode" not in fired(diagnose(write(tmp_path, s, name="wobble")))
    # ... and the climb off zero in the first steps needs the 0.5 floor, as before
    s["policy/kl_ref"] = np.r_[np.zeros(3), np.full(97, 0.3)]
    assert "kl_clip_explode" not in fired(diagnose(write(tmp_path, s, name="climb")))


def test_entropy_fast_collapse_is_critical_slow_decline_only_info(tmp_path):
    s = healthy_series(100)
    s["policy/entropy"] = np.r_[np.full(30, 1.0), np.linspace(1.0, 0.1, 10), np.full(60, 0.1)]
    f = by_rule(diagnose(write(tmp_path, s, name="climbs")), "entropy_collapse")
    assert f.severity == "info" and f.title == "Entropy falls while the reward climbs"
    s["reward/mean"] = 0.5 + np.random.default_rng(1).normal(0, 0.04, 100)
    f = by_rule(diagnose(write(tmp_path, s, name="fast")), "entropy_collapse")
    assert f.severity == "critical" and "fell from 1 to below half of it" in f.evidence[0].text
    assert "and to 0.1 (10% of its early level) by step" in f.evidence[0].text
    s["policy/entropy"] = np.linspace(1.0, 0.4, 100)  # loses 60% over 100 steps: slow
    d = diagnose(write(tmp_path, s, name="slow"))
    assert "entropy_collapse" not in fired(d) and by_rule(d, "entropy_collapse").severity == "info"


def test_detached_advantage_and_sign_flip_are_no_learning(tmp_path):
    s = healthy_series()
    n = len(s["reward/mean"])
    s["reward/mean"] = s["reward/pass_rate"] = np.full(n, 0.4)
    s["optim/grad_norm"] = np.zeros(n)
    f = by_rule(diagnose(write(tmp_path, s, name="detached")), "no_learning")
    assert f.severity == "critical" and "gradient does not reach" in f.title
    assert f.checks[0].what == "a detached advantage or policy term"
    s = healthy_series()
    s["reward/mean"] = s["reward/pass_rate"] = np.linspace(0.5, 0.2, n)
    f = by_rule(diagnose(write(tmp_path, s, name="sign")), "no_learning")
    assert "wrong way" in f.title and f.checks[0].what == "the sign"


def test_eval_falling_while_train_rises(tmp_path):
    s = healthy_series(100)
    evals = {0: 0.5, 20: 0.5, 40: 0.4, 60: 0.3, 80: 0.2, 99: 0.2}
    f = by_rule(diagnose(write(tmp_path, s, evals=evals)), "eval_diverges")
    assert f.evidence[0].text.startswith("eval/pass_rate fell from 0.5 to 0.2")
    assert f.severity == "critical"  # lost 0.3 > 0.2


def test_non_finite_names_metric_and_step(tmp_path):
    s = healthy_series(30)
    s["loss/total"][7] = math.inf
    s["optim/grad_norm"][9] = math.nan
    f = by_rule(diagnose(write(tmp_path, s)), "non_finite")
    assert f.step_range == (7, 9)
    assert [e.text for e in f.evidence] == ["loss/total: 1 NaN/inf value(s), first at step 7",
                                            "optim/grad_norm: 1 NaN/inf value(s), first at step 9"]


def test_no_update_after_dynamic_sampling_dropped_everything_is_not_a_nan(tmp_path):
    s = healthy_series(30)
    s["groups/dropped_frac"] = np.zeros(30)
    s["groups/dropped_frac"][5] = 1.0
    for k in ("loss/total", "loss/policy", "optim/grad_norm"):
        s[k][5] = math.nan
    assert "non_finite" not in fired(diagnose(write(tmp_path, s)))
    s["groups/dropped_frac"][5] = 0.5  # an update happened: its NaN loss is real
    assert "non_finite" in fired(diagnose(write(tmp_path, s, name="real")))


def test_a_null_is_not_a_nan_and_a_nan_on_a_sparse_row_is(tmp_path):
    """Our format keeps null ("not measured") and NaN apart, and the rule uses that, not a guess."""
    path = tmp_path / "sparse"
    with RunWriter(path, name="sparse", config=CORE_CONFIG) as w:
        for i in range(30):
            row = {"reward/mean": 0.5, "loss/total": 0.1, "optim/grad_norm": 1.0}
            if i == 4:
                del row["loss/total"]  # not measured on a row with a reward: no alarm
            if i == 9:
                del row["reward/mean"]  # a row without a reward whose loss is NaN: an alarm
                row["loss/total"] = math.nan
            w.log_step(i, row)
    run = load_run(path)
    assert run.nan_known and run.nan_at == {"loss/total": {9}}
    f = by_rule(diagnose(run), "non_finite")
    assert f.step_range == (9, 9) and f.evidence[0].text == "loss/total: 1 NaN/inf value(s), first at step 9"
    assert "non_finite" not in fired(diagnose(run.until(8)))  # and the replay carries the bookkeeping
    assert run.until(9).nan_at == {"loss/total": {9}}


def test_non_finite_judges_when_the_nan_bookkeeping_holds_an_empty_step(tmp_path):
    """A reader's NaN bookkeeping with a step of None or NaN (a row whose step was lost: issue 38 found one in a
    damaged part) is no step to match; the rule judges on the others instead of failing on int(None)."""
    path = tmp_path / "lost"
    with RunWriter(path, name="lost", config=CORE_CONFIG) as w:
        for i in range(30):
            w.log_step(i, {"reward/mean": 0.5, "loss/total": math.nan if i == 9 else 0.1, "optim/grad_norm": 1.0})
    run = load_run(path)
    run.nan_at = {"loss/total": {9, None, math.nan}}
    d = diagnose(run)
    assert "non_finite" not in {n.rule_id for n in d.not_judged}
    f = by_rule(d, "non_finite")
    assert f.step_range == (9, 9) and f.evidence[0].text == "loss/total: 1 NaN/inf value(s), first at step 9"


def test_a_loss_nan_from_the_first_step_is_found(tmp_path):
    s = healthy_series(30)
    s["loss/total"] = np.full(30, math.nan)  # a column of nothing but NaN is not "not logged"
    f = by_rule(diagnose(write(tmp_path, s)), "non_finite")
    assert f.step_range == (0, 29) and "loss/total: 30 NaN/inf" in f.evidence[0].text


def test_almost_every_group_tied_is_never_healthy_and_a_reward_range_never_says_solved(tmp_path):
    s = healthy_series(120)
    for k in ("reward/pass_rate", "groups/all_pass_frac", "groups/all_fail_frac"):
        s.pop(k, None)
    # the reward climbs 0.35 -> 0.70 while 90% of groups score alike all run, and nothing says whether they pass
    # or fail (no split, no pass rate): not "the task saturates", and critical while the reward climbs
    s["groups/zero_std_frac"] = np.full(120, 0.9)
    d = diagnose(write(tmp_path, s, name="tied"))
    f = by_rule(d, "zero_variance_groups")
    assert f.severity == "critical" and f.title == "Zero-variance groups dominate" and "saturates" not in f.title
    assert d.verdict.kind == "not_learning" and d.verdict.reason.startswith("almost every group tied over most of the run")
    # 60% tied while it climbs: a warning (issue 37: more than half the rollout compute teaches nothing)
    s["groups/zero_std_frac"] = np.full(120, 0.6)
    d = diagnose(write(tmp_path, s, name="some"))
    assert by_rule(d, "zero_variance_groups").severity == "warning"
    # a split that says the tied groups all pass, growing 0.1 -> 0.9 as the reward climbs, is a run saturating
    # by learning: info
    grow = np.linspace(0.1, 0.9, 120)
    s["groups/zero_std_frac"], s["groups/all_pass_frac"] = grow, grow - 0.02
    f = by_rule(diagnose(write(tmp_path, s, name="solved")), "zero_variance_groups")
    assert f.severity == "info" and f.title.endswith("the task saturates")
    # 0.9 all-pass from the first steps on is a task too easy for the policy: a warning, while it climbs too
    s["groups/zero_std_frac"], s["groups/all_pass_frac"] = np.full(120, 0.9), np.full(120, 0.88)
    f = by_rule(diagnose(write(tmp_path, s, name="too_easy")), "zero_variance_groups")
    assert f.severity == "warning" and f.evidence[-1].text == ("90% of groups tied already at the first steps: "
                                                               "too easy for this policy from the start")


def test_a_significant_fall_is_judged_by_its_size_against_the_reward_scale(tmp_path):
    s = healthy_series(400)
    t = np.arange(400)
    # a 0/1 score held at 0.955 slides down by 0.009 over 400 steps, noise 0.002: Mann-Kendall is sure (p far
    # below 0.001), and TRL's reward_std (the mean within-group std) logs 0.03 as most groups tie
    s["reward/mean"] = s["reward/pass_rate"] = 0.955 - 0.009 * t / 399 + np.random.default_rng(6).normal(0, 0.002, 400)
    s["reward/std"] = np.full(400, 0.03)
    # the 0/1 reward's own spread at p = 0.95 is sqrt(0.95 x 0.05) = 0.218: a fall of 0.009 is 4% of it, under
    # FALL_BAND 0.2 -> nothing
    d = diagnose(write(tmp_path, s, name="binary"))
    assert "no_learning" not in fired(d)
    # a graded score (no pass rate) with the same numbers: the scale is the logged 0.03; a fall of 0.009 is 0.3 of
    # it (above 0.2: a warning) but under FALL_CRIT_BAND 0.5 (0.015): never critical on the p-value alone
    del s["reward/pass_rate"]
    assert by_rule(diagnose(write(tmp_path, s, name="graded")), "no_learning").severity == "warning"
    # the same slide 0.955 -> 0.915 (0.04, above 0.015) is critical
    s["reward/mean"] = 0.955 - 0.04 * t / 399 + np.random.default_rng(6).normal(0, 0.002, 400)
    assert by_rule(diagnose(write(tmp_path, s, name="big")), "no_learning").severity == "critical"


def test_a_metric_never_computed_is_not_a_divergence(tmp_path):
    s = healthy_series(30)
    # TRL at beta = 0 logs kl as NaN on every row while the loss and the gradient norm stay finite: not computed
    s["policy/kl_ref"] = np.full(30, math.nan)
    assert "non_finite" not in fired(diagnose(write(tmp_path, s, name="beta0")))
    # the same NaNs after finite values, or an inf anywhere, are a divergence
    s["policy/kl_ref"][:10] = 0.01
    f = by_rule(diagnose(write(tmp_path, s, name="late_nan")), "non_finite")
    assert f.evidence[0].text == "policy/kl_ref: 20 NaN/inf value(s), first at step 10"
    s["policy/kl_ref"] = np.full(30, math.nan)
    s["policy/kl_ref"][12] = math.inf
    # (the inf at 12 and the 17 NaNs after it: the leading NaNs end where a value was logged)
    assert by_rule(diagnose(write(tmp_path, s, name="inf")), "non_finite").evidence[0].text == \
        "policy/kl_ref: 18 NaN/inf value(s), first at step 12"
    # a leading NaN where the loss is NaN too is not "not computed": the loss rows raise it themselves
    s["policy/kl_ref"] = np.full(30, math.nan)
    s["loss/total"][:3] = s["loss/policy"][:3] = s["optim/grad_norm"][:3] = math.nan
    f = by_rule(diagnose(write(tmp_path, s, name="all_nan")), "non_finite")
    assert "policy/kl_ref: 3 NaN/inf value(s), first at step 0" in [e.text for e in f.evidence]


def test_the_same_answer_whatever_the_prompt_is_mode_collapse(tmp_path):
    s = healthy_series(30)
    rows = []
    for step in range(25, 30):
        for g in range(8):  # 8 prompts x 4 responses; 7 of the 8 prompts get "positive" on every response
            for k in range(4):
                text = "positive" if g < 7 else ["negative", "neutral", "positive", "negative"][k]
                rows.append({"step": step, "group": g, "sample": k, "prompt": f"review {g}", "completion": text,
                             "reward": float(g % 2)})
    # 29 of 32 responses (0.906) are "positive", over 8 prompts: at or above 4 in 5 over at least 4 prompts
    f = by_rule(diagnose(write(tmp_path, s, samples=pd.DataFrame(rows), name="one_class")), "low_diversity")
    assert any(e.text.startswith("90.6% of a step's responses are one text, whatever the prompt: 'positive' "
                                 "answered 8 different prompts") for e in f.evidence), [e.text for e in f.evidence]
    # each prompt with its own answer (the groups still tie): no such evidence
    for r in rows:
        r["completion"] = f"answer {r['group']}"
    d = diagnose(write(tmp_path, s, samples=pd.DataFrame(rows), name="per_prompt"))
    texts = [e.text for f in d.findings for e in f.evidence]
    assert not any("whatever the prompt" in t for t in texts)


def samples_for(rewards_by_answer: dict[str, float], steps=range(3)) -> pd.DataFrame:
    rows = []
    for step in steps:
        for g, (a, b) in enumerate([(3, 4), (2, 5), (1, 1), (6, 2)]):
            for k in range(4):
                answer = str(a + b) if k < 3 else "9"
                rows.append({"step": step, "prompt_id": f"p{g}", "group": g, "sample": k, "prompt": f"{a}+{b}=",
                             "completion": answer, "reward": rewards_by_answer.get("right" if k < 3 else "wrong", 0.0),
                             "passed": False, "advantage": 0.0, "num_tokens": 1, "truncated": False})
    return pd.DataFrame(rows)


def test_verifier_suspect_cites_right_answers_with_reward_zero(tmp_path):
    s = {k: v[:3] for k, v in healthy_series().items()}
    d = diagnose(write(tmp_path, s, samples=samples_for({"right": 0.0, "wrong": 0.0}), name="broken"))
    f = by_rule(d, "verifier_suspect")
    assert f.severity == "critical"  # 36 of 48 reward-0 answers are the sum: 75%
    assert "36 of 48" in f.evidence[0].text
    assert f.examples[0]["prompt"] == "3+4=" and f.examples[0]["completion"] == "7"
    # each group answers its sum 3 times at each of 3 steps: the examples are its 4 distinct (prompt, answer) pairs
    # (3+4=7, 2+5=7, 1+1=2, 6+2=8), each once, not the first 5 rows (three of them one pair)
    assert [(e["prompt"], e["completion"]) for e in f.examples] == [("3+4=", "7"), ("2+5=", "7"), ("1+1=", "2"),
                                                                    ("6+2=", "8")]
    ok = diagnose(write(tmp_path, s, samples=samples_for({"right": 1.0, "wrong": 0.0}), name="ok"))
    assert "verifier_suspect" not in fired(ok)


def test_config_audit(tmp_path):
    s = healthy_series(30)
    cfg = dict(CORE_CONFIG, **{"rollout.group_size": 2, "algo.epochs": 4, "algo.minibatches": 2})
    d = diagnose(write(tmp_path, s, config=cfg))
    assert {"small_group", "config_small_group_adv", "config_many_reuses"} <= fired(d)
    assert "8 optimizer steps per rollout" in by_rule(d, "config_many_reuses").evidence[0].text
    verl = {"algorithm.use_kl_in_reward": True, "actor_rollout_ref.actor.use_kl_loss": True}
    d = diagnose(write(tmp_path, s, config=verl, name="verl"))
    assert "config_kl_twice" in fired(d)
    # verl: 2 actor epochs x (1024 / 256) mini-batches = 8 steps; the critic's 1 epoch is not the actor's
    verl = {"data.train_batch_size": 1024, "critic.ppo_epochs": 1, "actor_rollout_ref.actor.ppo_epochs": 2,
            "actor_rollout_ref.actor.ppo_mini_batch_size": 256, "critic.ppo_mini_batch_size": 1024}
    f = by_rule(diagnose(write(tmp_path, s, config=verl, name="verl_reuse")), "config_many_reuses")
    assert f.evidence[0].value == 8 and "actor_rollout_ref.actor.ppo_epochs = 2" in f.evidence[0].text


class Bare:
    """A run from a reader with odd data: unsorted and duplicated steps, strings, no config, no samples."""

    def __init__(self, frame):
        self.metrics = frame
        self.meta = None

    def samples(self):
        raise OSError("no samples here")


@pytest.mark.parametrize("frame", [
    pd.DataFrame({"step": []}),
    pd.DataFrame({"step": [0, 1, 2], "reward/mean": [0.1, 0.2, 0.3]}),
    pd.DataFrame({"step": [5, 1, 3, 3, 2], "reward/mean": ["0.1", "x", None, 0.4, np.inf]}),
    pd.DataFrame({"step": np.arange(50), "reward/mean": np.full(50, np.nan), "policy/entropy": np.zeros(50)}),
    pd.DataFrame({"step": np.arange(50)[::-1], **{k: v[:50] for k, v in healthy_series(50).items()}}),
])
def test_bad_input_gives_findings_or_reasons_never_a_crash(frame):
    d = diagnose(Bare(frame))
    assert not [n for n in d.not_judged if "rule failed" in n.reason]
    json.dumps(d.to_dict(), allow_nan=False)  # what the CLI and the app show is well-formed
    if len(frame) < 20 and "reward/mean" in frame:
        assert any(n.rule_id == "reward_flat" and "this rule needs 20" in n.reason for n in d.not_judged)


def test_missing_metric_is_not_judged_with_its_name():
    d = diagnose(Bare(pd.DataFrame({"step": np.arange(30), "reward/mean": np.linspace(0, 1, 30)})))
    reasons = {n.rule_id: n.reason for n in d.not_judged}
    assert reasons["entropy_collapse"] == "policy/entropy is not logged by this run"
    assert reasons["first_step_ratio"].startswith("neither policy/ratio_first_step")


def test_a_failing_rule_becomes_not_judged(monkeypatch):
    from dashboard.diagnosis.registry import Rule

    def broken(d):
        raise ZeroDivisionError("boom")

    monkeypatch.setitem(RULES, "broken", Rule("broken", "test", broken))
    d = diagnose(Bare(pd.DataFrame({"step": [0]})))
    assert NotJudged("broken", "the rule failed on this run: ZeroDivisionError: boom") in d.not_judged


def test_series_helpers_by_hand():
    assert episodes(np.array([1, 1, 1, 0, 1, 1, 0, 0, 0, 0, 1], bool), min_len=3, cooldown=2) == [(0, 5)]
    assert episodes(np.array([1, 1, 0, 0, 0, 1, 1], bool), min_len=2, cooldown=2) == [(0, 1), (5, 6)]
    assert list(rolling_median(np.array([1.0, 3.0, 2.0, 10.0]), 3)) == [1.0, 2.0, 2.0, 3.0]
    # by hand, window 4 (min_periods 2): NaN, then [1, 3] -> 2, [1, 3, nan] -> 2, [1, 3, nan, 10] -> 3,
    # [3, nan, 10, 4] -> 4, [nan, 10, 4, nan] -> 7, [10, 4, nan, nan] -> 7, [4, nan, nan, nan] -> NaN (one value)
    x = np.array([1.0, 3.0, np.nan, 10.0, 4.0, np.nan, np.nan, np.nan])
    assert np.array_equal(rolling_median(x, 4), [np.nan, 2.0, 2.0, 3.0, 4.0, 7.0, 7.0, np.nan], equal_nan=True)


@pytest.mark.parametrize("seed", range(4))
def test_rolling_median_equals_pandas_on_every_path(seed):
    """bottleneck's moving median (series without an inf; shorter than the window, or than half of it, included)
    and pandas' own for a series with an inf: every path gives pandas' rolling median exactly."""
    rng = np.random.default_rng(seed)
    for _ in range(150):
        window = int(rng.choice([1, 2, 3, 4, 5, 8, 20, 50]))
        x = rng.normal(size=int(rng.integers(0, 4 * window + 10)))
        if rng.random() < 0.5:
            x[rng.random(len(x)) < 0.2] = np.nan
        if rng.random() < 0.2:
            x[rng.random(len(x)) < 0.1] = np.inf
        want = pd.Series(x, dtype=np.float64).rolling(window, min_periods=max(1, window // 2)).median().to_numpy()
        assert np.array_equal(rolling_median(x, window), want, equal_nan=True), (window, x)


def test_cli_text_json_exit_codes(tmp_path, capsys):
    s = healthy_series(30)
    s["loss/total"][3] = math.inf
    write(tmp_path, s, name="bad")
    write(tmp_path, healthy_series(), name="good")
    assert diagnose_main([str(tmp_path / "good")]) == 0
    out = capsys.readouterr().out
    assert "no findings" in out and "verdict: healthy: the reward rises" in out
    assert diagnose_main([str(tmp_path / "bad")]) == 0  # findings alone do not fail without --fail-on
    out = capsys.readouterr().out
    assert "[CRITICAL] NaN/inf in 1 metric(s) from step 3" in out and "check first:" in out
    assert diagnose_main([str(tmp_path / "bad"), "--fail-on", "critical"]) == 1
    assert diagnose_main([str(tmp_path / "good"), "--fail-on", "warning"]) == 0
    capsys.readouterr()
    assert diagnose_main([str(tmp_path / "bad"), "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc[str(tmp_path / "bad")]["verdict"]["kind"] == "unstable"
    f = doc[str(tmp_path / "bad")]["findings"][0]
    assert f["rule_id"] == "non_finite" and f["step_range"] == [3, 3]
    assert diagnose_main([str(tmp_path / "missing")]) == 2
    assert str(tmp_path / "missing") in capsys.readouterr().err


def test_cli_until_step_diagnoses_the_run_as_it_stood(tmp_path, capsys):
    s = healthy_series(30)
    s["loss/total"][3] = math.inf
    write(tmp_path, s, name="bad")
    # 3 steps: nothing fired, but that is no clean bill of health: exit 3, and the verdict says why
    assert diagnose_main([str(tmp_path / "bad"), "--until-step", "2", "--fail-on", "critical"]) == 3
    out = capsys.readouterr().out
    assert "== " + str(tmp_path / "bad") + ": 3 steps (last 2)" in out and "no findings" not in out
    assert "verdict: can't judge yet: only 3 logged step(s) with a reward; the trend tests need 20" in out
    assert diagnose_main([str(tmp_path / "bad"), "--until-step", "3", "--fail-on", "critical"]) == 1
    assert "NaN/inf in 1 metric(s) from step 3" in capsys.readouterr().out
    assert diagnose_main([str(tmp_path / "bad"), "--until-step", "3", "--watch"]) == 2
    assert "--watch and --until-step" in capsys.readouterr().err


def test_cli_watch_prints_new_findings_once_and_stops_on_a_finished_run(tmp_path, capsys):
    s = healthy_series(30)
    s["loss/total"][3] = math.inf
    write(tmp_path, s, name="bad")
    assert diagnose_main([str(tmp_path / "bad"), "--watch", "--interval", "0.01"]) == 0
    out = capsys.readouterr().out
    assert out.count("new finding") == 1 and "NaN/inf" in out


def test_group_rules_apply_only_to_group_baseline_estimators(tmp_path):
    s = healthy_series(30)
    # verl PPO with a GAE critic: one response per prompt, and verl's config still carries norm_adv_by_std_in_grpo
    ppo = {"algorithm.adv_estimator": "gae", "actor_rollout_ref.rollout.n": 1,
           "algorithm.norm_adv_by_std_in_grpo": True}
    d = diagnose(write(tmp_path, s, config=ppo, name="gae"))
    assert not {"small_group", "config_small_group_adv"} & {f.rule_id for f in d.findings}
    why = {n.rule_id: n.reason for n in d.not_judged}
    assert why["small_group"] == ("algorithm.adv_estimator = gae has no group baseline: group statistics do "
                                  "not apply")
    # the same config under GRPO with n = 2 is a group of two
    d = diagnose(write(tmp_path, s, config=dict(ppo, **{"algorithm.adv_estimator": "grpo",
                                                        "actor_rollout_ref.rollout.n": 2}), name="grpo2"))
    assert {"small_group", "config_small_group_adv"} <= fired(d)


# OpenRLHF's argparse names (openrlhf/cli/train_ppo_ray.py), as its wandb logger stores them: flat, top level.
OPENRLHF_GRPO = {"advantage_estimator": "group_norm", "n_samples_per_prompt": 8, "use_kl_loss": True,
                 "init_kl_coef": 0.001, "kl_estimator": "k3", "max_epochs": 1, "rollout_batch_size": 128,
                 "train_batch_size": 128, "micro_train_batch_size": 4, "use_dynamic_batch": False}


def test_config_audit_openrlhf(tmp_path):
    s = healthy_series(30)
    d = diagnose(write(tmp_path, s, config=OPENRLHF_GRPO, name="orl"))
    not_judged = {n.rule_id for n in d.not_judged}
    assert not {"config_kl_twice", "config_small_group_adv", "config_many_reuses"} & not_judged
    # G = 8, one epoch of 128 x 8 / 128 = 8 optimizer steps: many reuses, KL in one place by construction
    assert fired(d) & {"config_kl_twice", "config_small_group_adv"} == set()
    f = by_rule(d, "config_many_reuses")
    assert f.title == "Each rollout is reused 8 times"
    assert f.evidence[0].text == ("8 optimizer steps per rollout (max_epochs = 1, rollout_batch_size x "
                                  "n_samples_per_prompt / train_batch_size = 8): the last ones use rollouts 7 "
                                  "updates old")
    # G = 2 with group_norm: the std of two rewards; 32 x 2 / 64 = 1 step per epoch x 2 epochs = 2: fine
    small = dict(OPENRLHF_GRPO, n_samples_per_prompt=2, rollout_batch_size=32, train_batch_size=64, max_epochs=2)
    d = diagnose(write(tmp_path, s, config=small, name="orl_small"))
    assert "config_small_group_adv" in fired(d) and "config_many_reuses" not in fired(d)
    assert "G = 2 with advantage_estimator = group_norm" in by_rule(d, "config_small_group_adv").evidence[0].text
    # the same G = 2 under dr_grpo / rloo divides by no group std: nothing to warn about
    for est in ("dr_grpo", "rloo", "reinforce_baseline"):
        d = diagnose(write(tmp_path, s, config=dict(small, advantage_estimator=est), name=f"orl_{est}"))
        assert "config_small_group_adv" not in fired(d), est
    # KL in the reward (use_kl_loss off) is still one place; dynamic batches leave only the epochs to count
    d = diagnose(write(tmp_path, s, config=dict(OPENRLHF_GRPO, use_kl_loss=False, use_dynamic_batch=True),
                       name="orl_reward_kl"))
    assert {"config_kl_twice", "config_many_reuses"} & (fired(d) | {n.rule_id for n in d.not_judged}) == set()


def test_every_rule_names_a_symptom_of_the_labels_vocabulary():
    from dashboard.diagnosis.registry import SYMPTOMS, symptom_of

    assert symptom_of("length_drift") == "length_effect"
    assert symptom_of("zero_variance_groups") == "zero_variance"
    assert symptom_of("config_kl_twice") is None  # a configuration audit reports no symptom
    assert symptom_of("no_such_rule") is None
    assert {symptom_of(r) for r in RULES} - {None} <= set(SYMPTOMS)


def test_stats_judge_a_series_against_its_own_noise():
    from dashboard.diagnosis import stats

    rng = np.random.default_rng(0)
    steps = np.arange(200)
    x = 0.1 * steps + rng.normal(0, 1.0, 200)
    assert stats.noise(x) == pytest.approx(1.0, abs=0.15)  # the slope does not count as noise
    t = stats.trend(steps, x)
    assert t.direction() == "up" and t.change == pytest.approx(19.9, rel=0.05)
    assert t.change_ci[0] < t.change < t.change_ci[1]
    flat = stats.trend(steps, rng.normal(0, 1.0, 200))
    assert flat.direction() == "flat" and flat.p > 0.05
    assert stats.trend(steps[:5], x[:5]) is None  # too few points: no verdict from nothing
    assert stats.trend(steps, np.full(200, 3.0)).direction() == "flat"
    # a 100,000-point series is tested on bin means (Theil-Sen is quadratic), with the same answer
    long = stats.trend(np.arange(100_000), 1e-4 * np.arange(100_000) + rng.normal(0, 1.0, 100_000))
    assert long.n <= stats.MAX_TREND_POINTS and long.direction() == "up" and long.change == pytest.approx(10, rel=0.1)
    assert stats.sustained(np.array([1, 0, 1, 1, 1, 0], bool), 3).tolist() == [0, 0, 1, 1, 1, 0]


def test_a_noisy_drift_is_no_sign_bug_and_a_flat_reward_with_idle_steps_is_critical(tmp_path):
    rng = np.random.default_rng(3)
    s = healthy_series(40)
    # every 5 steps, a reward with per-log noise 0.4 and a drift of -0.15 over the run: not significant
    s["reward/mean"] = 0.5 - 0.15 * np.arange(40) / 40 + rng.normal(0, 0.4, 40)
    s["reward/std"] = np.full(40, 0.6)
    run = write(tmp_path, s, name="noisy")
    run.metrics["step"] = run.metrics["step"] * 5
    d = diagnose(run)
    assert "no_learning" not in fired(d)
    assert by_rule(d, "reward_flat").severity == "warning"  # flat within its noise, but the CI is wide
    # the same noisy reward with no update on most steps (grad norm exactly 0): strong evidence
    s["optim/grad_norm"] = np.where(np.arange(40) % 4 == 0, 0.3, 0.0)
    f = by_rule(diagnose(write(tmp_path, s, name="idle")), "reward_flat")
    assert f.severity == "critical" and any("30 of 40 logged steps had no update" in e.text for e in f.evidence)


def test_a_kl_that_climbs_steadily_logged_every_5_steps_is_no_explosion_but_a_sudden_jump_is(tmp_path):
    # 40 points logged every 5 steps (0-195): the KL to the reference climbs 0 -> 1 nat over the first 100 steps
    # (a tenth more each point) and stays. Against the level before (a 20-point median ending 5 points earlier:
    # 100 steps back) the climb at step 85 is 5x; against its last 5 points (0.55-0.75) it is not 3x: a drift
    s = healthy_series(40)
    s["reward/mean"] = s["reward/pass_rate"] = 0.5 + np.random.default_rng(4).normal(0, 0.02, 40)  # not rising
    climb = np.r_[np.linspace(0.0, 1.0, 21), np.full(19, 1.0)] * (1 + np.random.default_rng(5).normal(0, 0.05, 40))
    s["policy/kl_ref"] = np.abs(climb)
    run = write(tmp_path, s, name="drift")
    run.metrics["step"] = run.metrics["step"] * 5
    assert "kl_clip_explode" not in fired(diagnose(run))
    # the same end level reached at once at step 100 (0.05 before, 1 after): a jump that stays
    s["policy/kl_ref"] = np.r_[np.full(20, 0.05), np.full(20, 1.0)] * (1 + np.random.default_rng(6).normal(0, 0.05, 40))
    run = write(tmp_path, s, name="jump")
    run.metrics["step"] = run.metrics["step"] * 5
    assert by_rule(diagnose(run), "kl_clip_explode").severity == "critical"


def test_a_kl_level_from_the_first_step_is_a_reference_mismatch_and_a_lone_spike_no_explosion(tmp_path):
    s = healthy_series(100)
    rng = np.random.default_rng(2)
    s["reward/mean"] = 0.4 + rng.normal(0, 0.05, 100)
    # the reference is a base model under an SFT adapter: KL about 1 nat from step 0 on, up to 2 at times
    s["policy/kl_ref"] = np.clip(1.0 + rng.normal(0, 0.25, 100), 0.5, 2.0)
    d = diagnose(write(tmp_path, s, name="adapter"))
    assert "kl_clip_explode" not in {f.rule_id for f in d.findings}
    f = by_rule(d, "reference_mismatch")
    assert f.severity == "warning" and f.evidence[0].value == pytest.approx(s["policy/kl_ref"][0])
    # a starting policy equal to its reference: KL 0 at step 0, and one logged spike that returns at once
    s["policy/kl_ref"] = np.r_[0.0, np.full(99, 0.05)]
    s["policy/kl_ref"][50] = s["policy/kl_ref"][51] = s["policy/kl_ref"][53] = 3.0  # spikes, a calm point between
    d = diagnose(write(tmp_path, s, name="spike"))
    assert not {"kl_clip_explode", "reference_mismatch"} & {f.rule_id for f in d.findings}
    # ... but one KL in the tens is catastrophic on its own
    s["policy/kl_ref"][50] = 12.0
    assert by_rule(diagnose(write(tmp_path, s, name="tens")), "kl_clip_explode").severity == "critical"
    # a first KL logged after updates (step 5) says nothing about the reference
    run = write(tmp_path, s, name="late")
    run.metrics["step"] = run.metrics["step"] + 5
    assert any(n.rule_id == "reference_mismatch" and "step 5" in n.reason for n in diagnose(run).not_judged)
    # our trainer counts from step 0 (before any update): its step 1 comes after one, and says nothing either;
    # a source counting from 1 (TRL) computes step 1 with the starting weights, and is judged there
    s["policy/kl_ref"] = 0.3 + rng.normal(0, 0.02, 100)
    run = write(tmp_path, s, name="from1")
    run.metrics["step"] = run.metrics["step"] + 1
    assert any(n.rule_id == "reference_mismatch" and "step 1" in n.reason for n in diagnose(run).not_judged)
    run.meta.source = "trl"
    assert by_rule(diagnose(run), "reference_mismatch").evidence[0].value == pytest.approx(s["policy/kl_ref"][0])
    # a KL logged with no finite value (a number of 5,000 digits read as -inf, the fuzzer's case): not judged,
    # where the rule failed on an empty series before
    one = write(tmp_path, {k: v[:1] for k, v in s.items()} | {"policy/kl_ref": np.array([-np.inf])}, name="inf")
    reasons = {n.rule_id: n.reason for n in diagnose(one).not_judged}
    assert reasons["reference_mismatch"] == "policy/kl_ref is not logged (or only as placeholder zeros)"


def test_a_kl_of_tempered_log_probs_is_judged_on_the_scale_of_temperature_one(tmp_path):
    s = healthy_series(100)
    # KL to the reference 0 at step 0, then 10-19 nats held: an explosion at temperature 1 (above KL_HUGE 5)
    s["policy/kl_ref"] = np.r_[0.0, np.linspace(10, 19, 99)]
    assert by_rule(diagnose(write(tmp_path, s, name="t1")), "kl_clip_explode").severity == "critical"
    # at a sampling temperature of 0.1 every log-prob is of logits / 0.1: the same logits' drift reads ~100x
    # (1/T^2), so 10-19 nats are 0.1-0.19 at T = 1, under every bar (floor 0.5 x 100, huge 5 x 100)
    d = diagnose(write(tmp_path, s, dict(CORE_CONFIG, **{"rollout.temperature": 0.1}), name="t01"))
    assert "kl_clip_explode" not in {f.rule_id for f in d.findings}
    # a KL of 2,000 nats is still one at 0.1 (catastrophic: 10 x 100), and the finding says how it was judged
    s["policy/kl_ref"][60] = 2000.0
    f = by_rule(diagnose(write(tmp_path, s, dict(CORE_CONFIG, **{"rollout.temperature": 0.1}), name="t01_boom")),
                "kl_clip_explode")
    assert f.severity == "critical" and (
        "rollout.temperature = 0.1: log-probs of logits / T make a KL about 100x what the same change shows at "
        "T = 1; the KL bars are scaled by it") in [e.text for e in f.evidence]


def test_without_a_kl_term_the_kl_to_the_reference_is_distance_travelled(tmp_path):
    s = healthy_series(100)
    s["reward/mean"] = s["reward/pass_rate"] = 0.5 + np.random.default_rng(10).normal(0, 0.03, 100)  # not rising
    # KL to the reference 0.16 -> 3.3 held, one value of 25.9: critical where a KL term holds the policy
    s["policy/kl_ref"] = np.r_[np.full(40, 0.16), np.full(60, 3.3)]
    s["policy/kl_ref"][70] = 25.9
    assert by_rule(diagnose(write(tmp_path, s, name="kl_term")), "kl_clip_explode").severity == "critical"
    # with no KL term (our kl_mode none; TRL beta 0; verl use_kl_loss and use_kl_in_reward false) nothing holds it
    for config, said in (({"algo.kl_mode": "none"}, "algo.kl_mode = none"), ({"beta": 0.0}, "beta = 0"),
                         ({"actor_rollout_ref.actor.use_kl_loss": False, "algorithm.use_kl_in_reward": False},
                          "actor_rollout_ref.actor.use_kl_loss = False, algorithm.use_kl_in_reward = False")):
        cfg = {k: v for k, v in CORE_CONFIG.items() if k != "algo.kl_mode"} | config
        f = by_rule(diagnose(write(tmp_path, s, cfg, name=said.split()[0])), "kl_clip_explode")
        assert f.severity == "warning", said
        assert f"no KL term ({said}): nothing holds the policy near its reference, so its KL to it measures how " \
               "far the policy went; at most a warning on its own" in [e.text for e in f.evidence]
    # ... while a clip fraction that explodes and stays is still critical without one
    s["policy/clipfrac"] = np.r_[np.full(40, 0.01), np.full(60, 0.6)]
    cfg = {k: v for k, v in CORE_CONFIG.items() if k != "algo.kl_mode"} | {"beta": 0.0}
    assert by_rule(diagnose(write(tmp_path, s, cfg, name="clip")), "kl_clip_explode").severity == "critical"


def test_zero_variance_groups_a_low_temperature_explains_are_its_consequence(tmp_path):
    s = healthy_series(100)
    for k in ("groups/all_pass_frac", "groups/all_fail_frac"):
        s.pop(k, None)
    s["reward/mean"] = s["reward/pass_rate"] = np.full(100, 0.3) + np.random.default_rng(8).normal(0, 0.02, 100)
    s["groups/zero_std_frac"] = np.full(100, 0.95)  # almost every group tied: critical on its own
    d = diagnose(write(tmp_path, s, name="tied"))
    assert by_rule(d, "zero_variance_groups").severity == "critical"
    # at temperature 0.1 (config) a group's responses come out alike: low_diversity is the cause to check first
    d = diagnose(write(tmp_path, s, dict(CORE_CONFIG, **{"rollout.temperature": 0.1}), name="cold"))
    f = by_rule(d, "zero_variance_groups")
    assert f.severity == "warning" and f.evidence[-1].text == (
        "the groups' responses come out alike (low_diversity): a consequence; check the sampling diversity first")
    # an entropy near 0 alone (an SFT'd policy) does not say so: a sparse reward ties groups by failing them all
    s["policy/entropy"] = np.full(100, 0.05) + np.random.default_rng(9).normal(0, 0.005, 100)
    d = diagnose(write(tmp_path, s, name="sft"))
    assert by_rule(d, "low_diversity").severity == "warning"
    assert by_rule(d, "zero_variance_groups").severity == "critical"
    # ... but an entropy that collapses during the run (0.9 -> 0.02 at step 10) makes the groups tie from then on
    # (0.1 tied before, 0.95 after): the collapse is the cause, and the tied groups its consequence, samples or not
    s["policy/entropy"] = np.r_[np.full(10, 0.9), np.full(90, 0.02)] + np.random.default_rng(9).normal(0, 0.002, 100)
    s["groups/zero_std_frac"] = np.r_[np.full(12, 0.1), np.full(88, 0.95)]
    d = diagnose(write(tmp_path, s, name="collapsed"))
    assert by_rule(d, "entropy_collapse").severity == "critical"
    f = by_rule(d, "zero_variance_groups")
    onset = by_rule(d, "entropy_collapse").step_range[0]
    assert f.severity == "warning" and f.evidence[-1].text == (
        f"begins after the entropy collapsed at step {onset}: a consequence; check the collapse first")


def test_completions_pinned_at_the_cap_are_a_finding_even_when_they_never_change(tmp_path):
    s = healthy_series(60)
    # 0.59, 0.61, 0.59, ...: Mann-Kendall S = 30 of 1770 pairs (tau-b 0.024), and the 870 same-parity pairs have
    # slope 0, so Theil-Sen's 95% CI (pair ranks 730 and 1039) is 0 .. 0. The least-squares line (worked out in
    # tests/diagnosis/test_diagnosis_stats.py) changes by 0.00098 with CI -0.0080 .. 0.0099: both within FLAT_BAND x reward
    # std 0.45 = 0.045, flat beyond doubt.
    s["reward/mean"] = np.where(np.arange(60) % 2 == 0, 0.59, 0.61)
    del s["reward/pass_rate"]
    s["completions/truncated_frac"] = np.full(60, 0.95)  # from the first step on: a level, not a drift
    f = by_rule(diagnose(write(tmp_path, s, name="cut")), "truncation")
    assert f.severity == "critical" and f.title == "Completions are pinned at the length cap"
    assert "on 60 of 60 logged steps" in f.evidence[0].text
    assert "the reward does not move (change 0, 95% bounds -0.00797 .. 0.00993)" in f.evidence[-1].text  # the hull
    # 0.4, 0.8, 0.4, ...: the same ties give Theil-Sen 0 .. 0, but the least-squares CI is -0.159 .. 0.199: the
    # ties made it look certain, the spread says it is not
    s["reward/mean"] = np.where(np.arange(60) % 2 == 0, 0.4, 0.8)
    assert by_rule(diagnose(write(tmp_path, s, name="cut_wide")), "truncation").severity == "warning"
    # the same level while the reward climbs 0.56 -> 0.80 in a straight line (every pair's slope 0.24/59, and a
    # least-squares line with no residual: both CIs 0.24 .. 0.24, above RISE_BAND x reward std 0.45 = 0.045) is
    # worth a look, not a stop
    s["reward/mean"] = 0.56 + 0.24 * np.arange(60) / 59
    d = diagnose(write(tmp_path, s, name="cut_rising"))
    assert by_rule(d, "truncation").severity == "warning" and d.verdict.kind == "healthy"
    # noise of std 0.05 on 60 points: no trend, but its CIs are wider than 0.1 x 0.45: not flat beyond doubt
    s["reward/mean"] = 0.4 + np.random.default_rng(4).normal(0, 0.05, 60)
    assert by_rule(diagnose(write(tmp_path, s, name="cut_noisy")), "truncation").severity == "warning"
    # no truncation column: the mean length sits within 10% of the configured cap (completions never end)
    del s["completions/truncated_frac"]
    s["completions/len_mean"] = np.full(60, 240.0)
    f = by_rule(diagnose(write(tmp_path, s, CORE_CONFIG | {"rollout.max_new_tokens": 256}, name="cap")),
                "truncation")
    assert any("within 10% of the cap 256" in e.text for e in f.evidence)
    # a fifth of the run cut is not a level yet when it is 3 steps of 60
    s["completions/len_mean"] = np.r_[np.full(57, 120.0), np.full(3, 256.0)]
    assert "truncation" not in fired(diagnose(write(tmp_path, s, CORE_CONFIG | {"rollout.max_new_tokens": 256},
                                                    name="brief")))


def test_truncation_is_a_level_of_the_run_not_a_streak_of_steps(tmp_path):
    s = healthy_series(100)
    # half the completions cut on 3 steps of 4, none on the 4th (0.5, 0.5, 0.5, 0, ...): above a tenth on 75 steps
    # but never 20 in a row. The centred median over 21 steps (a fifth of the run) is 0.5 everywhere: a level.
    s["completions/truncated_frac"] = np.where(np.arange(100) % 4 == 3, 0.0, 0.5)
    f = by_rule(diagnose(write(tmp_path, s, name="noisy_cut")), "truncation")
    assert f.severity == "warning" and f.title == "Many completions are cut at the length cap"
    assert "on 100 of 100 logged steps" in f.evidence[0].text and f.evidence[1].value == 0.5
    # a quarter cut all run, the share a verifier never sees an answer in: a double-digit share is a warning
    s["completions/truncated_frac"] = np.full(100, 0.25)
    assert by_rule(diagnose(write(tmp_path, s, name="quarter")), "truncation").severity == "warning"
    # one completion of a group of 16 cut (0.0625) is under a tenth: nothing
    s["completions/truncated_frac"] = np.full(100, 1 / 16)
    assert "truncation" not in fired(diagnose(write(tmp_path, s, name="one_in_16")))
    # a single log entry (TRL averages it over its logging_steps) with 91.25% cut is the level of what was seen
    one = {k: v[:1] for k, v in s.items()} | {"completions/truncated_frac": np.array([0.9125])}
    f = by_rule(diagnose(write(tmp_path, one, name="one_entry")), "truncation")
    assert f.title == "Completions are pinned at the length cap" and "91.2% of completions cut" in f.evidence[1].text


def test_a_cap_no_config_names_is_read_from_mean_lengths_that_reach_it_exactly(tmp_path):
    s = healthy_series(200)
    del s["reward/pass_rate"], s["completions/truncated_frac"]
    # a console log with the mean length only: 3 steps of 200 have mean exactly 256 (every completion of the step
    # had length 256: a cap), and the mean sits at 236 +- 10 elsewhere, above 0.9 x 256 = 230.4 on most steps
    rng = np.random.default_rng(3)
    ln = np.clip(236 + rng.normal(0, 10, 200), 150, 255.9)
    ln[[40, 90, 150]] = 256.0
    s["completions/len_mean"] = ln
    f = by_rule(diagnose(write(tmp_path, s, {}, name="console_cap")), "truncation")
    assert any("reaches exactly 256 on 3 logged steps" in e.text for e in f.evidence)
    # two such steps are not enough to name a cap
    ln[150] = 240.0
    assert "truncation" not in fired(diagnose(write(tmp_path, s, {}, name="console_two")))
    # a toy task's mean of 2.75 tokens (a batch of 4 gives means in quarters), the run's highest, on 3
    # steps and 2.5 +- 0.1 elsewhere (within 10% of 2.75 on half the steps): no cap is a fraction of a token
    toy = np.clip(2.5 + rng.normal(0, 0.1, 200), 2.0, 2.7)
    toy[[40, 90, 150]] = 2.75
    s["completions/len_mean"] = toy
    assert "truncation" not in fired(diagnose(write(tmp_path, s, {}, name="toy")))


def test_a_ceiling_the_lengths_reach_is_no_cap_where_the_run_logs_that_nothing_was_cut(tmp_path):
    # a toy TRL run without its config: the longest completion is 3 tokens on 90 of 100 steps, the mean 2.8 +- 0.1
    # (within 10% of 3); its logged clipped ratio is 0 on every step, so 3 is where answers end, not a cap
    s = healthy_series(100)
    rng = np.random.default_rng(4)
    s["completions/len_max"] = np.where(np.arange(100) % 11 == 0, 2.0, 3.0)
    s["completions/len_mean"] = np.clip(2.8 + rng.normal(0, 0.1, 100), 2.0, 2.99)
    assert "truncation" not in fired(diagnose(write(tmp_path, s, {}, name="logged_zero")))
    # without the clipped ratio, the same lengths are all there is: a ceiling hit 90 times is the cap
    del s["completions/truncated_frac"]
    f = by_rule(diagnose(write(tmp_path, s, {}, name="unlogged")), "truncation")
    assert any("completions/len_max reaches exactly 3 on 90 logged steps" in e.text for e in f.evidence)


def test_zero_variance_from_solved_prompts_is_saturation_and_reward_std_zero_means_no_spread(tmp_path):
    s = healthy_series(100)
    t = np.arange(100)
    s["reward/mean"] = 0.5 + 0.4 * t / 100 + np.random.default_rng(5).normal(0, 0.03, 100)
    s["groups/zero_std_frac"] = 0.1 + 0.7 * t / 100  # rises as the prompts get solved
    s["groups/all_pass_frac"], s["groups/all_fail_frac"] = s["groups/zero_std_frac"] - 0.05, np.full(100, 0.05)
    f = by_rule(diagnose(write(tmp_path, s, name="solved")), "zero_variance_groups")
    assert f.severity == "info" and "saturates" in f.title and f.checks[0].what == "harder prompts"
    # the same rise, but the no-spread groups are all-fail (0.75 of 0.8 at the end): the hard prompts give no
    # signal, which is no saturation: a warning while the reward climbs too (issue 37)
    s["groups/all_pass_frac"], s["groups/all_fail_frac"] = np.full(100, 0.05), s["groups/zero_std_frac"] - 0.05
    f = by_rule(diagnose(write(tmp_path, s, name="hard")), "zero_variance_groups")
    assert f.severity == "warning" and f.title == "Zero-variance groups dominate (mostly all-fail)"
    assert f.checks[0].what != "harder prompts"
    # no zero-variance column (older TRL): steps whose reward std is exactly 0 had no group with any spread
    s = healthy_series(100)
    s["reward/mean"] = 0.3 + np.random.default_rng(6).normal(0, 0.05, 100)
    for k in ("groups/zero_std_frac", "groups/all_pass_frac", "groups/all_fail_frac"):
        del s[k]
    s["reward/std"] = np.where(np.arange(100) % 9 < 4, 0.0, 0.4)  # 45 of 100 steps
    f = by_rule(diagnose(write(tmp_path, s, name="nospread")), "zero_variance_groups")
    assert f.severity == "warning" and "on 45 of 100 logged steps reward/std exactly 0" in f.evidence[0].text


def test_entropy_near_zero_from_the_first_step_is_low_diversity_and_placeholder_zeros_are_not_measured(tmp_path):
    s = healthy_series(60)
    s["policy/entropy"] = np.full(60, 0.06) + np.random.default_rng(7).normal(0, 0.005, 60)
    s["policy/entropy"][40:] = 0.01  # and falls further: nothing was left to collapse, low_diversity says it
    d = diagnose(write(tmp_path, s, name="sft"))
    f = by_rule(d, "low_diversity")
    assert f.severity == "warning" and "nearly deterministic from the start" in f.evidence[0].text
    assert "entropy_collapse" not in {x.rule_id for x in d.findings}
    s["policy/entropy"] = np.zeros(60)  # a custom trainer's column that was never measured
    s["policy/kl_ref"] = np.zeros(60)
    d = diagnose(write(tmp_path, s, name="placeholder"))
    assert not {"low_diversity", "entropy_collapse", "no_learning"} & fired(d)
    assert any(n.rule_id == "entropy_collapse" and "not logged" in n.reason for n in d.not_judged)
    s["policy/entropy"] = np.full(60, 0.05)  # the same value to the last bit on every row: a placeholder too
    d = diagnose(write(tmp_path, s, name="constant"))
    assert "low_diversity" not in fired(d)


def test_the_verdict_comes_first_and_a_run_without_rows_cannot_be_judged(tmp_path):
    empty = diagnose(Bare(pd.DataFrame({"step": []})))
    assert empty.verdict.kind == "cant_judge" and empty.verdict.text == "can't judge yet: the run has no metric rows yet"
    assert empty.to_dict()["verdict"]["label"] == "can't judge yet"
    s = healthy_series(100)
    s["reward/mean"] = np.full(100, 0.3) + np.random.default_rng(8).normal(0, 0.01, 100)
    assert diagnose(write(tmp_path, s, name="flat")).verdict.kind == "not_learning"
    assert diagnose(write(tmp_path, healthy_series(100), name="ok")).verdict.kind == "healthy"


def test_cli_judges_each_launch_of_a_sweep_folder_on_its_own(tmp_path, capsys):
    import torch.utils.tensorboard as tb
    rng = np.random.default_rng(9)
    for kl in (0.05, 8.0):  # two launches into one logdir, each from step 1: a calm one, then one that explodes
        w = tb.SummaryWriter(str(tmp_path / "sweep"))
        for step in range(1, 31):
            w.add_scalar("train/reward", 0.3 + rng.normal(0, 0.05), step)
            w.add_scalar("train/kl", 0.0 if step == 1 else kl, step)
        w.close()
    assert diagnose_main([str(tmp_path / "sweep"), "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert len(doc) == 2 and all("#" in name for name in doc)
    calm, wild = (doc[name] for name in doc)
    assert not [f for f in calm["findings"] if f["rule_id"] == "kl_clip_explode"]
    # 8 nats from step 2: an explosion, a warning here (these event files hold no config: whether a KL term holds
    # the policy, and the temperature, are unsaid; kl.unsaid)
    assert [f["severity"] for f in wild["findings"] if f["rule_id"] == "kl_clip_explode"] == ["warning"]


def test_steps_without_update_that_zero_variance_explains_leave_the_weight_to_zero_variance(tmp_path):
    # one prompt per step: each step's zero-variance fraction is 0 or 1, and the update is empty exactly then
    rng = np.random.default_rng(10)
    s = healthy_series(200)
    none = rng.random(200) < 0.6
    s["reward/mean"] = 0.7 + rng.normal(0, 0.5, 200)
    s["groups/zero_std_frac"] = none.astype(float)
    s["reward/std"] = np.where(none, 0.0, 0.8)
    s["optim/grad_norm"] = np.where(none, 0.0, 1.0)
    for k in ("groups/all_pass_frac", "groups/all_fail_frac"):
        del s[k]
    d = diagnose(write(tmp_path, s, name="explained"))
    # judged as the share of tied steps (one group a step): about 60% of them, a warning (critical from 80%)
    z = by_rule(d, "zero_variance_groups")
    assert z.severity == "warning" and z.evidence[0].metric == "reward/std" and 0.5 < z.evidence[0].value < 0.7
    assert by_rule(d, "reward_flat").severity == "warning"


def test_what_begins_after_an_explosion_is_shown_as_its_consequence(tmp_path):
    s = healthy_series(100)
    s["reward/mean"] = 0.4 + np.random.default_rng(11).normal(0, 0.03, 100)
    s["policy/kl_ref"] = np.r_[0.0, np.full(49, 0.05), np.full(50, 6.0)]
    s["policy/entropy"] = np.r_[np.full(52, 1.0), np.full(48, 0.01)]  # the policy degenerates after step 50
    d = diagnose(write(tmp_path, s, name="boom"))
    assert by_rule(d, "kl_clip_explode").severity == "critical"
    ent = by_rule(d, "entropy_collapse")
    assert ent.severity == "warning" and "after the run exploded at step 50" in ent.evidence[-1].text


def test_trl_reuse_runs_are_checked_on_the_first_step_of_each_generation_batch(tmp_path):
    trl = {"num_iterations": 2, "steps_per_generation": 4, "gradient_accumulation_steps": 4, "logging_steps": 1}
    s = {k: v[:40] for k, v in healthy_series(40).items()}
    for k in ("policy/ratio_first_step", "policy/ratio_first_step_max_dev", "policy/rollout_logprob_abs_diff"):
        del s[k]
    # steps 1, 3, 5, ... start a generation batch (2 optimizer steps each): on-policy, so nothing may clip there
    on_policy = np.arange(40) % 2 == 1  # RunWriter steps 0..39; TRL's first optimizer step is step 1
    s["policy/clipfrac"] = np.where(on_policy, 0.0, 0.08)
    run = write(tmp_path, s, config=trl, name="ok")
    assert not [f for f in diagnose(run).findings if f.rule_id == "first_step_ratio"]
    s["policy/clipfrac"] = np.where(on_policy, 0.03, 0.08)  # the sampler's log-probs are not the trainer's
    f = by_rule(diagnose(write(tmp_path, s, config=trl, name="mismatch")), "first_step_ratio")
    assert f.severity == "critical" and "on 100% of the 20 first optimizer steps" in f.evidence[0].text
    # logged every 5 steps, TRL averages first and reuse steps together: no judgement
    d = diagnose(write(tmp_path, s, config=trl | {"logging_steps": 5}, name="sparse"))
    assert any(n.rule_id == "first_step_ratio" for n in d.not_judged)
    # TRL + vLLM: the sampler's log-probs far from the trainer's (0.3 nats per token, bf16 gives ~0.01)
    s["policy/clipfrac"] = np.zeros(40)
    s["policy/rollout_logprob_abs_diff"] = np.full(40, 0.3)
    f = by_rule(diagnose(write(tmp_path, s, config={"logging_steps": 1}, name="vllm")), "first_step_ratio")
    assert f.severity == "warning" and "median 0.3 > 0.1" in f.evidence[0].text


def test_a_binary_reward_is_recognised_from_its_moments_when_no_pass_rate_is_logged(tmp_path):
    s = healthy_series(100)
    del s["reward/pass_rate"]
    rng = np.random.default_rng(12)
    p = rng.choice([0.0, 0.0, 0.0, 1 / 16, 2 / 16], 100)  # 16 responses a step, almost never a success
    s["reward/mean"], s["reward/std"] = p, np.sqrt(p * (1 - p) * 16 / 15)  # torch's sample std
    f = by_rule(diagnose(write(tmp_path, s, name="binary")), "sparse_reward")
    assert "near 0" in f.title and "std^2 / p(1-p) = 1.07" in f.evidence[0].text
    s["reward/std"] = np.sqrt(p * (1 - p)) * rng.uniform(0.5, 1.0, 100)  # a graded reward: no pass rate to judge
    d = diagnose(write(tmp_path, s, name="graded"))
    assert any(n.rule_id == "sparse_reward" and "not recognisably 0/1" in n.reason for n in d.not_judged)


def test_every_rule_id_is_in_the_team_contract():
    """sample_runs/manifest.json and the TRL corpus name rules by these ids: each must be listed in the contract."""

    text = (REPO / "docs" / "TEAM-CONTRACT.md").read_text()
    assert [r for r in RULES if f"`{r}`" not in text] == []


def test_zero_variance_examples_show_a_text_that_is_there_never_nan():
    import pandas as pd

    from dashboard.diagnosis.context import RunData
    from dashboard.diagnosis.rules.reward import zero_variance_examples

    class Run:  # a run without metrics: the samples are all the function reads
        def samples(self):
            return pd.DataFrame({"step": [3] * 4, "group": [0, 0, 1, 1], "reward": [0.0, 0.0, 1.0, 0.5],
                                 "prompt": ["2+2=", "2+2=", "1+1=", "1+1="], "completion": [None, "5", "2", "2"]})

    assert zero_variance_examples(RunData(Run()), step=3) == [{"step": 3, "group": 0, "reward": 0.0, "responses": 2,
                                                               "prompt": "2+2=", "completion": "5"}]


def test_all_pass_or_all_fail_comes_from_a_known_scale_never_from_the_observed_range(tmp_path):
    from dashboard.diagnosis import facts
    from dashboard.diagnosis.context import RunData

    s = healthy_series(40)
    del s["reward/pass_rate"]
    # a reward pinned at a partial credit of 0.07 with no spread on 30 steps, 0.3 .. 1.2 with spread 0.4 on 10:
    # 0.07 is the bottom of what the run saw, and nothing says whether it is a pass or a fail
    s["reward/mean"] = np.r_[np.full(30, 0.07), np.linspace(0.3, 1.2, 10)]
    s["reward/std"] = np.r_[np.zeros(30), np.full(10, 0.4)]
    no_spread = s["reward/std"] == 0
    assert facts.same_score_side(RunData(write(tmp_path, s, name="partial")), no_spread) is None
    # with the pass rate logged: 0.05 there is all-fail, 0.95 all-pass, 0.5 neither
    for p, side in ((0.05, "all-fail"), (0.95, "all-pass"), (0.5, None)):
        s["reward/pass_rate"] = np.r_[np.full(30, p), np.full(10, 0.5)]
        assert facts.same_score_side(RunData(write(tmp_path, s, name=f"p{p}")), no_spread) == side
    # an inf reward (a broken step) does not matter: the side comes from the pass rate alone
    s["reward/mean"][3] = np.inf
    with np.errstate(all="raise"):
        assert facts.same_score_side(RunData(write(tmp_path, s, name="inf")), no_spread) is None


def test_the_reward_scale_of_a_run_whose_steps_mostly_have_no_spread_is_the_spread_of_its_responses():
    """facts.reward_scale: the median per-step std when it is above 0; where most steps have no spread (almost
    every response fails) the pooled spread of every response, sqrt(mean within-step variance + variance of the
    step means): for a binary reward that is sqrt(p (1 - p)) at the run's pass rate p. Worked by hand: ten steps
    of ten responses, one step with five passes (std 0.5, mean 0.5), nine with none: p = 5 / 100."""
    from dashboard.diagnosis import facts
    from dashboard.diagnosis.context import RunData

    def scale(std, mean):
        return facts.reward_scale(RunData(Bare(pd.DataFrame({"step": range(len(std)), "reward/std": std,
                                                                   "reward/mean": mean}))))

    got, how = scale([0.0] * 9 + [0.5], [0.0] * 9 + [0.5])
    assert got == pytest.approx(math.sqrt(0.05 * 0.95)) and "every response over the run" in how
    # mean within-step variance 0.5 / 6, variance of the means 0.5 / 6 - (1 / 6) ** 2
    assert scale([0, 0, 0, 0, 0.5, 0.5], [0, 0, 0, 0, 0.5, 0.5])[0] == pytest.approx(math.sqrt(1 / 6 - 1 / 36))
    assert scale([0.0, 0.3, 0.5], [0.2, 0.4, 0.5]) == (0.3, "median per-step reward std")  # above 0: as before
    assert scale([0.0] * 5, [0.0] * 5)[1] == "no spread logged (taken as 1)"  # nothing varies at all


def test_a_damaged_config_number_leaves_every_rule_standing(tmp_path):
    # make fuzz's cases: a count of 5,000 digits read as inf, a NaN where a batch size was; the rules that count
    # optimizer steps per rollout failed on them (int(inf), int(nan)) and showed as not judged
    s = healthy_series(40)
    s["policy/clipfrac"] = np.full(40, 0.01)
    damaged = {"num_iterations": float("inf"), "logging_steps": 1, "gradient_accumulation_steps": 1,
               "data.train_batch_size": float("nan"), "actor.ppo_mini_batch_size": 4,
               "rollout_batch_size": float("inf"), "n_samples_per_prompt": 8, "train_batch_size": 16}
    run = write(tmp_path, s, damaged, name="damaged")
    run.metrics["step"] = run.metrics["step"] + 1
    failed = [(n.rule_id, n.reason) for n in diagnose(run).not_judged if "the rule failed" in n.reason]
    assert failed == []
