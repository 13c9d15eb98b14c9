"""The notes' five questions of section 6, answered from a run's flat dotted config. No streamlit here.

Each framework spells the same choices differently, so each has a small reader: a key map from the
question to the config keys it looks at, and the meaning of their values. What a config does not say is
answered "unknown", never guessed from a default the run may not have used.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

QUESTIONS = (
    "Is the advantage normalised per prompt group, over the whole batch, or without dividing by the std?",
    "Is the ratio per token or sequence-level? Is the loss averaged over tokens first or over responses first?",
    "Do the old log-probs saved by the rollout engine agree with the training side?",
    "Is the KL added directly outside the objective, folded into the reward, or not used at all?",
    "After several epochs, how stale are the rollouts?",
)
UNKNOWN = "unknown"


@dataclass(frozen=True)
class Answer:
    number: int  # 1..5, as in the notes
    question: str
    answer: str  # UNKNOWN when the config does not say
    keys: tuple[str, ...]  # the config keys the answer was read from

    @property
    def known(self) -> bool:
        return self.answer != UNKNOWN


class Lookup:
    """Find a setting by its name or by a dotted suffix of its key (`args.beta` matches `beta`)."""

    def __init__(self, config: Mapping[str, Any]) -> None:
        self.config = dict(config)
        self.used: list[str] = []

    def key(self, *names: str) -> str | None:
        for name in names:
            if name in self.config:
                return name
            for k in self.config:
                if k.endswith("." + name):
                    return k
        return None

    def get(self, *names: str, default: Any = None) -> Any:
        k = self.key(*names)
        if k is None:
            return default
        self.used.append(k)
        return self.config[k]

    def take_used(self) -> tuple[str, ...]:
        used, self.used = tuple(dict.fromkeys(self.used)), []
        return used


def _truthy(v: Any) -> bool | None:
    if isinstance(v, bool) or v is None:
        return v
    if isinstance(v, (int, float)):
        return bool(v)
    s = str(v).strip().lower()
    return {"true": True, "1": True, "yes": True, "false": False, "0": False, "no": False, "none": False}.get(s)


# -- grpo_core (our trainer: grpo_core/config.py) ------------------------------------------------
_CORE_ADV = {"group": "per prompt group: A = (r - group mean) / (group std + eps)",
             "batch": "group mean subtracted, divided by the std of the whole batch",
             "mean_only": "group mean subtracted, not divided by any std (Dr. GRPO)",
             "rloo": "leave-one-out: r minus the mean of the group's other rewards, not divided (RLOO)",
             "reinforce_pp": "no group baseline: (r - batch mean) / batch std (REINFORCE++)",
             "reinforce_pp_baseline": "group mean subtracted, then divided by the batch std (REINFORCE++-baseline)"}
_CORE_LOSS = {"dual_clip": "dual-clip PPO surrogate (negative-advantage loss capped at clip_ratio_c)",
              "cispo": "CISPO: truncated, detached importance weight times log-prob (no token loses its gradient)",
              "sapo": "SAPO: a soft sigmoid gate instead of the hard clip"}
_CORE_AGG = {"token_mean": "loss averaged over all tokens of the batch first (token-level, DAPO)",
             "seq_mean_token_mean": "averaged over each response's tokens, then over responses (GRPO)",
             "seq_mean_token_sum_norm": "summed over each response's tokens, divided by a constant, then "
                                        "averaged over responses (Dr. GRPO)"}


def _core_q1(lk: Lookup) -> str:
    mode = lk.get("algo.adv_mode")
    if mode is None:
        return UNKNOWN
    text = _CORE_ADV.get(str(mode), f"adv_mode={mode}")
    if _truthy(lk.get("algo.drop_zero_var_groups")):
        text += "; zero-variance groups are dropped before the update"
        if _num(lk.get("algo.refill_rounds")) > 0:
            text += f", and refilled by up to {lk.get('algo.refill_rounds')} more sampling rounds (DAPO)"
    if _num(lk.get("algo.overlong_buffer")) > 0:
        text += (f"; DAPO soft overlong penalty: up to -{lk.get('algo.overlong_penalty')} reward over the last "
                 f"{lk.get('algo.overlong_buffer')} tokens before the limit")
    return text


def _num(v: Any) -> float:
    try:
        return float(v)
    except (TypeError, ValueError):
        return 0.0


def _core_q2(lk: Lookup) -> str:
    ratio, agg = lk.get("algo.ratio"), lk.get("algo.loss_agg")
    if ratio is None and agg is None:
        return UNKNOWN
    r = {"token": "ratio per token", "sequence": "sequence-level ratio (geometric mean of token ratios, GSPO)"}
    parts = [r.get(str(ratio), f"ratio={ratio}") if ratio is not None else "ratio level unknown",
             _CORE_AGG.get(str(agg), f"loss_agg={agg}") if agg is not None else "aggregation unknown"]
    loss = lk.get("algo.policy_loss")
    if loss is not None and str(loss) != "clip":
        parts.append(_CORE_LOSS.get(str(loss), f"policy_loss={loss}"))
    if _truthy(lk.get("algo.mask_truncated")):
        parts.append("truncated completions get no loss (overlong filtering)")
    return "; ".join(parts)


def _core_q3(lk: Lookup) -> str:
    src = lk.get("algo.old_logprob_source")
    if src is None:
        return UNKNOWN
    if str(src) == "recompute":
        text = "recomputed by the training model (no grad) before the update, so they match it by construction"
    else:
        text, dtype = "taken from the rollout pass", lk.get("rollout.dtype")
        if dtype is not None:
            text += f" in {dtype}"
            if str(dtype) != "fp32":
                text += "; the training side runs in fp32 (bf16 autocast on CUDA), so expect a first-step ratio away from 1"
    corr = lk.get("algo.rollout_correction")
    if corr:
        text += (f"; rollout/training mismatch corrected by {corr} importance weights in "
                 f"[{lk.get('algo.rollout_correction_min')}, {lk.get('algo.rollout_correction_max')}]")
    return text


def _core_q4(lk: Lookup) -> str:
    mode, coef, est = lk.get("algo.kl_mode"), lk.get("algo.kl_coef"), lk.get("algo.kl_estimator")
    if mode is None:
        return UNKNOWN
    detail = ", ".join(x for x in (f"estimator {est}" if est else "", f"coef {coef}" if coef is not None else "") if x)
    text = {"none": "not used", "loss": "added to the loss, outside the reward",
            "reward": "folded into the reward (subtracted per sequence)"}.get(str(mode), f"kl_mode={mode}")
    if str(mode) == "loss" and _truthy(lk.get("algo.kl_bias_correction")):
        detail += ", weighted by pi/pi_old (bias-corrected)"
    return text + (f" ({detail})" if detail and str(mode) != "none" else "")


def _core_q5(lk: Lookup) -> str:
    epochs, mbs = lk.get("algo.epochs"), lk.get("algo.minibatches")
    if epochs is None and mbs is None:
        return UNKNOWN
    return _reuse_text(epochs, mbs)


def _reuse_text(epochs: Any, minibatches: Any) -> str:
    try:
        e, m = int(epochs if epochs is not None else 1), int(minibatches if minibatches is not None else 1)
    except (TypeError, ValueError):
        return f"epochs={epochs}, minibatches={minibatches}"
    n = e * m
    if n <= 1:
        return "one optimizer step per rollout: fully on-policy"
    return (f"{n} optimizer steps per rollout ({e} epoch(s) x {m} minibatch(es)); only the first is on-policy, "
            f"the last uses rollouts {n - 1} update(s) old")


# -- TRL (GRPOConfig) -----------------------------------------------------------------------------
_TRL_LOSS = {"grpo": "averaged over each response's tokens, then over responses",
             "bnpo": "averaged over all tokens of the local batch",
             "dr_grpo": "summed over tokens and divided by batch x max_completion_length (Dr. GRPO)",
             "dapo": "averaged over all tokens of the global batch (DAPO)"}


def _trl_q1(lk: Lookup) -> str:
    v = lk.get("scale_rewards")
    if v is None:
        return UNKNOWN
    s = str(v).lower()
    if s in ("true", "group", "1"):
        return "per prompt group: (r - group mean) / group std"
    if s == "batch":
        return "group mean subtracted, divided by the std of the whole batch"
    if s in ("false", "none", "0"):
        return "group mean subtracted, not divided by the std"
    return f"scale_rewards={v}"


def _trl_q2(lk: Lookup) -> str:
    level, loss = lk.get("importance_sampling_level"), lk.get("loss_type")
    if level is None and loss is None:
        return UNKNOWN
    parts = [f"ratio per {level}" if level is not None else "ratio level unknown",
             _TRL_LOSS.get(str(loss), f"loss_type={loss}") if loss is not None else "aggregation unknown"]
    return "; ".join(parts)


def _trl_q3(lk: Lookup) -> str:
    vllm, corr = lk.get("use_vllm"), lk.get("vllm_importance_sampling_correction")
    if vllm is None:
        return UNKNOWN
    if not _truthy(vllm):
        return "generated by the training model itself; old log-probs come from the same model"
    text = "generated by vLLM; the trainer computes the old log-probs with the training model"
    if corr is not None:
        text += ("; vLLM's log-probs feed a truncated importance-sampling correction" if _truthy(corr)
                 else "; no correction for vLLM/training log-prob differences")
    return text


def _trl_q4(lk: Lookup) -> str:
    beta = lk.get("beta")
    if beta is None:
        return UNKNOWN
    try:
        return "not used (beta = 0)" if float(beta) == 0 else f"added to the loss (beta {beta})"
    except (TypeError, ValueError):
        return f"beta={beta}"


def _trl_q5(lk: Lookup) -> str:
    mu, spg = lk.get("num_iterations"), lk.get("steps_per_generation")
    if mu is None and spg is None:
        return UNKNOWN
    return _reuse_text(mu, spg)


# -- verl ------------------------------------------------------------------------------------------
def _verl_q1(lk: Lookup) -> str:
    est, norm = lk.get("algorithm.adv_estimator"), lk.get("algorithm.norm_adv_by_std_in_grpo")
    if est is None:
        return UNKNOWN
    if str(est) == "grpo":
        if norm is None:
            return "group baseline (adv_estimator grpo); whether it divides by the std is not recorded"
        return ("per prompt group: (r - group mean) / group std" if _truthy(norm)
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
    in_loss, in_reward = _truthy(lk.get("actor.use_kl_loss")), _truthy(lk.get("algorithm.use_kl_in_reward"))
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
    return _reuse_text(epochs, m)


# -- OpenRLHF (argparse args of openrlhf/cli/train_ppo_ray.py, e.g. wandb.init(config=args.__dict__)) --------
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
    if _truthy(no_std):
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
    if _truthy(corr):
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
    if _truthy(in_loss) is None:
        return UNKNOWN
    target = lk.get("kl_target")  # ppo_trainer: AdaptiveKLController when kl_target is set, else fixed
    c = (f"adaptive coef from {coef}, target {target}" if target is not None and coef is not None
         else f"coef {coef}" if coef is not None else "")
    detail = ", ".join(x for x in (f"estimator {est}" if est is not None else "", c) if x)
    # --use_kl_loss moves the KL: make_experience computes the reward KL only when it is off (compute_reward
    # subtracts coef x KL per token), training_step adds coef x masked-mean KL to the loss only when it is on
    text = "added to the loss, outside the reward" if _truthy(in_loss) else "folded into the reward (per token)"
    return text + (f" ({detail})" if detail else "")


def _orl_minibatches(lk: Lookup) -> int | None:
    """Optimizer steps per epoch: rollout_batch_size x n_samples_per_prompt / train_batch_size, or None."""
    r, n, t = lk.get("rollout_batch_size"), lk.get("n_samples_per_prompt"), lk.get("train_batch_size")
    if r is None or n is None or t is None or _truthy(lk.get("use_dynamic_batch")):
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
    return _reuse_text(epochs, m)


Reader = tuple[Callable[[Lookup], str], ...]
READERS: dict[str, Reader] = {
    "grpo_core": (_core_q1, _core_q2, _core_q3, _core_q4, _core_q5),
    "trl": (_trl_q1, _trl_q2, _trl_q3, _trl_q4, _trl_q5),
    "verl": (_verl_q1, _verl_q2, _verl_q3, _verl_q4, _verl_q5),
    "openrlhf": tuple(_only_openrlhf(q) for q in (_orl_q1, _orl_q2, _orl_q3, _orl_q4, _orl_q5)),
}


def _answers(config: Mapping[str, Any], reader: Reader) -> list[Answer]:
    lk = Lookup(config)
    out = []
    for i, (question, fn) in enumerate(zip(QUESTIONS, reader, strict=True), start=1):
        text = fn(lk)
        out.append(Answer(i, question, text, lk.take_used()))
    return out


def answer_questions(config: Mapping[str, Any], source: str) -> list[Answer]:
    """The five answers for a run of `source`; an unknown source uses the reader that knows most keys."""
    if source in READERS:
        return _answers(config, READERS[source])
    best = max((_answers(config, r) for r in READERS.values()), key=lambda a: sum(x.known for x in a))
    if not any(a.known for a in best):
        return [Answer(i, q, UNKNOWN, ()) for i, q in enumerate(QUESTIONS, start=1)]
    return best


def config_diff(configs: Mapping[str, Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Rows {key, <run>: value, ...} for every key whose value differs (or is missing) between runs."""
    keys = sorted(set().union(*[c.keys() for c in configs.values()])) if configs else []
    rows = []
    for k in keys:
        values = {name: c.get(k, "(absent)") for name, c in configs.items()}
        if len({repr(v) for v in values.values()}) > 1:
            rows.append({"key": k, **{name: display(v) for name, v in values.items()}})
    return rows


def display(v: Any) -> str:
    return v if isinstance(v, str) else repr(v)
