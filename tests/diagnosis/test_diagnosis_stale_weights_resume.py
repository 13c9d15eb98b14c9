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
