"""ms-swift's GRPO rollout-correction metrics -> canonical names.

Read in modelscope/ms-swift v4.4.3: swift/rlhf_trainers/grpo_trainer.py (`_compute_rollout_offpolicy_metrics`,
`_compute_is_correction_metrics`, `_apply_rollout_importance_sampling`; logged as `rollout_correction/<key>` in
`self._metrics[mode]`, then by the transformers Trainer's `log`: trainer_state.json, logging.jsonl, wandb,
TensorBoard as `train/rollout_correction/<key>`). ms-swift's GRPO trainer logs TRL's keys for the rest (reward,
reward_std, frac_reward_zero_std, completions/*, kl, clip_ratio/*), which keep TRL's mapping.
"""

from __future__ import annotations

MS_SWIFT: dict[str, str] = {
    # k3 estimate of KL(rollout || training) per completion token, clamped to [-10, 10] per token
    "rollout_correction/k3_kl": "policy/rollout_kl",
}
# placed by the config (collectors/levels.py, rollout_importance_sampling_mode): `rollout_correction/is_weight_mean`,
# `rollout_correction/clipped_frac`. Not mapped: `rollout_correction/kl` (the k1 estimate of the same KL, signed;
# k3 above is the column), `log_ppl_diff` / `log_ppl_abs_diff` / `ppl_ratio` (per-sequence differences of the mean
# log-probs: signed gaps cancel inside a sequence, so they are not a per-token gap), `chi2_token` (E[rho^2] - 1 per
# token), `chi2_seq` (the same on each sequence's geometric-mean ratio, not a product), `ess`, `training_ppl`,
# `rollout_ppl`.
