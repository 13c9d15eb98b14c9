"""Answers for OpenRLHF: the argparse args of openrlhf/cli/train_ppo_ray.py, e.g. as wandb.init(config=args.__dict__)
logs them."""

from __future__ import annotations

from collections.abc import Callable

from dashboard.diagnosis.rules.config_questions.questions import UNKNOWN, Lookup, Reader, reuse_text, truthy

# Read in OpenRLHF/OpenRLHF: openrlhf/cli/train_ppo_ray.py (the arguments and their defaults, commit 021d1b09),
# openrlhf/trainer/ppo_utils/experience_maker.py (advantages, where the KL goes; commit 89308a0b),
# openrlhf/models/loss.py (PolicyLoss; commit f5b3f08a), openrlhf/trainer/ray/ppo_actor.py (training_step,
# ppo_train; commit c250c21a), openrlhf/utils/deepspeed/deepspeed.py (gradient accumulation).
# Only OpenRLHF names its arguments `advantage_estimator` / `n_samples_per_prompt` (verl: adv_estimator, rollout.n;
# TRL: num_generations); without one of them this reader says nothing, so that a verl config's `use_kl_loss` or
# `data.train_batch_size` is not read as OpenRLHF's.
OPENRLHF_SIGNATURE = ("advantage_estimator", "n_samples_per_prompt")


def is_openrlhf(lk: Lookup) -> bool:
    return any(lk.key(name) is not None for name in OPENRLHF_SIGNATURE)


def _only_openrlhf(question: Callable[[Lookup], str]) -> Callable[[Lookup], str]:
    """The question's answer for an OpenRLHF config, UNKNOWN for any other (see OPENRLHF_SIGNATURE)."""
    return lambda lk: question(lk) if is_openrlhf(lk) else UNKNOWN


def _orl_whitened(lk: Lookup) -> str:
    # experience_maker.compute_advantages_and_returns: for gae / reinforce / reinforce_baseline the advantages
    # of the whole rollout batch are whitened (minus the token-weighted batch mean, times 1 / batch std unless
    # --no_advantage_std_norm)
    no_std = lk.get("no_advantage_std_norm")
    if no_std is None:
        return "then the batch mean is subtracted; whether it divides by the batch std is not recorded"
    if truthy(no_std):
        return "then the batch mean is subtracted, not divided by any std (no_advantage_std_norm)"
    return "then whitened over the whole batch (minus the batch mean, divided by the batch std)"


# advantage_estimator -> its answer (experience_maker.compute_advantages_and_returns)
_ORL_ESTIMATORS: dict[str, Callable[[Lookup], str]] = {
    # (r - mean) / (std + 1e-9) over each prompt's n_samples_per_prompt rewards
    "group_norm": lambda lk: "per prompt group: A = (r - group mean) / (group std + 1e-9) (advantage_estimator "
                             "group_norm)",
    # the group mean only, and no batch whitening afterwards
    "dr_grpo": lambda lk: "group mean subtracted, not divided by any std (Dr. GRPO)",
    "reinforce_baseline": lambda lk: "group mean subtracted (REINFORCE++-baseline), " + _orl_whitened(lk),
    # the batch whitening moved: older trainers whitened every estimator but group_norm / dr_grpo,
    # experience_maker at 89308a0b only gae / reinforce / reinforce_baseline
    "rloo": lambda lk: ("leave-one-out baseline: r minus the mean of the group's other rewards, not divided by the "
                        "group std (whether a batch whitening follows depends on the OpenRLHF version)"),
    "reinforce": lambda lk: "no group baseline (REINFORCE++): returns " + _orl_whitened(lk).removeprefix("then "),
    "gae": lambda lk: "GAE with a critic (PPO), no groups: advantages " + _orl_whitened(lk).removeprefix("then "),
}


def _orl_q1(lk: Lookup) -> str:
    est = lk.get("advantage_estimator")
    if est is None:
        return UNKNOWN
    answer = _ORL_ESTIMATORS.get(str(est))
    return answer(lk) if answer else f"advantage_estimator {est}"


def _orl_q2(lk: Lookup) -> str:
    kind = lk.get("policy_loss_type")
    if kind is None:
        return UNKNOWN
    # loss.PolicyLoss: token_level_loss defaults to True (ppo_actor does not pass it) and gspo forces it off;
    # token level = masked mean over all tokens of the micro-batch, else each response's mean, then the mean
    if str(kind) == "ppo":
        return ("ratio per token; loss averaged over all tokens of each micro-batch first (token-level), "
                "micro-batches then averaged by gradient accumulation")
    if str(kind) == "gspo":
        return ("sequence-level ratio (geometric mean of token ratios, GSPO); loss averaged over each "
                "response's tokens, then over responses")
    return f"policy_loss_type={kind}"


def _orl_q3(lk: Lookup) -> str:
    has_engines = lk.key("vllm_num_engines") is not None  # argparse default None: no vLLM engines
    engines, corr = lk.get("vllm_num_engines"), lk.get("enable_vllm_is_correction")
    if not has_engines and corr is None:
        return UNKNOWN
    # experience_maker.make_experience: action_log_probs come from the actor group's forward pass (no grad)
    # after generation; ppo_actor.training_step uses them as the old log-probs
    recompute = "the actor (training model) recomputes the old log-probs before the update"
    try:
        n = int(engines) if engines is not None else None
    except (TypeError, ValueError):
        n = None
    if engines is not None and n is None:
        head = f"vllm_num_engines={engines}; {recompute}"
    elif has_engines and (n is None or n <= 0):  # train_ppo_ray.train: engines only when vllm_num_engines > 0
        return f"generated without vLLM engines (vllm_num_engines {engines}); {recompute}"
    else:
        head = (f"rollouts by vLLM ({n} engine(s))" if n is not None else "rollouts by vLLM") + f"; {recompute}"
    if corr is None:
        return head
    if truthy(corr):
        thr = lk.get("vllm_is_truncated_threshold")
        return head + ("; vLLM's own log-probs feed a truncated importance-sampling correction"
                       + (f" (threshold {thr})" if thr is not None else ""))
    return head + "; vLLM/training log-prob differences are not corrected (enable_vllm_is_correction off)"


def _orl_q4(lk: Lookup) -> str:
    in_loss, coef, est = lk.get("use_kl_loss"), lk.get("init_kl_coef"), lk.get("kl_estimator")
    try:
        off = coef is not None and float(coef) == 0
    except (TypeError, ValueError):
        off = False
    if off:  # train_ppo_ray.train: no reference model when init_kl_coef == 0, so no KL anywhere
        return "not used (init_kl_coef = 0: no reference model)"
    if truthy(in_loss) is None:
        return UNKNOWN
    target = lk.get("kl_target")  # ppo_trainer: AdaptiveKLController when kl_target is set, else fixed
    c = (f"adaptive coef from {coef}, target {target}" if target is not None and coef is not None
         else f"coef {coef}" if coef is not None else "")
    detail = ", ".join(x for x in (f"estimator {est}" if est is not None else "", c) if x)
    # --use_kl_loss moves the KL: make_experience computes the reward KL only when it is off (compute_reward
    # subtracts coef x KL per token), training_step adds coef x masked-mean KL to the loss only when it is on
    text = "added to the loss, outside the reward" if truthy(in_loss) else "folded into the reward (per token)"
    return text + (f" ({detail})" if detail else "")


def _orl_minibatches(lk: Lookup) -> int | None:
    """Optimizer steps per epoch: rollout_batch_size x n_samples_per_prompt / train_batch_size, or None."""
    r, n, t = lk.get("rollout_batch_size"), lk.get("n_samples_per_prompt"), lk.get("train_batch_size")
    if r is None or n is None or t is None or truthy(lk.get("use_dynamic_batch")):
        return None  # with --use_dynamic_batch the optimizer steps follow token budgets, not the batch sizes
    try:
        # the replay buffer holds r x n samples, read in micro batches; DeepSpeed steps every
        # train_batch_size / (micro_train_batch_size x dp) of them (deepspeed.py accumulated_gradient)
        return max(1, int(r) * int(n) // int(t))
    except (TypeError, ValueError, ZeroDivisionError):
        return None


def _orl_q5(lk: Lookup) -> str:
    epochs = lk.get("max_epochs")  # ppo_actor.ppo_train: max_epochs passes over the replay buffer
    if epochs is None:
        return UNKNOWN
    m = _orl_minibatches(lk)
    if m is None:
        return (f"{epochs} epoch(s) over each rollout; the optimizer steps per epoch are not known from the "
                "config (rollout_batch_size x n_samples_per_prompt / train_batch_size)")
    return reuse_text(epochs, m)


READER: Reader = tuple(_only_openrlhf(q) for q in (_orl_q1, _orl_q2, _orl_q3, _orl_q4, _orl_q5))
