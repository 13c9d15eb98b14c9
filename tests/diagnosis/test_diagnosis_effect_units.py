"""Effects judged in their own units (issue 37): a KL to the reference in nats per token, whatever its shape; a
first row logged after updates; tied groups as a fraction, estimated from the pass rate and the group size where
they are not logged; a reward pinned at one value; a reward near the top of its own range. Runs are written to
disk with the real RunWriter; every number below is worked out by hand in the comment beside it."""

from __future__ import annotations

import numpy as np
from helpers.series_runs import finding, write

from collectors import RunWriter, load_run
from dashboard.diagnosis import diagnose
from dashboard.diagnosis.stats import lattice_size, tied_share


def test_tied_share_by_hand():
    # G = 2 at p = 0.06: 0.06^2 + 0.94^2 = 0.0036 + 0.8836 = 0.8872; G = 8 at p = 0.5: 2 / 256
    assert np.allclose(tied_share(np.array([0.06, 0.5, 0.0, 1.0]), 2), [0.8872, 0.5, 1.0, 1.0])
    assert np.isclose(tied_share(np.array([0.5]), 8)[0], 2 / 256)


def test_lattice_size_finds_the_responses_a_step():
    assert lattice_size(np.array([0.0, 0.5, 1.0, 0.5]), 16) == 2
    assert lattice_size(np.array([0.25, 0.75, 0.5]), 16) == 4
    assert lattice_size(np.array([0.3333, 0.6667, 0.0]), 16) == 3  # printed with 4 decimals
    assert lattice_size(np.array([0.137, 0.52, 0.911]), 16) is None  # a graded reward leaves the lattice


def test_a_steady_kl_climb_to_nats_is_a_runaway_and_a_climb_to_a_tenth_of_that_is_not(tmp_path):
    rng = np.random.default_rng(0)
    n = 90
    climb = np.r_[np.linspace(0.002, 2.5, 30), 2.5 + rng.normal(0, 0.3, n - 30)]  # no step multiplies it by 3
    base = {"reward/mean": 0.66 + rng.normal(0, 0.02, n), "reward/std": np.full(n, 0.3)}
    d = diagnose(write(tmp_path, {**base, "policy/kl_ref": climb}, {"beta": 0.01}, steps=range(20, 20 * n + 1, 20)))
    f = finding(d, "kl_clip_explode")
    assert f is not None and f.severity == "warning" and f.title == "KL to the reference climbs far from it"
    # onset: the first logged point above 1 nat whose next 20 points keep a median above it
    first_above = 20 * (1 + int(np.argmax(climb > 1.0)))
    assert f.step_range == (first_above, 20 * n)
    low = 0.1 * climb  # the same shape at 0.25 nats: GRPO's usual range, no runaway
    d = diagnose(write(tmp_path, {**base, "policy/kl_ref": low}, {"beta": 0.01}, steps=range(20, 20 * n + 1, 20),
                       name="low"))
    assert finding(d, "kl_clip_explode") is None


def test_a_kl_far_from_0_at_a_first_row_logged_after_updates_is_a_reference_not_an_explosion(tmp_path):
    rng = np.random.default_rng(1)
    n = 40
    for level in (5.0, 10833.0):
        kl = level * (1 + rng.normal(0, 0.05, n))
        d = diagnose(write(tmp_path, {"reward/mean": 0.5 + rng.normal(0, 0.02, n), "reward/std": np.full(n, 0.3),
                                      "policy/kl_ref": kl}, {"beta": 0.04}, steps=range(10, 10 * n + 1, 10),
                           name=f"late{level:g}"))
        f = finding(d, "reference_mismatch")
        assert f is not None and f.step_range[0] == 10, level
        explode = finding(d, "kl_clip_explode")
        assert explode is None or explode.severity != "critical", level
    # the same first row from a learning rate far too large (TRL averages steps 1-10): the policy is wrecked, every
    # group ties from then on; that stays an explosion
    kl = 5.0 * (1 + rng.normal(0, 0.05, n))
    d = diagnose(write(tmp_path, {"reward/mean": np.zeros(n), "reward/std": np.zeros(n),
                                  "groups/zero_std_frac": np.ones(n), "policy/kl_ref": kl}, {"beta": 0.04},
                       steps=range(10, 10 * n + 1, 10), name="wrecked"))
    assert finding(d, "reference_mismatch") is None and finding(d, "kl_clip_explode").severity == "critical"
    # a run resumed at step 101 (rows 101, 102, ...): its first row is no start; nothing is judged
    d = diagnose(write(tmp_path, {"reward/mean": np.full(n, 0.5), "policy/kl_ref": np.full(n, 5.0)}, {"beta": 0.04},
                       steps=range(101, 101 + n), name="resumed"))
    assert finding(d, "reference_mismatch") is None


def test_tied_groups_are_estimated_from_the_pass_rate_where_they_are_not_logged(tmp_path):
    # one prompt of G = 2 a step (the step mean is 0, 0.5 or 1), pass rate about 0.06: p^2 + (1-p)^2 ~ 0.89
    rng = np.random.default_rng(2)
    n = 200
    wins = rng.binomial(2, 0.06, n)
    wins[:5] = 1  # at least five mixed steps make the lattice k/2 recognisable
    d = diagnose(write(tmp_path, {"reward/mean": wins / 2, "loss/total": np.zeros(n)}))
    f = finding(d, "zero_variance_groups")
    assert f is not None and f.severity == "warning" and "mostly all-fail" in f.title
    assert 0.8 < f.evidence[0].value < 0.95 and "p^G + (1 - p)^G" in f.evidence[0].text


def test_a_majority_of_tied_groups_stays_a_warning_while_the_reward_rises(tmp_path):
    rng = np.random.default_rng(3)
    n = 120
    d = diagnose(write(tmp_path, {"reward/mean": np.linspace(0.7, 0.82, n) + rng.normal(0, 0.01, n),
                                  "reward/std": np.full(n, 0.3), "groups/zero_std_frac": np.full(n, 0.7)}))
    f = finding(d, "zero_variance_groups")
    assert f is not None and f.severity == "warning"


def test_a_reward_pinned_at_a_partial_credit_is_flat_after_its_climb(tmp_path):
    n = 60
    r = np.r_[np.linspace(0.04, 0.068, 6), np.full(n - 6, 0.07)]  # a climb the trend test reads as a rise
    std = np.r_[np.full(6, 0.02), np.zeros(n - 6)]
    d = diagnose(write(tmp_path, {"reward/mean": r, "reward/std": std}, steps=range(10, 10 * n + 1, 10)))
    f = finding(d, "reward_flat")
    assert f is not None and f.title == "Reward pinned at 0.07" and f.step_range == (70, 600)


def test_a_score_near_the_top_of_its_logged_range_is_saturated_not_failing(tmp_path):
    # a 0/1 score at 0.945 over 256 responses: its spread is sqrt(0.945 x 0.055) = 0.228, not the step means' 0.012
    rng = np.random.default_rng(4)
    n = 168
    r = np.clip(0.95 - 0.0086 * np.arange(n) / n + rng.normal(0, 0.012, n), 0, 1)
    d = diagnose(write(tmp_path, {"reward/mean": r, "reward/min": np.zeros(n), "reward/max": np.ones(n)}))
    assert finding(d, "no_learning") is None
    flat = finding(d, "reward_flat")
    assert flat is None or flat.severity != "critical"


# -- causes users hit, each from a real thread's numbers (docs/diagnosis.md, "Causes from real threads") -------


def test_completions_that_never_end_name_the_stop_token_first(tmp_path):
    # jsboige/CoursIA#13596 (the symptom of huggingface/trl#7039): min = max = 80 = the cap on 40 of 40 steps,
    # clipped_ratio 1 on 39 (0.975 once), mean_terminated_length 0 on 39 (4 once)
    n = 40
    clipped, term = np.ones(n), np.zeros(n)
    clipped[7], term[7] = 0.975, 4.0
    d = diagnose(write(tmp_path, {"reward/mean": np.full(n, 0.3), "reward/std": np.full(n, 0.2),
                                  "completions/len_mean": np.full(n, 80.0), "completions/truncated_frac": clipped,
                                  "completions/terminated_len_mean": term, "optim/grad_norm": np.full(n, 0.3)},
                       {"max_completion_length": 80}, steps=range(1, n + 1)))
    f = finding(d, "truncation")
    assert f.title == "Completions are pinned at the length cap" and f.checks[0].what == "the stop token"


def test_a_reward_function_returning_nan_names_the_reward_functions_first(tmp_path):
    # modelscope/ms-swift#8123: one reward function returns None for some samples; training "completes" with
    # loss=0.0 and grad_norm=NaN on those steps
    n = 30
    gn = np.full(n, 0.4)
    gn[10:] = np.nan
    loss = np.r_[np.full(10, 0.02), np.zeros(n - 10)]
    d = diagnose(write(tmp_path, {"reward/mean": np.full(n, 0.5), "reward/std": np.full(n, 0.3),
                                  "optim/grad_norm": gn, "loss/total": loss}))
    f = finding(d, "non_finite")
    assert f.severity == "critical" and f.onset == 10 and f.checks[0].what == "the reward functions' return values"


def test_a_learning_rate_that_reaches_0_before_the_run_ends(tmp_path):
    # allenai/open-instruct#537: the schedule sized for fewer steps than run; lr 0 over the last 40% of 100 steps
    n = 100
    lr = np.r_[np.linspace(1e-6, 0.0, 60), np.zeros(40)]
    d = diagnose(write(tmp_path, {"reward/mean": np.full(n, 0.5), "optim/lr": lr}, steps=range(1, n + 1)))
    f = finding(d, "lr_ends_early")
    assert f is not None and f.onset == 60 and "the last 41% of the run updates nothing" in f.evidence[0].text
    cosine = 1e-6 * 0.5 * (1 + np.cos(np.pi * np.arange(n) / (n - 1)))  # reaches 0 at the last step only
    d = diagnose(write(tmp_path, {"reward/mean": np.full(n, 0.5), "optim/lr": cosine}, name="cosine"))
    assert finding(d, "lr_ends_early") is None


def test_loss_exactly_0_with_beta_0_and_one_iteration_is_no_alarm_but_0_gradient_and_tied_groups_are(tmp_path):
    # huggingface/trl#3452: beta 0, num_iterations 1, loss 0.0 on every step, grad_norm not 0, the model trains
    rng = np.random.default_rng(5)
    n = 60
    reward = np.linspace(0.3, 0.6, n) + rng.normal(0, 0.02, n)
    cfg = {"beta": 0.0, "num_iterations": 1}
    d = diagnose(write(tmp_path, {"reward/mean": reward, "reward/std": np.full(n, 0.4), "loss/total": np.zeros(n),
                                  "optim/grad_norm": 0.1 + rng.random(n)}, cfg))
    assert not {f.rule_id for f in d.findings if f.severity != "info"} & {"no_learning", "reward_flat", "non_finite"}
    # the same without a logged gradient norm: the config says loss 0 is expected; nothing reads it as no update
    d = diagnose(write(tmp_path, {"reward/mean": reward, "reward/std": np.full(n, 0.4), "loss/total": np.zeros(n)},
                       cfg, name="nogn"))
    assert not any("no update" in e.text for f in d.findings for e in f.evidence)
    # huggingface/trl#3857: loss 0.0, grad_norm 0.0, frac_reward_zero_std 1.0, reward_std 0: every group tied
    d = diagnose(write(tmp_path, {"reward/mean": np.full(n, 3.0), "reward/std": np.zeros(n),
                                  "groups/zero_std_frac": np.ones(n), "loss/total": np.zeros(n),
                                  "optim/grad_norm": np.zeros(n)}, cfg, name="tied"))
    assert finding(d, "zero_variance_groups").severity == "critical"


def test_every_finding_says_its_onset_and_how_sure_it_is_in_both_languages(tmp_path):
    from dashboard.diagnosis import i18n
    from dashboard.diagnosis.terminal import confidence_text

    rng = np.random.default_rng(6)
    n = 200
    wins = rng.binomial(2, 0.06, n)
    wins[:5] = 1
    d = diagnose(write(tmp_path, {"reward/mean": wins / 2, "loss/total": np.zeros(n)}))
    est = finding(d, "zero_variance_groups")
    assert (est.confidence, est.basis) == ("medium", "estimate")  # tied groups worked out, not counted
    assert est.to_dict()["onset"] == est.step_range[0]
    assert confidence_text(est) == f"began at step {est.onset}; how sure: medium (estimated from other metrics, " \
                                   "not counted)"
    zh = confidence_text(i18n.localise_finding(est, "zh"), "zh")
    assert zh == f"始于第 {est.onset} 步；把握：中（由其他指标估计，并非计数）"
    flat = finding(d, "reward_flat")
    assert (flat.confidence, flat.basis, flat.basis_n) == ("high", "steps", n)


def test_batch_sizes_that_do_not_divide(tmp_path):
    # verl: 8 prompts x rollout.n 4 / 8 GPUs = 4 responses per GPU, micro-batch 8: zero accumulation steps
    n = 10
    verl = {"actor.ppo_mini_batch_size": 8, "rollout.n": 4, "trainer.n_gpus_per_node": 8, "trainer.nnodes": 1,
            "actor.ppo_micro_batch_size_per_gpu": 8}
    f = finding(diagnose(write(tmp_path, {"reward/mean": np.full(n, 0.5)}, verl)), "config_batch_arithmetic")
    assert f is not None and "zero accumulation steps" in f.evidence[0].text and f.checks[0].what == "the batch sizes"
    # 32 x 4 / 8 = 16 per GPU, micro 6: 16 % 6 = 4 responses left out
    f = finding(diagnose(write(tmp_path, {"reward/mean": np.full(n, 0.5)},
                               {**verl, "actor.ppo_mini_batch_size": 32, "actor.ppo_micro_batch_size_per_gpu": 6},
                               name="v2")), "config_batch_arithmetic")
    assert "4 responses per GPU left out" in f.evidence[0].text
    # TRL: steps_per_generation 6 over gradient_accumulation_steps 4; 8 over 4 divides
    f = finding(diagnose(write(tmp_path, {"reward/mean": np.full(n, 0.5)},
                               {"steps_per_generation": 6, "gradient_accumulation_steps": 4}, name="t")),
                "config_batch_arithmetic")
    assert "is not a multiple of" in f.evidence[0].text
    assert finding(diagnose(write(tmp_path, {"reward/mean": np.full(n, 0.5)},
                                  {"steps_per_generation": 8, "gradient_accumulation_steps": 4}, name="t2")),
                   "config_batch_arithmetic") is None


def test_an_engine_gap_with_top_p_below_1_names_the_sampling_truncation_first(tmp_path):
    # huggingface/trl#6789 (issue 37's summary): top_p / top_k below 1 with a mismatch level; here a 0.3-nat gap
    n = 30
    series = {"reward/mean": np.full(n, 0.5), "policy/rollout_logprob_abs_diff": np.full(n, 0.3)}
    f = finding(diagnose(write(tmp_path, series, {"top_p": 0.9})), "first_step_ratio")
    assert f.checks[0].what == "the sampling truncation" and any("top_p = 0.9" in e.text for e in f.evidence)
    f = finding(diagnose(write(tmp_path, series, {"top_p": 1.0, "top_k": -1}, name="full")), "first_step_ratio")
    assert f.checks[0].what != "the sampling truncation"


def test_the_same_prompt_under_different_group_ids(tmp_path):
    # PeterGriffinJin/Search-R1#88 (issue 37's summary): a group id drawn per repeat, not per prompt. 4 prompts x
    # 5 responses a step, each response with its own id: 100% of the prompts split into groups of 1
    import pandas as pd

    def samples(ids_per_prompt: bool) -> pd.DataFrame:
        rows = [{"step": s, "sample": p * 5 + r, "group": (s * 4 + p) if ids_per_prompt else (s * 20 + p * 5 + r), "prompt": f"q{s}-{p}",
                 "completion": f"a{r}", "reward": float(r % 2)} for s in range(3) for p in range(4) for r in range(5)]
        return pd.DataFrame(rows)

    def run(name, frame):
        path = tmp_path / name
        with RunWriter(path, name=name, config={}) as w:
            for s in range(3):
                w.log_step(s, {"reward/mean": 0.4})
            w.log_samples(frame)
        return diagnose(load_run(path))

    f = finding(run("split", samples(False)), "split_groups")
    assert f is not None and f.evidence[0].value == 1.0 and "5 responses to one prompt under 5 ids" in f.evidence[0].text
    assert finding(run("ok", samples(True)), "split_groups") is None


def _eval_run(tmp_path, evals: list[float], name: str):
    """A 121-step run whose train reward rises 0.05 -> 0.20 (a recommender's reward: noise 0.01) and whose
    held-out score (a recall@10 near 0.04) is logged every 20 steps from step 20 (6 evals)."""
    rng = np.random.default_rng(5)
    n = 121
    path = tmp_path / name
    with RunWriter(path, name=name, config={}) as w:
        for i in range(n):
            row = {"reward/mean": 0.05 + 0.15 * i / n + float(rng.normal(0, 0.01)), "reward/std": 0.1}
            if i % 20 == 0 and i:
                row["eval/pass_rate"] = evals[i // 20 - 1]
            w.log_step(i, row)
    return diagnose(load_run(path))


def test_an_eval_at_004_that_loses_a_fifth_of_itself_falls_in_its_own_units(tmp_path):
    # recgrpo_uncapped's shape (the thread's reading: recall@10 0.042 -> 0.033 while the reward doubles), 100 steps
    # apart. First third median(0.042, 0.040) = 0.041, last third median(0.033, 0.0325) = 0.03275: a fall of
    # 0.00825, 20.1% of its level (>= 10%). Differences -0.002 -0.006 +0.004 -0.005 -0.0005, median -0.002; their
    # absolute deviations 0 .004 .006 .003 .0015 have median 0.003, so the noise is 0.003 x 1.4826 / sqrt 2 =
    # 0.003145 and the fall is 2.62 times it (>= 2). Mann-Kendall: S = -5 -4 -1 -2 -1 = -13 of 15 pairs,
    # tau = -0.867, exact two-sided p = 0.017 (< 0.05). The absolute 0.15 bar would never fire at this level.
    f = finding(_eval_run(tmp_path, [0.042, 0.040, 0.034, 0.038, 0.033, 0.0325], "falls"), "eval_diverges")
    assert f is not None and f.severity == "warning"
    assert f.evidence[0].text.startswith("eval/pass_rate fell from 0.041 to 0.0328 (20.1% of its level, 2.62 times "
                                         "its eval-to-eval noise 0.00315; Mann-Kendall p = 0.017 over 6 evals)")


def test_an_eval_that_wobbles_or_barely_moves_does_not_fall(tmp_path):
    # recgrpo_lambda8's recall@10 order: S = -5 -2 +1 +2 -1 = -5, tau = -0.33, p = 0.47: no trend, however far the
    # first eval is from the last
    assert finding(_eval_run(tmp_path, [0.0495, 0.047, 0.042, 0.039, 0.049, 0.0438], "wobble"), "eval_diverges") is None
    # a perfectly ordered fall (p = 0.0028) of 0.0002 on a 0.04 score: 0.5% of its level, under the tenth
    assert finding(_eval_run(tmp_path, [0.0401, 0.04008, 0.04006, 0.04004, 0.04002, 0.0399], "tiny"),
                   "eval_diverges") is None
    # ordered and a fifth of its level, but its wobble is as large as the fall: first third median 0.0411, last
    # third 0.0331 (fall 0.008); differences -0.0002 -0.0138 +0.0138 -0.0138 -0.0002, median -0.0002, absolute
    # deviations 0 .0136 .014 .0136 0 -> median 0.0136 -> noise 0.0143 > fall / 2
    assert finding(_eval_run(tmp_path, [0.0412, 0.041, 0.0272, 0.041, 0.0272, 0.033], "noisy"), "eval_diverges") is None


def test_a_logged_share_of_zero_advantages_stands_for_the_tied_groups(tmp_path):
    """RDAN-GRPO on ROLL logs advantage/zero_rate (read as adv/zero_frac), the share of responses whose advantage is
    exactly 0, and no tied-group share: every response of a tied group has advantage 0, so a share held above
    ZERO_VAR_WARN = 0.5 is a warning (never critical: responses, not groups), and one at 0.2 is nothing."""
    rng = np.random.default_rng(3)
    reward = 0.4 + 0.001 * np.arange(60) + rng.normal(0, 0.02, 60)
    # 0.70 +- 0.02 on all 60 steps: every windowed median is above 0.5, median 0.70 -> "70.x% of responses"
    high = write(tmp_path, {"reward/mean": reward, "adv/zero_frac": 0.70 + rng.normal(0, 0.01, 60)}, name="high")
    f = finding(diagnose(high), "zero_variance_groups")
    # from the first step the windowed median covers (its first points lack a full window) to the end
    assert f is not None and f.severity == "warning" and f.step_range[1] == 59 and f.step_range[0] <= 3
    assert f.evidence[0].metric == "adv/zero_frac" and f.evidence[0].text.startswith("70.")
    assert "% of responses had advantage exactly 0 on 58 of 60 logged steps" in f.evidence[0].text
    low = write(tmp_path, {"reward/mean": reward, "adv/zero_frac": 0.20 + rng.normal(0, 0.01, 60)}, name="low")
    assert finding(diagnose(low), "zero_variance_groups") is None
    # even at 0.95 it stays a warning: a share of responses is no count of tied groups
    top = write(tmp_path, {"reward/mean": reward, "adv/zero_frac": np.full(60, 0.95)}, name="top")
    assert finding(diagnose(top), "zero_variance_groups").severity == "warning"


def test_a_first_kl_on_a_row_numbered_by_the_reader_is_not_judged_as_step_one(tmp_path):
    """A log with no step column is numbered by its rows (meta.info step_from 'order'): its first row may come after
    any number of updates, so a KL of 2 nats there is no reference mismatch at step 1; with a step column saying
    step 1 it is (2 > REF_KL_FIRST, before the policy could move)."""
    import json

    from collectors import open_run

    rows = [{"reward": 0.3 + 0.01 * i, "kl": 2.0 + 0.01 * i, "loss": 0.1} for i in range(30)]
    plain = tmp_path / "ordered.jsonl"
    plain.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    run = open_run(plain)
    assert run.meta.info.get("step_from") == "order"
    d = diagnose(run)
    assert finding(d, "reference_mismatch") is None
    assert "the steps are row positions" in {n.rule_id: n.reason for n in d.not_judged}["reference_mismatch"]
    stepped = tmp_path / "stepped.jsonl"
    stepped.write_text("".join(json.dumps({"step": i + 1, **r}) + "\n" for i, r in enumerate(rows)), encoding="utf-8")
    assert finding(diagnose(open_run(stepped)), "reference_mismatch") is not None
