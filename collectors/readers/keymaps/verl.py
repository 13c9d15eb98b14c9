"""verl's trainer metrics -> canonical names."""

from __future__ import annotations

# verl (ray_trainer metrics; file logger, console, wandb).
VERL: dict[str, str] = {
    # critic/score is the verifier score, critic/rewards the score after KL-in-reward shaping.
    "critic/score/mean": "reward/mean",
    "critic/score/min": "reward/min",
    "critic/score/max": "reward/max",
    "actor/pg_clipfrac": "policy/clipfrac",
    # actor/pg_clipfrac_lower is the dual-clip bound (negative advantages, ratio > clip_ratio_c), not 1 - eps
    "actor/pg_clipfrac_lower": "policy/clipfrac_dual",
    # ppo_kl is the KL between the old (rollout-time) and current policy, a staleness gauge.
    "actor/ppo_kl": "policy/approx_kl_old",
    "actor/entropy": "policy/entropy",
    # Older verl logged the entropy itself under this name (the coefficient is applied elsewhere).
    "actor/entropy_loss": "policy/entropy",
    # kl_loss is the mean KL to the reference, before the coefficient.
    "actor/kl_loss": "policy/kl_ref",
    "actor/pg_loss": "loss/policy",
    "actor/grad_norm": "optim/grad_norm",
    "actor/lr": "optim/lr",
    "critic/advantages/mean": "adv/mean",
    "response_length/mean": "completions/len_mean",
    "response_length/max": "completions/len_max",
    # Fraction of responses that reached the response length limit.
    "response_length/clip_ratio": "completions/truncated_frac",
    # With rollout.calculate_log_probs: |p rollout - p actor| over response tokens, in probabilities (not logs).
    "training/rollout_probs_diff_mean": "policy/rollout_prob_abs_diff",
    "training/rollout_probs_diff_max": "policy/rollout_prob_abs_diff_max",
    "timing_s/step": "perf/step_s",
    "timing/step": "perf/step_s",
    "perf/throughput": "perf/tokens_per_s",
    "perf/time_per_step": "perf/step_s",
    # KL in the reward (algorithm.use_kl_in_reward): the mean per-token KL of the rollout policy to the
    # reference, and its coefficient; newer verl names them actor/reward_kl_penalty(_coeff).
    "critic/kl": "policy/kl_ref",
    "critic/kl_coeff": "policy/kl_coef",
    "actor/reward_kl_penalty": "policy/kl_ref",
    "actor/reward_kl_penalty_coeff": "policy/kl_coef",
    # Online filtering: fraction of prompt groups whose responses all scored 0 / all scored 1, before the filter.
    "rollout/too_bad_sample_ratio": "groups/all_fail_frac",
    "rollout/too_good_sample_ratio": "groups/all_pass_frac",
}
