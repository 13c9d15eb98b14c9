"""Causes users hit (issue 37): rollouts from weights the engine should no longer hold (huggingface/trl#5312: vLLM's
sleep mode wakes the engine without the weights just synced) and a resume that is not seamless (THUDM/slime#1695).
Runs are written with the real RunWriter; every number is worked out by hand beside it."""

from __future__ import annotations

import numpy as np

from collectors import RunWriter, load_run
from dashboard.diagnosis import diagnose


def write(tmp_path, rows: dict[str, np.ndarray], steps=None, config: dict | None = None, name: str = "r"):
    n = len(next(iter(rows.values())))
    steps = range(1, n + 1) if steps is None else steps
    with RunWriter(tmp_path / name, name=name, config=config or {"num_generations": 8}) as w:
        for i, s in enumerate(steps):
            w.log_step(int(s), {k: float(v[i]) for k, v in rows.items()})
    return load_run(tmp_path / name)


def finding(d, rule_id):
    return next((f for f in d.findings if f.rule_id == rule_id), None)


def trl_5312(gap: np.ndarray, ratio: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """The thread's run: TRL GRPO, 10 steps (10 epochs of one step, 0.372 steps/s over 26.87 s), learning rate
    1e-6, loss 0.0, grad norm 4.9e-6, length reward 0.0066 (std 0.0061), 52.75 tokens a completion, entropy 2.14;
    at its last step the per-token gap (sampling/sampling_logp_difference/mean) is 0.809 nats, its largest token
    7.43, the IS ratio mean 3.25e-7. `gap` is the per-token gap of its 10 steps, `ratio` the mean IS ratio
    (default exp(-gap), a ratio that moves with the gap)."""
    n = len(gap)
    return {"reward/mean": np.full(n, 0.0066), "reward/std": np.full(n, 0.0061), "loss/total": np.zeros(n),
            "optim/grad_norm": np.full(n, 4.9e-6), "optim/lr": np.full(n, 1e-6),
            "completions/len_mean": np.full(n, 52.75), "policy/entropy": np.full(n, 2.14),
            "policy/rollout_logprob_abs_diff": gap, "policy/rollout_logprob_abs_diff_max": np.r_[0.3, np.full(n - 1, 7.43)],
            "policy/rollout_is_ratio_mean": np.exp(-gap) if ratio is None else ratio}


def test_a_gap_at_numerics_that_jumps_after_the_first_step_and_stays_names_the_weight_sync_first(tmp_path):
    # step 1: the engine's first generate uses the weights it loaded itself, the trainer's (bf16 numerics: 0.012
    # nats a token, under the 0.1 bound); from step 2, after the first sleep and wake-up, 0.78-0.83, ending at the
    # thread's 0.809. Before the jump: median 0.012; from step 2: sorted .78 .79 .79 .80 .809 .81 .81 .82 .83 ->
    # median 0.809 >= 3 x 0.012, step 2's 0.78 >= half of it, and 9 of 9 later steps beyond 0.1 (>= 80%, >= 3).
    gap = np.array([0.012, 0.78, 0.81, 0.83, 0.79, 0.80, 0.82, 0.79, 0.81, 0.809])
    ratio = np.r_[0.99, np.full(9, 3.25e-7)]  # the thread's 3.25e-7 once the weights are lost
    f = finding(diagnose(write(tmp_path, trl_5312(gap, ratio))), "first_step_ratio")
    assert f is not None and f.severity == "warning"
    assert f.title == ("The rollout engine's log-probs jump away from the trainer's and stay: the engine samples "
                       "from other weights")
    assert f.checks[0].what == "the weight sync to the inference engine"
    assert f.step_range == (2, 10)
    assert f.evidence[0].text.startswith("mean |log p rollout - log p train| sits at 0.012 (within numerics) until "
                                         "step 1, then jumps to 0.78 at step 2 and stays (median 0.809 over 9 logged "
                                         "steps)")
    # the IS ratio says the same beside it (|3.25e-7 - 1| ~ 1 > 0.05); the gap column is not said twice
    assert [e.metric for e in f.evidence].count("policy/rollout_logprob_abs_diff") == 1
    assert any(e.metric == "policy/rollout_is_ratio_mean" for e in f.evidence)


def test_a_gap_beyond_numerics_from_the_first_step_or_a_climb_or_a_spike_is_no_weight_sync_jump(tmp_path):
    # beyond the bound from step 1 (0.3 everywhere): no step within numerics, so nothing says the weights were
    # ever right; the engine-gap finding keeps its own first check
    f = finding(diagnose(write(tmp_path, trl_5312(np.full(10, 0.3)), name="from1")), "first_step_ratio")
    assert f is not None and f.checks[0].what != "the weight sync to the inference engine"
    assert f.title == "The rollout engine's log-probs are far from the trainer's"
    # a steady climb 0.01 -> 0.91 in steps of 0.1: first beyond 0.1 at step 3 (0.21), the later median
    # (0.21 .. 0.91, 8 values) is 0.56: 0.21 < half of it, so the crossing is no jump (the growing-gap
    # evidence judges a climb)
    climb = np.round(np.linspace(0.01, 0.91, 10), 3)
    f = finding(diagnose(write(tmp_path, trl_5312(climb), name="climb")), "first_step_ratio")
    assert f is None or f.checks[0].what != "the weight sync to the inference engine"
    # one step at 0.8 among steps at 0.012: 1 of 9 later steps beyond the bound, not 80%
    spike = np.r_[0.012, 0.012, 0.8, np.full(7, 0.012)]
    f = finding(diagnose(write(tmp_path, trl_5312(spike), name="spike")), "first_step_ratio")
    assert f is None or f.checks[0].what != "the weight sync to the inference engine"


def slime_1695(gap_after: float, reward_after: float):
    """THUDM/slime#1695's shape: --save-interval 20; the first process logged rollouts 1-40 (its rows after the
    checkpoint at 40 never reached the log: it crashed before they were flushed), the resumed one logs from 48 to
    80. Before the resume the rollout-vs-train gap sits at 0.02 nats a token (bf16 numerics, under the 0.1
    bound) and the raw reward at 0.55 +- 0.01 (0.56 on even steps, 0.54 on odd), with a spread of 0.45 between
    responses; for the resumed process's first 4 rollouts (48-51) the gap is `gap_after` and the reward
    `reward_after`, then both are back."""
    steps = np.r_[np.arange(1, 41), np.arange(48, 81)]
    first = (steps >= 48) & (steps <= 51)
    rows = {"reward/mean": np.where(first, reward_after, 0.55 + 0.01 * (-1.0) ** steps),
            "reward/std": np.full(len(steps), 0.45),
            "policy/rollout_logprob_abs_diff": np.where(first, gap_after, 0.02)}
    return rows, steps


def test_a_jump_in_the_gap_and_the_reward_at_a_step_gap_is_a_resume_that_is_not_seamless(tmp_path):
    # the seam: 40 -> 48, 8 strides of 1 (> 3). Gap: the 5 points before (36-40) have median 0.02, the 5 from 48
    # (0.45 x 4, 0.02) median 0.45 > 0.1 and 22.5 times 0.02 (>= 3). Reward: before 0.56 .54 .56 .54 .56 ->
    # 0.56; after 0.12 x 4, 0.56 -> 0.12: a shift of -0.44, 0.98 of the 0.45 spread (>= 0.2) and about 21 times
    # the step-to-step noise (differences of +-0.02: MAD 0.02 x 1.4826 / sqrt 2 = 0.021; >= 4)
    rows, steps = slime_1695(0.45, 0.12)
    f = finding(diagnose(write(tmp_path, rows, steps)), "resume_jump")
    assert f is not None and f.severity == "warning"
    assert f.title == "The run jumps at its resume (step 48): the resume is not seamless"
    assert f.step_range == (48, 52)
    assert [c.what for c in f.checks] == ["the optimizer and scheduler state of the resumed checkpoint",
                                          "the weight sync to the inference engine"]
    texts = [e.text for e in f.evidence]
    assert texts[0] == ("logged steps jump from 40 to 48 (a logging stride is 1): rows are missing, as after a "
                        "relaunch")
    assert texts[1].startswith("mean |log p rollout - log p train| is 0.02 before the seam and 0.45 after it "
                               "(> 0.1, 22.5 times)")
    assert texts[2].startswith("reward 0.56 before the seam, 0.12 after it: a shift of -0.44, 21 times its "
                               "step-to-step noise and 0.978 of its spread 0.45")


def test_a_seamless_resume_or_a_jump_without_a_seam_is_no_resume_finding(tmp_path):
    # the same step gap, nothing jumps at it: a seamless resume
    rows, steps = slime_1695(0.02, 0.55)
    assert finding(diagnose(write(tmp_path, rows, steps, name="seamless")), "resume_jump") is None
    # the same jump with the steps logged without a gap (1-73): no resume to blame
    rows, _ = slime_1695(0.45, 0.12)
    assert finding(diagnose(write(tmp_path, rows, np.arange(1, 74), name="noseam")), "resume_jump") is None
    # a seam where the reward moves by two of its noise (0.56 -> 0.52 is 0.04: 1.9 x 0.021 < 4): a wobble
    rows, steps = slime_1695(0.02, 0.52)
    assert finding(diagnose(write(tmp_path, rows, steps, name="wobble")), "resume_jump") is None


def test_both_findings_read_in_chinese(tmp_path):
    from dashboard.diagnosis import i18n

    rows, steps = slime_1695(0.45, 0.12)
    gap = np.array([0.012, 0.78, 0.81, 0.83, 0.79, 0.80, 0.82, 0.79, 0.81, 0.809])
    found = [finding(diagnose(write(tmp_path, rows, steps)), "resume_jump"),
             finding(diagnose(write(tmp_path, trl_5312(gap), name="sync")), "first_step_ratio")]
    for f in found:
        zh = i18n.localise_finding(f, "zh")
        assert i18n.has_title(f.rule_id, f.title, "zh") and zh.checks[-1].what != f.checks[-1].what
        missing = [e.text for e in f.evidence if not e.text.startswith("largest ") and not i18n.has_evidence(e.text, "zh")]
        assert not missing


def test_a_resume_the_reader_joined_is_a_seam_without_a_step_gap(tmp_path):
    # slime's TensorBoard logs, as two processes write them into one folder: rollouts 0-40 by the first, 41-80 by
    # the resumed one (a second event file, steps continuous). The reader joins the second file as "the same run
    # resumed" from step 41; at that seam the gap goes 0.02 -> 0.45 (41-44) and the raw reward 0.55 -> 0.12.
    import time

    from torch.utils.tensorboard import SummaryWriter

    from collectors import open_run

    def rows(lo: int, hi: int):
        for s in range(lo, hi + 1):
            hit = 41 <= s <= 44
            yield s, {"train/train_rollout_logprob_abs_diff": 0.45 if hit else 0.02,
                      "rollout/raw_reward": 0.12 if hit else 0.55 + 0.01 * (-1) ** s, "train/grad_norm": 0.3}

    folder = tmp_path / "slime_tb"
    for lo, hi in ((0, 40), (41, 80)):
        w = SummaryWriter(log_dir=str(folder))
        for s, metrics in rows(lo, hi):
            for k, v in metrics.items():
                w.add_scalar(k, v, s)
        w.close()
        time.sleep(1.1)  # the event file's name carries the second it was opened: two launches, two files
    d = diagnose(open_run(str(folder)))
    f = finding(d, "resume_jump")
    assert f is not None and f.title == "The run jumps at its resume (step 41): the resume is not seamless"
    assert f.evidence[0].text == "the reader joined a resumed or restarted launch at step 41"
