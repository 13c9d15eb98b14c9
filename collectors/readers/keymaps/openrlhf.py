"""OpenRLHF's status keys -> canonical names."""

from __future__ import annotations

# OpenRLHF PPO / REINFORCE++ / GRPO (ray trainer), read in OpenRLHF/OpenRLHF: openrlhf/trainer/ray/ppo_actor.py
# (status of ActorPPOTrainer.training_step), openrlhf/trainer/ppo_utils/experience_maker.py (Experience.info),
# openrlhf/models/loss.py (PolicyLoss), openrlhf/trainer/ppo_trainer.py (train_step, _compute_rollout_stats,
# compute_eval_metrics), openrlhf/utils/logging_utils.py (WandbLogger / TensorboardLogger). Versions named below
# are the first tag holding a key.
# Each status key is logged as `train/<key>` at OpenRLHF's global_step (1, 2, ...: one per rollout batch, which
# spans max_epochs x micro-batches of optimizer steps), and printed on the console in the `Global step N: {...}`
# line (collectors/readers/openrlhf/console.py); the value is the mean over the step's micro-batches and ranks
# (actor_lr and actor_grad_norm: the last one). Eval keys are `eval_<datasource>_pass1` / `..._pass<n>` (wandb and
# TensorBoard: under `eval/`); a prompt without a datasource is "default".
# Plain names TRL also uses keep TRL's mapping (FAMILIES order), checked to mean the same:
#   `kl` -> policy/kl_ref: the mean per-token KL estimate (--kl_estimator, k1 by default) between the actor and
#   the reference, weighted by response length: from rollout time, or from the current actor with
#   --use_kl_loss. It is logged as 0 (not absent) when there is no reference model or init_kl_coef is 0.
#   `reward` -> reward/mean: mean of the reward function's / reward model's `rewards`, before group
#   normalisation and KL shaping (a DAPO overlong penalty, when enabled, is already in it).
# not mapped (extra columns under their own name):
#   `score` (the 0-1 score dynamic filtering uses; equals `reward` when the reward function returns none, and
#   is a pass rate only when it is binary), `return` (sum of the shaped, normalised per-token reward, not a raw
#   reward), `total_length` (prompt + response), critic_loss / values / critic_lr / ptx_loss (no canonical twin);
#   `vllm_kl` (0.8.9 on, with --enable_vllm_is_correction): the mean of log p rollout - log p old over response
#   tokens, a k1 estimate of KL(vLLM || trainer) on the tokens vLLM sampled, signed, where ours is the mean
#   absolute difference (the first-step rule reads it by its name);
#   `logprobs_diff` (0.9.2 on, with --use_kl_loss): the mean of log p actor - log p reference, the signed k1 twin
#   of `kl` from the same forwards, not a rollout/training gap (0 when init_kl_coef is 0);
#   `dynamic_filtering_pass_rate` (0.8.1 on): percent of the prompts consumed that dynamic filtering kept; kept
#   under its own name, and collectors/levels.py adds groups/dropped_frac = 1 - rate / 100 beside it (every reader);
#   `rollout/num_samples`, `timing/*` other than the total, `eval_<ds>_pass<n>` (best of n).
OPENRLHF: dict[str, str] = {
    "policy_loss": "loss/policy",
    "actor_lr": "optim/lr",
    # 0.9.6 on: DeepSpeed's global gradient norm before clipping (strategy.get_grad_norm), of the step's last
    # optimizer step; logged as 0.0 where DeepSpeed gives none.
    "actor_grad_norm": "optim/grad_norm",
    # Newer versions (sample_maker.py) count from the first to the last action token, so in multi-turn agent
    # runs the environment's tokens between turns are included.
    "response_length": "completions/len_mean",
    # 0.9.2 on: vLLM's finish_reason == "length" (the response hit max_new_tokens without ending): our truncated
    # fraction. `response_clip_ratio` (0.8.3 on: 1 when the sample hit the length cap, whether or not its last
    # token was the end token; in newer versions prompt + response reaching the context window) is only a stand-in
    # where `truncated` is not logged: collectors/levels.py STAND_INS, for every reader alike.
    "truncated": "completions/truncated_frac",
    # 0.9.8 on: the rollout batch's own statistics before dynamic batch splitting (_compute_rollout_stats): the
    # same quantities as reward / response_length / truncated; reward_std is torch's (Bessel-corrected) std over
    # every response of the step.
    "rollout/reward_mean": "reward/mean",
    "rollout/reward_std": "reward/std",
    "rollout/response_length_mean": "completions/len_mean",
    "rollout/truncated_rate": "completions/truncated_frac",
    # 0.9.6 on: the sum of the step's timing/* phases (generation, make_experience, ppo_train, broadcast)
    "timing/step_total": "perf/step_s",
    # Fraction of response tokens where the clipped surrogate is the smaller one (clipping binds), either side.
    "ppo_clip_ratio": "policy/clipfrac",
    # k1 estimate, mean of (log p old - log p current) over response tokens (ours is k3), like verl's ppo_kl.
    "ppo_kl": "policy/approx_kl_old",
    # Despite the name, the mean per-token entropy itself (the coefficient is applied in the loss only); logged
    # only when --entropy_loss_coef is given.
    "entropy_loss": "policy/entropy",
    # Each response carries its group's reward std (torch std, Bessel-corrected), so the batch mean is the mean
    # over groups of the within-group std; logged only when n_samples_per_prompt > 1.
    "group_reward_std": "groups/reward_std_mean",
    # pass1 is the mean over prompts of the mean reward of its n samples: the mean eval reward (a pass rate
    # only for a binary reward). Only the default datasource has a fixed name; the console reader takes the
    # first `eval_<ds>_pass1` in sorted order otherwise (OpenRLHF's own best-checkpoint metric).
    "eval/eval_default_pass1": "eval/reward_mean",
    "eval_default_pass1": "eval/reward_mean",
    # The progress bar of the actor's micro-batches (`Train epoch [e/E]`, set_postfix, one value per micro-batch,
    # not per step): before 0.8 `pg`, `rm`, `ret`, `glen`, `tlen`, `kl`, `act_lr`; from 0.8 `act_loss`, `reward`,
    # `return`, `gen_len`, `tot_len`, `kl`, `act_lr`, `grad_norm`, `ent_loss`. The same quantities as the status
    # keys they stand for; `ret` / `return`, `tlen` / `tot_len` have no twin and stay as they are.
    "pg": "loss/policy",
    "act_loss": "loss/policy",
    "rm": "reward/mean",
    "glen": "completions/len_mean",
    "gen_len": "completions/len_mean",
    "act_lr": "optim/lr",
    "ent_loss": "policy/entropy",
}
