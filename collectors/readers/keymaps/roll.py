"""ROLL's (alibaba/ROLL) RLVR pipeline metrics -> canonical names.

Read in alibaba/ROLL main of August 2026 (8eb27cc) and, for the keys it renamed, the December 2025 tree (aa6ad59,
the ROLL Flash era): roll/pipeline/rlvr/actor_worker.py (`loss_func`: the `actor/` dict),
roll/utils/train_infer_corrections.py (`compute_train_infer_correction`: the `actor/train_infer_*` dict; before
it, the same loss_func), roll/utils/metrics/metrics_manager.py (`add_values_metrics`: `critic/`,
`add_token_metrics`: `token/`, `add_group_metrics`: `group/`), roll/pipeline/base_worker.py (`actor/lr`) and the
strategies (`<worker name>/grad_norm`, `actor_train/grad_norm` by default). roll/pipeline/rlvr/rlvr_pipeline.py
hands the step's dict to roll/utils/tracking.py `tracker.log(values, step=global_step)` (global_step from 0,
also logged as `system/step`); the trackers (TensorBoard `add_scalar(key, value, global_step)`, wandb
`run.log(values, step=step)`, SwanLab alike) first strip the `@sum` / `@max` reducer tags from the names.

"train" is the training engine's log-probs of the rollout batch before the update (`old_log_probs`, recomputed),
"infer" the rollout engine's (`infer_logprobs`): `exp(train - infer)` is the train/rollout ratio of the schema.
Loss statistics are `seq-mean-token-mean` (a mean over responses of each response's token mean) unless noted.
"""

from __future__ import annotations

ROLL: dict[str, str] = {
    # `actor/pg_loss`, `actor/kl_loss` (k3 KL to the reference, before kl_loss_coef), `actor/lr`, `critic/score/*`
    # (the reward worker's score, before any shaping) and `critic/advantages/mean` keep verl's mapping (FAMILIES
    # order), checked to mean the same.
    # the ratio exp(train - infer) token by token, its mean; `..._token_mean` since 2026, `..._mean` before
    "actor/train_infer_ratio_token_mean": "policy/rollout_is_ratio_mean",
    "actor/train_infer_ratio_mean": "policy/rollout_is_ratio_mean",
    # exp(sum over the response of (train - infer)): one product ratio per response, its mean over responses
    "actor/train_infer_ratio_sequence_mean": "policy/rollout_is_seq_ratio_mean",
    # the PPO ratio current/old over response tokens, and its extremes over the micro-batch
    "actor/ratio_mean": "policy/ratio_mean",
    "actor/ratio_max": "policy/ratio_max",
    # share of tokens where the clipped surrogate binds (surr2 < surr1), either side
    "actor/clipfrac": "policy/clipfrac",
    # kl_penalty "mse": (current - old)^2 / 2 per token, a second-order estimate of KL(old || current)
    "actor/approxkl": "policy/approx_kl_old",
    "actor/total_loss": "loss/total",
    "actor_train/grad_norm": "optim/grad_norm",
    "token/response_length/mean": "completions/len_mean",
    "token/response_length/max": "completions/len_max",
}
# not mapped: `actor/train_infer_diff_*` (p train - p infer, signed: opposite gaps cancel in its mean);
# `actor/train_infer_ratio_geometric_mean` (exp of each response's mean log gap: per-token scale, neither a
# token ratio nor a product) and `_segment_mean` (per turn); the filters' pass rates
# `actor/train_infer_*_mask_mean` and `actor/train_infer_final_mask_mean` (a share kept, 1 when off) and
# `actor/is_weight_clipfrac` (a share of tokens or of responses as `is_weight.weight_type` says);
# `actor/ppo_ratio_clipfrac` and its `_high` / `_low` (ratio outside the clip range whatever the advantage's sign);
# `actor/policykl` (current - old, k1 with the sign of a log ratio); `critic/correct/mean` and `group/*_groups_ratio`
# (ROLL takes a score of exactly 1 as correct and 0 as incorrect, so a -1/1 reward has no incorrect group);
# `token/total_response_length/clip` (a count of responses at the length cap, not a fraction).
