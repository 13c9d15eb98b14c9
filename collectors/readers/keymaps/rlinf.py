"""RLinf's (RLinf/RLinf) reasoning GRPO metrics -> canonical names.

Read in RLinf/RLinf main of August 2026 (a3816b5): rlinf/algorithms/losses.py (`compute_ppo_actor_loss`: the
`actor/` dict of each micro-batch), rlinf/workers/actor/fsdp_actor_worker.py (`training_step`: the micro-batch
means, `actor/rollout_train_kl`, `actor/grad_norm`, `actor/lr`), rlinf/utils/distributed.py
(`compute_rollout_metrics`) and rlinf/runners/reasoning_runner.py, which logs through rlinf/utils/metric_logger.py
(`MetricLogger.log(data, step)`: TensorBoard `add_scalar(key, value, step)`, wandb, SwanLab) the rollout dict as
`rollout/<key>` and each mini-batch's training dict as `actor/training/<key>` (since March 2026; `train/<key>`
before, which the readers strip to the key itself, `actor/grad_norm` and the like), at step (global step - 1) x
n_minibatches (+ the mini-batch's index), from 0.
"""

from __future__ import annotations

_BASE: dict[str, str] = {
    # `actor/grad_norm` and `actor/lr` mean what verl's keys of the same names mean (mapped there; below under
    # the 2026 prefix).
    # despite its name, the mean |log p recomputed - log p rollout| over response tokens (of the step's last
    # micro-batch), with recompute_logprobs and return_logprobs on
    "actor/rollout_train_kl": "policy/rollout_logprob_abs_diff",
    "actor/policy_loss": "loss/policy",
    "actor/final_loss": "loss/total",
    # the PPO ratio exp(current - old), token mean
    "actor/ratio": "policy/ratio_mean",
    # share of tokens where the clipped surrogate binds
    "actor/clip_fraction": "policy/clipfrac",
    # -(current - old) token mean: a first-order estimate of KL(old || current)
    "actor/approx_kl": "policy/approx_kl_old",
}

RLINF: dict[str, str] = {
    **_BASE,
    **{f"actor/training/{k}": v for k, v in _BASE.items()},
    "actor/training/actor/grad_norm": "optim/grad_norm",
    "actor/training/actor/lr": "optim/lr",
    # the mean reward over the step's responses, as the reward worker gave it
    "rollout/reward_scores": "reward/mean",
    "rollout/response_length": "completions/len_mean",
    "rollout/max_of_response_length": "completions/len_max",
    "rollout/advantages_mean": "adv/mean",
}
# not mapped: `actor/entropy_loss` and `actor/kl_loss` under the 2026 prefix: RLinf logs 0.0 when it computes neither
# (calculate_entropy off, kl_beta 0), which would read as an entropy collapsed to 0 (under the old `train/` prefix
# verl's map takes them, as verl's own keys); `rollout/fraction_of_samples_properly_ended` (the complement of the truncated share);
# `actor/clipped_ratio`, `actor/dual_cliped_ratio`, `actor/ratio_abs`, `actor/policy_loss_abs`; the decoupled
# (proximal) loss's `actor/behav_approx_kl` and `actor/behav_clip_fraction` (behaviour policy vs a proximal one
# interpolated between weight versions: staleness, not the engines' numerics).
