"""Tinker's (thinking-machines-lab/tinker-cookbook) RL metrics -> canonical names.

Read in tinker-cookbook main of August 2026 (9dfcc3a): tinker_cookbook/rl/metrics.py (`compute_kl_sample_train`),
tinker_cookbook/rl/metric_util.py (`compute_trajectory_metrics`: `env/all/...`, `_compute_by_group_metrics`) and
tinker_cookbook/rl/train.py, which hands the step's dict to tinker_cookbook/utils/ml_log.py `log_metrics(metrics,
step=i_batch)`: the JSON logger appends `{"step": i_batch, **metrics}` to LOG_PATH/metrics.jsonl (steps from 0,
config in config.json), wandb logs it with that step.

"sample" is the sampler's log-probs returned with the rollout, "train" the training client's log-probs of the
same tokens from forward_backward, before the step's optimizer update: with on-policy batches the two engines'
gap; with async training (max_steps_off_policy > 0) a sampler a few updates old adds its staleness.
"""

from __future__ import annotations

TINKER: dict[str, str] = {
    # `optim/lr` is the canonical name itself.
    # mean over action tokens of log p sample - log p train: a k1 estimate of KL(sampler || trainer) per token
    "optim/kl_sample_train_v1": "policy/rollout_kl",
    # -mean log p sample over action tokens: the sampler's entropy per token, estimated on its own samples
    "optim/entropy": "policy/entropy",
    # mean total reward per trajectory over the batch
    "env/all/reward/total": "reward/mean",
    # single-turn tasks (one turn per episode): the mean response length in tokens
    "env/all/ac_tokens_per_turn": "completions/len_mean",
    # groups whose rewards are all equal, at or above 0.5 (all good) or below it (all bad)
    "env/all/by_group/frac_all_good": "groups/all_pass_frac",
    "env/all/by_group/frac_all_bad": "groups/all_fail_frac",
}
# not mapped: `optim/kl_sample_train_v2` (mean (sample - train)^2 / 2, a second-order estimate of the same KL,
# neither k1 nor k3); `kl_pre_post_v1` / `_v2` (sampler before vs after the update: the step's own move);
# `env/all/by_group/frac_mixed` (the complement of the tied share); `env/<tag>/...` (a subset of the groups).
