"""The configuration audit: risky combinations of the notes' section 6 knobs, read from the run's config.

The five questions themselves are answered by dashboard.diagnosis.rules.config_questions (shown on the Config page and
in the CLI); these rules flag the combinations that are known to hurt.
"""

from __future__ import annotations

import numpy as np

from dashboard.diagnosis import checks as C
from dashboard.diagnosis import facts
from dashboard.diagnosis.build import evidence, finding
from dashboard.diagnosis.context import RunData
from dashboard.diagnosis.findings import NotJudged
from dashboard.diagnosis.registry import RECHECK_LONG, rule
from dashboard.diagnosis.rules.config_questions import OPENRLHF_SIGNATURE, is_old_verl_kl, truthy
from dashboard.diagnosis.rules.reward import MIN_GROUP, group_size

MANY_REUSES = 4  # optimizer steps per rollout beyond which the last minibatches are clearly off-policy


def _openrlhf(d: RunData) -> bool:
    """OpenRLHF's argparse args: only it names these `advantage_estimator` / `n_samples_per_prompt`."""
    return any(d.setting(name) is not None for name in OPENRLHF_SIGNATURE)


def _whole_run(d: RunData):
    return (int(d.steps[0]), int(d.steps[-1])) if d.n else None


@rule("config_kl_twice", "KL both in the reward and in the loss", recheck_rows=RECHECK_LONG)
def config_kl_twice(d: RunData):
    if d.setting("algo.kl_mode") is not None:
        return []  # grpo_core has one kl_mode field: the KL goes to exactly one place by construction
    if d.setting("beta") is not None and d.setting("num_generations") is not None:
        # TRL's GRPOConfig (read from trainer output, TensorBoard's `args` text or wandb's config): its only
        # KL knob is `beta`, a term in the loss; GRPOTrainer never puts a KL into the reward
        return []
    in_reward = d.setting("use_kl_in_reward", "kl_in_reward")
    if in_reward is None and _openrlhf(d):
        # OpenRLHF (openrlhf/trainer/ppo_utils/experience_maker.py make_experience, ray/ppo_actor.py
        # training_step): --use_kl_loss moves the KL from the reward into the loss; the reward KL is computed only
        # when it is off, the loss KL only when it is on, so it is in one place by construction
        return []
    if in_reward is None and is_old_verl_kl(lambda name: (d.setting(name) or (None,))[0]):
        # verl before 0.4 (config_questions/verl.py): the reward KL only when actor.use_kl_loss is off
        return []
    in_loss = d.setting("use_kl_loss")
    if in_reward is None or in_loss is None:
        return NotJudged("config_kl_twice", "the config does not say both where the reward KL and the loss KL go")
    if not (truthy(in_reward[1]) and truthy(in_loss[1])):
        return []
    ev = [evidence(f"config:{in_reward[0]}", 1.0, None, "config", f"{in_reward[0]} = {in_reward[1]}"),
          evidence(f"config:{in_loss[0]}", 1.0, None, "config", f"{in_loss[0]} = {in_loss[1]}")]
    check = C.Check("where the KL goes", "choose one: a KL penalty in the reward or a KL term in the loss (notes, "
                    "section 6, question 4)", C.config(in_loss[0]))
    return [finding("config_kl_twice", "warning", "KL is applied twice (in the reward and in the loss)",
                    _whole_run(d), ev, (check,))]


@rule("config_small_group_adv", "group advantage with G < 4", "small_group", recheck_rows=RECHECK_LONG)
def config_small_group_adv(d: RunData):
    grouped, said = facts.group_baseline(d)
    if grouped is False:
        return NotJudged("config_small_group_adv", f"{said} has no group baseline: no per-group normalisation")
    g = group_size(d)
    mode = d.setting("algo.adv_mode", "scale_rewards", "norm_adv_by_std_in_grpo", "advantage_estimator")
    if g is None or mode is None:
        return NotJudged("config_small_group_adv", "the config does not give the group size and advantage mode")
    # OpenRLHF divides by the group std only for group_norm (experience_maker.compute_advantages_and_returns);
    # dr_grpo / rloo / reinforce_baseline subtract a group baseline without it
    per_group = str(mode[1]).lower() in ("group", "true", "1", "group_norm")
    if g[1] >= MIN_GROUP or not per_group:
        return []
    ev = [evidence(f"config:{g[0]}", g[1], MIN_GROUP, "config", f"G = {g[1]:g} with {mode[0]} = {mode[1]}: the "
                   "std of so few rewards is mostly noise")]
    return [finding("config_small_group_adv", "warning", "Per-group std normalisation with a group of fewer than 4",
                    _whole_run(d), ev, (C.GROUP_SIZE,))]


@rule("config_many_reuses", "many optimizer steps per rollout", recheck_rows=RECHECK_LONG)
def config_many_reuses(d: RunData):
    # "actor.ppo_epochs" before "ppo_epochs": a verl config also has critic.ppo_epochs
    e = d.number("algo.epochs", "num_iterations", "actor.ppo_epochs", "ppo_epochs", "max_epochs")
    m = d.number("algo.minibatches") or _openrlhf_minibatches(d) or _verl_minibatches(d)
    if e is None and m is None:
        return NotJudged("config_many_reuses", "the config does not give epochs or minibatches per rollout")
    n = (e[1] if e else 1.0) * (m[1] if m else 1.0)
    if n <= MANY_REUSES:
        return []
    keys = ", ".join(f"{k} = {v:g}" for k, v in (x for x in (e, m) if x))
    ev = [evidence(f"config:{(e or m)[0].split()[0]}", n, MANY_REUSES, "epochs x minibatches",
                   f"{n:g} optimizer steps per rollout ({keys}): the last ones use rollouts {n - 1:g} updates old")]
    return [finding("config_many_reuses", "warning", f"Each rollout is reused {n:g} times", _whole_run(d), ev,
                    (C.EPOCHS, C.STALENESS))]


def _verl_minibatches(d: RunData) -> tuple[str, float] | None:
    """verl's optimizer steps per epoch: data.train_batch_size / actor.ppo_mini_batch_size (both count prompts;
    verl scales the mini-batch by rollout.n itself), as the Config page's question 5 counts them."""
    b, mb = d.number("data.train_batch_size"), d.number("actor.ppo_mini_batch_size")
    if b is None or mb is None or mb[1] <= 0 or not np.isfinite(b[1] / mb[1]):  # inf or NaN: a damaged config
        return None
    return "data.train_batch_size / actor.ppo_mini_batch_size", float(max(1, int(b[1] // mb[1])))


def _openrlhf_minibatches(d: RunData) -> tuple[str, float] | None:
    """OpenRLHF's optimizer steps per epoch over one rollout: rollout_batch_size x n_samples_per_prompt /
    train_batch_size (the replay buffer holds r x n samples; DeepSpeed steps once per train_batch_size of them,
    openrlhf/utils/deepspeed/deepspeed.py accumulated_gradient). None when a size is missing, and with
    --use_dynamic_batch, where the steps follow token budgets instead."""
    r, n, t = d.number("rollout_batch_size"), d.number("n_samples_per_prompt"), d.number("train_batch_size")
    dyn = d.setting("use_dynamic_batch")
    if r is None or n is None or t is None or t[1] <= 0 or (dyn is not None and truthy(dyn[1])) \
            or not np.isfinite(r[1] * n[1] / t[1]):  # inf or NaN: a damaged config
        return None
    return "rollout_batch_size x n_samples_per_prompt / train_batch_size", float(max(1, int(r[1] * n[1] // t[1])))
