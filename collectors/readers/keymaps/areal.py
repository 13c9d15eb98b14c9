"""AReaL's (inclusionAI/AReaL) PPO actor statistics -> canonical names.

Read in inclusionAI/AReaL v1.0.4: areal/trainer/ppo/actor.py (`ppo_update` under stats_tracker scope
`ppo_actor`, its `update` scope per minibatch; `_ppo_update_stats`), areal/utils/functional/functional.py
(`ppo_actor_loss_fn`, `apply_rejection_sampling`), areal/utils/stats_tracker.py (`_aggregate`: a token or sequence
statistic becomes `<key>/avg`, `/min`, `/max`) and areal/utils/stats_logger.py (`StatsLogger.commit`: each dict to
wandb / swanlab / trackio `log(item, step=global_step)` and TensorBoard `add_scalar(key, val, global_step)`, steps
from 0).
"""

from __future__ import annotations

_U = "ppo_actor/update/"  # per-token statistics of the minibatch updates (denominator n_valid_tokens)

AREAL: dict[str, str] = {
    # exp(log p current - log p proximal): the PPO ratio, exactly 1 with one minibatch per step
    _U + "importance_weight/avg": "policy/ratio_mean",
    _U + "importance_weight/max": "policy/ratio_max",
    _U + "clip_ratio/avg": "policy/clipfrac",
    _U + "dual_clip_ratio/avg": "policy/clipfrac_dual",
    _U + "entropy/avg": "policy/entropy",
    _U + "actor_loss/avg": "loss/policy",
    # share of the trainable tokens the rejection sampling masked or clamped (counted in tokens at either level)
    _U + "rs_filtered_fraction": "policy/rollout_is_masked_frac",
    # sequence statistics of the rollout batch (denominator n_seqs)
    "ppo_actor/task_reward/avg": "reward/mean",
    "ppo_actor/task_reward/min": "reward/min",
    "ppo_actor/task_reward/max": "reward/max",
    # a sequence that fills the batch's padded length: no end token within the budget
    "ppo_actor/no_eos_ratios/avg": "completions/truncated_frac",
}
# not mapped (the correction of the behaviour policy, decoupled PPO): `behave_imp_weight/avg` is
# exp(log p proximal - log p behaviour) averaged over the tokens the rejection sampling kept only (masked ones
# leave the mean instead of counting as 0), a geometric mean per sequence at level=sequence;
# `behave_approx_kl/avg` is log p proximal - log p behaviour over the same tokens, a signed k1 estimate of
# -KL(behaviour || proximal) (collectors/levels.py turns it into policy/rollout_kl). In an asynchronous run the
# behaviour policy is the rollout's weights version, up to max_head_offpolicyness versions old, so both mix
# staleness with the engine's numerics; `ppo_actor/seq_len/avg` counts prompt and response.
