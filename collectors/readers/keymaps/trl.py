"""TRL's GRPOTrainer log keys -> canonical names."""

from __future__ import annotations

# TRL GRPOTrainer log keys (trainer_state.json log_history, wandb, TensorBoard; trl/trainer/grpo_trainer.py) (trainer_state.json log_history, wandb, TensorBoard).
TRL: dict[str, str] = {
    "reward": "reward/mean",
    # TRL's reward_std is the std over the whole batch, like our reward/std (not a within-group std).
    "reward_std": "reward/std",
    # Counts zero-variance groups only when scale_rewards is "group" or "none"; with "batch" it is 0 or 1.
    "frac_reward_zero_std": "groups/zero_std_frac",
    "completions/mean_length": "completions/len_mean",
    "completions/max_length": "completions/len_max",
    # Fraction of completions that hit max_completion_length without EOS: our truncated fraction.
    "completions/clipped_ratio": "completions/truncated_frac",
    "kl": "policy/kl_ref",
    "entropy": "policy/entropy",
    "clip_ratio/region_mean": "policy/clipfrac",
    "clip_ratio/low_mean": "policy/clipfrac_low",
    "clip_ratio/high_mean": "policy/clipfrac_high",
    # Without EOS the whole completion is cut; TRL logs 0 here when no completion of the step ended (min and max
    # of the terminated lengths have no canonical twin and stay under their own names).
    "completions/mean_terminated_length": "completions/terminated_len_mean",
    # vLLM-vs-trainer importance sampling diagnostics; ours is the mean |log p rollout - log p train|.
    "sampling/sampling_logp_difference/mean": "policy/rollout_logprob_abs_diff",
    "sampling/sampling_logp_difference/max": "policy/rollout_logprob_abs_diff_max",
    # `sampling/importance_sampling_ratio/mean` is not here: its level (per token or per response, a product of
    # token ratios) follows the run's vllm_importance_sampling_mode, so collectors/levels.py places it from the
    # config. TRL logs it after its correction (clamped in the *_truncate modes, 0 where masked in the *_mask
    # modes; 0.26 on default sequence_mask, clip_max 3): the weight the loss used, not the raw ratio. Its min and
    # max are bounded by the clip and have no canonical twin (they stay under their own names).
    "loss": "loss/total",
    "grad_norm": "optim/grad_norm",
    "learning_rate": "optim/lr",
    # TRL: seconds in training_step summed over one optimizer step (generation included, data loading not)
    "step_time": "perf/step_s",
    "eval_reward": "eval/reward_mean",
}
# The transformers Trainer's end-of-training summary, logged once at the last step: not a step's metric.
TRAINER_SUMMARY_KEYS = frozenset({"train_runtime", "train_samples_per_second", "train_steps_per_second",
                                  "train_loss", "total_flos"})
