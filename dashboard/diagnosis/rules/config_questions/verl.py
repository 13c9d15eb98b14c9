"""Answers for verl's Hydra config (`algorithm.*`, `actor_rollout_ref.actor.*`, `data.*`) and, where the config does
not say where the KL went, verl's own log."""

from __future__ import annotations

from collections.abc import Callable

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


# Where verl puts the KL, by version (verl's ray_trainer.py and ppo_trainer.yaml at each tag):
# - 0.1 to 0.3: no algorithm.use_kl_in_reward. The reference policy is always there, and fit() calls
#   apply_kl_penalty (token_level_rewards = scores - beta * KL, beta from algorithm.kl_ctrl, fixed or adaptive)
#   whenever actor.use_kl_loss is off (0.1 has no use_kl_loss: always); it logs critic/kl and critic/kl_coeff. The
#   config verl dumps then has algorithm.kl_ctrl.kl_coef and no use_kl_in_reward: that shape alone places the KL.
# - 0.4 on: algorithm.use_kl_in_reward (default false) turns apply_kl_penalty on, which logs
#   actor/reward_kl_penalty and actor/reward_kl_penalty_coeff; the KL loss is actor.use_kl_loss.
# Our verl key map names both coefficients policy/kl_coef; the actor logs actor/kl_coef (kept under its own
# name) only where it adds the KL loss. A config printed in part says neither: the log may.
REWARD_KL_COEF_LOGGED = "policy/kl_coef"
LOSS_KL_COEF_LOGGED = "actor/kl_coef"
OLD_VERL_KL = "algorithm.kl_ctrl.kl_coef"  # with no use_kl_in_reward beside it: verl before 0.4 (above)
LOGGED_IN_REWARD = ("the log has verl's KL coefficient in the reward (critic/kl_coeff or "
                    "actor/reward_kl_penalty_coeff), which it logs only when it subtracts the KL from the reward")
LOGGED_IN_LOSS = "the log has actor/kl_coef, which verl logs only when it adds the KL loss"
BEFORE_0_4 = ("verl before 0.4 (algorithm.kl_ctrl and no algorithm.use_kl_in_reward in its config) subtracts the KL "
              "from the reward whenever actor.use_kl_loss is off")


def is_old_verl_kl(key: Callable[[str], str | None]) -> bool:
    """Whether a config has verl's pre-0.4 KL settings (algorithm.kl_ctrl.kl_coef, no use_kl_in_reward): its KL is
    in the reward exactly when actor.use_kl_loss is off. key: finds a setting by its name or dotted suffix."""
    return key(OLD_VERL_KL) is not None and key("use_kl_in_reward") is None


def _from_log(lk: Lookup, name: str) -> tuple[bool | None, float | None]:
    """Whether the log shows the KL in a place (its coefficient logged, not 0 at every step), and the last
    coefficient logged; (None, None) when the log has no such coefficient."""
    values = lk.logged(name)
    if values is None:
        return None, None
    return any(v != 0 for v in values), values[-1]


def _verl_q4(lk: Lookup) -> str:
    in_loss, in_reward = truthy(lk.get("actor.use_kl_loss")), truthy(lk.get("algorithm.use_kl_in_reward"))
    logged_reward = logged_loss = None
    evidence = []
    if in_loss is None:
        in_loss, logged_loss = _from_log(lk, LOSS_KL_COEF_LOGGED)
        if in_loss:
            evidence.append(LOGGED_IN_LOSS)
    if in_reward is None:
        in_reward, logged_reward = _from_log(lk, REWARD_KL_COEF_LOGGED)
        if in_reward is False:
            return "not used: verl logged its KL coefficient in the reward as 0 at every step"
        if in_reward:
            evidence.append(LOGGED_IN_REWARD)
        elif not in_loss and is_old_verl_kl(lk.key):
            in_reward = True
            evidence.append(BEFORE_0_4)
    if in_loss is None and in_reward is None:
        return UNKNOWN
    if in_loss and in_reward:
        text = "both in the loss and in the reward: counted twice"
    elif in_loss:
        est, coef = lk.get("actor.kl_loss_type"), lk.get("actor.kl_loss_coef", default=logged_loss)
        text = f"added to the loss ({est}, coef {coef})" if est is not None else f"added to the loss (coef {coef})"
    elif in_reward:
        text = f"folded into the reward ({_reward_coef(lk, logged_reward)})"
    else:
        text = "not used"
    return "; ".join([text, *evidence])


def _reward_coef(lk: Lookup, logged: float | None) -> str:
    """verl's kl_ctrl: "coef X" (fixed), "adaptive coef from X, target T" (AdaptiveKLController)."""
    coef = lk.get("algorithm.kl_ctrl.kl_coef", default=logged)
    if str(lk.get("algorithm.kl_ctrl.type")) == "adaptive":
        return f"adaptive coef from {coef}, target {lk.get('algorithm.kl_ctrl.target_kl')}"
    return f"coef {coef}"


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
