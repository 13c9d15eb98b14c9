"""open-instruct's (allenai/open-instruct) GRPO metrics -> canonical names.

Read in allenai/open-instruct main of August 2026 (e6c3044): open_instruct/grpo_utils.py
(`compute_vllm_local_debug_metrics`, `compute_rho_correction`, `populate_sample_loss_stats`,
`compute_metrics_from_loss_stats`), open_instruct/model_utils.py (`estimate_kl`), open_instruct/data_loader.py (the
batch's `scores`, `val/` statistics) and open_instruct/grpo_fast.py (`one_training_step`: the step's dict, loss
statistics averaged over workers weighted by their tokens). With tracking on it calls `wandb.define_metric("*",
step_metric="training_step")` and `wandb.log(metrics)`, `training_step` from 1 inside the dict.

"local" is the trainer's log-probs of the sampled response, recomputed with the weights of the current
mini-batch pass; "vllm" the engine's, returned with the rollout. With one mini-batch and one epoch per step the gap
is the engines' alone; later passes add the update's own drift.
"""

from __future__ import annotations

OPEN_INSTRUCT: dict[str, str] = {
    # `lr` keeps NeMo-RL's mapping (FAMILIES order), checked to mean the same: the scheduler's learning rate.
    # mean |log p local - log p vllm| over response tokens, and its largest token (logged since October 2025)
    "debug/vllm_vs_local_logprob_diff_mean": "policy/rollout_logprob_abs_diff",
    "debug/vllm_vs_local_logprob_diff_max": "policy/rollout_logprob_abs_diff_max",
    # use_rho_correction: share of response tokens the rho mask dropped (a response dropped whole, with
    # rho_mask_sequence_level, counts all its tokens)
    "val/rho_drop_frac": "policy/rollout_is_masked_frac",
    # estimate_kl [2]: expm1(-(new - ref)) + (new - ref), the k3 estimate of KL(current || reference), token mean
    "objective/kl2_avg": "policy/kl_ref",
    # the KL term of the loss: estimate kl_estimator times beta
    "loss/kl_avg": "loss/kl",
    "loss/policy_avg": "loss/policy",
    "loss/total_avg": "loss/total",
    # dapo loss: the clipped surrogate binds; cispo: the ratio above 1 + clip_higher (the only side it clips)
    "policy/clipfrac_avg": "policy/clipfrac",
    "policy/entropy_avg": "policy/entropy",
    # the PPO ratio exp(new - old), token mean
    "val/ratio": "policy/ratio_mean",
    # the mean of the step's scores: the sum of its reward functions per response, before any normalisation
    "scores": "reward/mean",
    "val/sequence_lengths": "completions/len_mean",
    "val/sequence_lengths_max": "completions/len_max",
    "val/advantages_mean": "adv/mean",
}
# not mapped: `debug/vllm_vs_local_logprob_diff_std`; `debug/vllm_local_reverse_kl` (the mean of p_vllm x (log p
# vllm - log p local) on the sampled tokens: the sampled token's own probability weighs it again, so it is no
# estimate of a KL); `val/rho_weight` (per-token weights, or each response's geometric mean spread over its tokens
# with rho_mask_sequence_level: the level is the config's, not the key's) and `val/rho_clipfrac`; `objective/kl0_avg`,
# `kl1_avg`, `kl3_avg` (other estimators of the same KL); `val/stop_rate` (responses that ended on a stop: the
# complement of the truncated share, with errors in neither); `real_batch_size_ratio`, `val/total_reward_groups`.
