"""slime's (THUDM/slime) training and rollout metrics -> canonical names.

Read in THUDM/slime v0.3.1 (main, August 2026): slime/backends/megatron_utils/loss.py (`policy_loss_function`'s
`reported_loss`, `vanilla_tis_function`, `icepop_function`), slime/backends/megatron_utils/model.py (`train`: the
`train/` log dict, step key `train/step`), slime/observability/rollout_metrics.py (`log_rollout_data`,
`compute_metrics_from_samples`: the `rollout/` dict, step key `rollout/step`) and
slime/observability/train_metric_utils.py (`rollout/<rollout_data key>` means). slime/observability/logging_utils.py
`log` hands each dict to wandb (`wandb.log(metrics)`, the step inside as `train/step` / `rollout/step`) and to
TensorBoard (`add_scalar(key, value, step=metrics[step_key])`). Loss metrics are means over samples of each
sample's token mean (`sum_of_sample_mean`).
"""

from __future__ import annotations

SLIME: dict[str, str] = {
    # `train/loss`, `train/grad_norm`, `train/ppo_kl` (old - current log-prob, k1) and `train/entropy_loss` (the
    # entropy itself, before its coefficient) keep TRL's / OpenRLHF's mapping (FAMILIES order), checked to mean
    # the same.
    "pg_loss": "loss/policy",
    # share of tokens where the clipped surrogate binds, either side
    "pg_clipfrac": "policy/clipfrac",
    # the KL to the reference before kl_loss_coef (with --use-kl-loss)
    "kl_loss": "policy/kl_ref",
    # mean |log p train - log p rollout| per token (train: the old log-probs, or the current ones with
    # --use-rollout-logprobs), when the rollout returns log-probs
    "train_rollout_logprob_abs_diff": "policy/rollout_logprob_abs_diff",
    # --use-tis / --get-mismatch-metrics: the per-token ratio exp(log p old - log p rollout) before the clamp
    # (TIS) or the mask (icepop), and the share of tokens the clamp or mask changed
    "tis": "policy/rollout_is_ratio_mean",
    "tis_clipfrac": "policy/rollout_is_masked_frac",
    # Sample.Status.TRUNCATED: the response hit the rollout's max response length
    "rollout/truncated_ratio": "completions/truncated_frac",
    "rollout/response_len/mean": "completions/len_mean",
    "rollout/response_len/max": "completions/len_max",
    # the reward before any normalisation, mean over the step's samples
    "rollout/raw_reward": "reward/mean",
}
# not mapped: `tis_abs` (mean |ratio - 1|), `ois` (current/old ratio, exp(-ppo_kl)); `rollout/zero_std/count_<r>`:
# how many prompt groups all scored r, a count (the fraction needs the number of groups, rollout_batch_size, which
# the TensorBoard and wandb logs do not carry); `train/lr-pg_<i>` (one per parameter group); `perf/*`.
