"""Answers for verl's Hydra config (`algorithm.*`, `actor_rollout_ref.actor.*`, `data.*`)."""

from __future__ import annotations

from dashboard.diagnosis.rules.config_questions.questions import UNKNOWN, Lookup, Reader, reuse_text, truthy


def _verl_q1(lk: Lookup) -> str:
    est, norm = lk.get("algorithm.adv_estimator"), lk.get("algorithm.norm_adv_by_std_in_grpo")
    if est is None:
        return UNKNOWN
    if str(est) == "grpo":
        if norm is None:
            return "group baseline (adv_estimator grpo); whether it divides by the std is not recorded"
        return ("per prompt group: (r - group mean) / group std" if truthy(norm)
                else "group mean subtracted, not divided by the std (Dr. GRPO)")
    return f"adv_estimator {est}"


def _verl_q2(lk: Lookup) -> str:
    agg, mode = lk.get("actor.loss_agg_mode"), lk.get("actor.policy_loss.loss_mode")
    if agg is None and mode is None:
        return UNKNOWN
    ratio = {"vanilla": "ratio per token", "gspo": "sequence-level ratio (GSPO)"}
    return "; ".join([ratio.get(str(mode), f"loss_mode={mode}") if mode is not None else "ratio level unknown",
                      f"loss aggregation {agg}" if agg is not None else "aggregation unknown"])


def _verl_q3(lk: Lookup) -> str:
    name, dtype = lk.get("rollout.name"), lk.get("rollout.dtype")
    if name is None:
        return UNKNOWN
    text = f"rollouts by {name}"
    if dtype is not None:
        text += f" in {dtype}"
    return text + "; verl recomputes the old log-probs with the actor before the update"


def _verl_q4(lk: Lookup) -> str:
    in_loss, in_reward = truthy(lk.get("actor.use_kl_loss")), truthy(lk.get("algorithm.use_kl_in_reward"))
    if in_loss is None and in_reward is None:
        return UNKNOWN
    if in_loss and in_reward:
        return "both in the loss and in the reward: counted twice"
    if in_loss:
        return f"added to the loss ({lk.get('actor.kl_loss_type')}, coef {lk.get('actor.kl_loss_coef')})"
    if in_reward:
        return f"folded into the reward (coef {lk.get('algorithm.kl_ctrl.kl_coef')})"
    return "not used"


def _verl_q5(lk: Lookup) -> str:
    epochs, batch, mini = lk.get("actor.ppo_epochs"), lk.get("data.train_batch_size"), lk.get("actor.ppo_mini_batch_size")
    if epochs is None:
        return UNKNOWN
    try:
        m = max(1, int(batch) // int(mini)) if batch is not None and mini is not None else 1
    except (TypeError, ValueError, ZeroDivisionError):
        m = 1
    return reuse_text(epochs, m)


READER: Reader = (_verl_q1, _verl_q2, _verl_q3, _verl_q4, _verl_q5)
