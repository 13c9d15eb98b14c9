"""Every knob of the trainer, one dataclass field each, with its docstring; presets are named overrides.

Precedence, lowest first: field defaults, the preset, a TOML file, then `--set key=value` in order.
Names of algorithm choices are checked against their registries in `validate`, not typed as Literals,
so a variant registered elsewhere (for example a scenario's broken verifier) is a valid value.
"""

from __future__ import annotations

import ast
import dataclasses
import functools
import inspect
import itertools
import textwrap
import tomllib
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


class ConfigError(ValueError):
    """A bad configuration; the message is one line naming the key or file."""


@dataclass
class ModelConfig:
    kind: str = "tiny"
    """policy implementation: "tiny" (built-in char-level transformer, no download) or "hf" (any causal LM)"""
    hf_path: str = ""
    """Hugging Face model: a local folder or a hub id; the tokenizer is loaded from the same place (kind=hf)"""
    n_layer: int = 2
    """tiny model: transformer blocks"""
    n_head: int = 4
    """tiny model: attention heads per block"""
    d_model: int = 64
    """tiny model: width of the residual stream"""
    block_size: int = 64
    """tiny model: longest prompt + completion, in characters"""
    device: str = "auto"
    """"auto" (CUDA when available, else CPU), "cpu", "cuda" or "cuda:N\""""
    autocast_bf16: bool = True
    """on CUDA, run the training forward/backward under bf16 autocast (weights and optimizer stay fp32)"""
    cpu_threads: int = 0
    """torch threads on CPU (one process); 0 = 1 for the tiny model, torch's default for kind=hf. The tiny
    model's 64-wide matrices are too small to split: on 2 shared cores its warm start took 32 s with 2 threads
    against 11 s with 1 (load 1-2), and 168 s against 40 s at load 7, each op waiting for a thread that another
    process holds (issue 39)"""
    gradient_checkpointing: bool = True
    """kind=hf: keep only each decoder layer's input for the backward and recompute the layer there (one more
    forward per update, a fraction of the activation memory; TRL's default too). Same numbers on or off: the
    recompute repeats the same operations (gradients bit-equal on CPU). The tiny model ignores it"""


@dataclass
class TaskConfig:
    name: str = "addition"
    """task: addition, reverse, sort, count or jsonl (see grpo_core/tasks.py)"""
    digits: int = 1
    """addition: operands have up to this many digits (difficulty knob)"""
    length: int = 4
    """reverse/sort/count: length of the input string (difficulty knob)"""
    letters: int = 5
    """reverse/sort/count: size of the alphabet the strings are drawn from ("abcde" for 5)"""
    path: str = ""
    """jsonl: file of {"prompt": ..., "answer": ...} lines"""
    eval_path: str = ""
    """jsonl: optional held-out file; without it a hash split of `path` is held out"""
    verifier: str = ""
    """verifier by name (exact, numeric, regex, last_number, ...) or "module:function"; "" = the task's own"""
    eval_frac: float = 0.2
    """share of prompts held out for eval, chosen by a hash of the prompt text, so never trained on"""
    eval_size: int = 64
    """number of held-out prompts scored at each eval"""


@dataclass
class WarmStartConfig:
    enabled: bool = True
    """supervised warm start before GRPO, so groups mix successes and failures (notes, section 5)"""
    target_pass_rate: float = 0.4
    """stop the warm start once the pass rate SAMPLED at the rollout temperature reaches this"""
    max_steps: int = 2000
    """give up (and record so) after this many supervised steps"""
    check_every: int = 25
    """supervised steps between two sampled pass-rate checks"""
    check_samples: int = 512
    """responses sampled per check; 512 gives a standard error of about 0.02 near 0.4"""
    batch_size: int = 64
    """supervised examples per step"""
    lr: float = 2e-3
    """AdamW learning rate of the warm start"""
    cache_dir: str = ""
    """where warm-start weights are cached by a hash of everything they depend on; "" = ~/.cache/grposcope"""


@dataclass
class RolloutConfig:
    group_size: int = 8
    """G: responses sampled per prompt; the group is the baseline of its own prompt (>= 2)"""
    prompts_per_step: int = 16
    """prompts per rollout; the batch is prompts_per_step * group_size responses"""
    temperature: float = 1.0
    """sampling temperature; log-probs for the loss use the same tempered distribution"""
    top_p: float = 1.0
    """nucleus sampling mass; 1 disables it (log-probs stay those of the untruncated tempered policy)"""
    max_new_tokens: int = 8
    """completion budget; a response that has not ended by then counts as truncated"""
    dtype: str = "fp32"
    """precision of the rollout engine's copy of the weights: fp32, bf16 or fp16 (notes, section 6 q.3)"""
    compiled_decode: bool = False
    """kind=hf on CUDA: sample through a preallocated (static) KV cache with a torch.compile'd decode step
    (CUDA graphs), compiled once per batch shape; on CPU it is ignored (the sampling loop stays as it is).
    Off by default: not yet measured or tested on a GPU"""


@dataclass
class AlgoConfig:
    adv_mode: str = "group"
    """advantage: group (z-score in the group), batch (group mean, batch std), mean_only (Dr. GRPO), rloo
    (leave-one-out mean), reinforce_pp (no group baseline, whitened over the batch's action tokens) or
    reinforce_pp_baseline (group mean subtracted, then whitened over the batch's action tokens)"""
    adv_eps: float = 1e-6
    """added to the std before dividing: A = (r - mean) / (std + eps)"""
    adv_std_unbiased: bool = True
    """std with Bessel's correction (n - 1), as torch.std in TRL and verl; False for the population std"""
    policy_loss: str = "clip"
    """surrogate objective (losses.POLICY_LOSSES): clip (PPO, every preset), dual_clip, cispo or sapo"""
    clip_ratio_c: float = 3.0
    """dual_clip: for a negative advantage the loss is capped at -c A (verl's clip_ratio_c); must be > 1"""
    sapo_tau_pos: float = 1.0
    """sapo: temperature of the soft gate on tokens with a positive advantage (TRL's default)"""
    sapo_tau_neg: float = 1.05
    """sapo: temperature of the soft gate on tokens with a negative or zero advantage (TRL's default)"""
    log_ratio_clamp: float = 0.0
    """clamp log(pi / pi_old) to [-c, c] before exp (verl uses 20); 0 leaves it unclamped"""
    ratio: str = "token"
    """importance ratio per token, or per sequence as the geometric mean of token ratios (GSPO)"""
    loss_agg: str = "seq_mean_token_mean"
    """token_mean (DAPO), seq_mean_token_mean (GRPO) or seq_mean_token_sum_norm (Dr. GRPO)"""
    loss_agg_norm: int = 0
    """constant divisor of seq_mean_token_sum_norm; 0 means rollout.max_new_tokens"""
    kl_mode: str = "loss"
    """KL to the frozen reference: none, loss (added to the objective) or reward (subtracted from r)"""
    kl_estimator: str = "k3"
    """per-token KL estimator (Schulman): k1 = log p/p_ref, k2 = (log p/p_ref)^2 / 2, k3 = r - 1 - log r,
    low_var_kl = verl's k3 with its clamps (log r to +-20, the KL to +-10)"""
    kl_bias_correction: bool = False
    """multiply the per-token KL in the loss by the ratio pi/pi_old (TRL's use_bias_correction_kl)"""
    kl_coef: float = 0.04
    """beta: weight of the KL term (in the loss, or per sequence in the reward)"""
    clip_eps_low: float = 0.2
    """ratio clipped below at 1 - eps_low (binds on negative advantages)"""
    clip_eps_high: float = 0.2
    """ratio clipped above at 1 + eps_high (binds on positive advantages; DAPO's clip-higher raises it)"""
    epochs: int = 1
    """passes over each rollout; more than 1 makes later minibatches off-policy (staleness)"""
    minibatches: int = 1
    """optimizer steps per epoch; each takes an equal share of the rollout's groups"""
    drop_zero_var_groups: bool = False
    """drop groups whose rewards are all equal before the update (DAPO dynamic sampling)"""
    refill_rounds: int = 0
    """with drop_zero_var_groups: sample up to this many more rounds to refill the batch to prompts_per_step
    groups of mixed rewards (DAPO's dynamic sampling with refill, verl's max_num_gen_batches); 0 = no refill"""
    mask_truncated: bool = False
    """completions cut at max_new_tokens get no loss (TRL's mask_truncated_completions, DAPO's overlong
    filtering); they still count in their group's advantage"""
    overlong_buffer: int = 0
    """DAPO soft overlong penalty: the last this-many tokens before max_new_tokens cost up to
    overlong_penalty reward, linearly; 0 = off"""
    overlong_penalty: float = 1.0
    """DAPO soft overlong penalty: the reward lost by a completion that reaches max_new_tokens"""
    old_logprob_source: str = "recompute"
    """old log-probs: recompute (training model, no grad; skipped when exact: one update per rollout and
    the rollout engine is the training model in its precision) or rollout (saved by the rollout pass)"""
    rollout_correction: str = ""
    """rollout/training mismatch weights on the policy term: token_truncate, token_mask (TIS/MIS per token),
    sequence_truncate, sequence_mask; "" = none (TRL's vllm_importance_sampling_mode)"""
    rollout_correction_min: float = 0.0
    """lower bound of the correction weight (truncated up to it, or masked below it)"""
    rollout_correction_max: float = 3.0
    """upper bound of the correction weight (truncated down to it, or masked above it); TRL's default 3"""


@dataclass
class OptimConfig:
    lr: float = 5e-4
    """AdamW learning rate (constant after warmup); 5e-4 moves the tiny default clearly in 200 steps"""
    warmup_steps: int = 0
    """linear learning-rate warmup, in optimizer steps"""
    weight_decay: float = 0.0
    """AdamW decoupled weight decay"""
    beta1: float = 0.9
    """AdamW beta1"""
    beta2: float = 0.99
    """AdamW beta2"""
    grad_clip: float = 1.0
    """clip the global gradient norm to this; 0 disables clipping (the norm is logged either way)"""
    micro_batch: int = 0
    """sequences per forward/backward of the update (gradients accumulated to the minibatch's, each piece's
    loss taken over the whole minibatch's count) and per forward of the no-grad old/reference log-prob
    passes; 0 = the whole minibatch (the whole rollout for the no-grad passes) at once. Same update within
    float rounding, in less memory"""


@dataclass
class LogConfig:
    samples: bool = True
    """write one samples/ row per response (prompt, completion, reward, advantage ...)"""
    track_kl_ref: bool = True
    """keep the frozen reference even without a KL term, so policy/kl_ref is always charted"""
    progress: bool = True
    """show a progress bar with step, reward and pass rate"""
    wandb: bool = False
    """mirror every metric to wandb under the same names"""
    wandb_project: str = "grposcope"
    """wandb project"""
    wandb_mode: str = ""
    """wandb mode: online, offline or disabled; "" leaves it to WANDB_MODE"""


@dataclass
class FaultConfig:
    """Deliberate bugs, every one off by default: they exist so the scenarios (grpo_core/scenarios.py)
    can reproduce the notes' failures by their real mechanism. Never switch one on to train for real."""

    sign_flip: bool = False
    """FAULT for teaching/testing: the advantage enters the loss with its sign inverted (reward is pushed down)"""
    detach_policy_term: bool = False
    """FAULT for teaching/testing: the ratio is detached, so the policy term carries no gradient (a stray .detach())"""
    reward_verifier: str = ""
    """FAULT for teaching/testing: score training rollouts with this verifier (eval and warm start keep the task's); "" = off"""


@dataclass
class Config:
    preset: str = "grpo"
    """named override set (grpo, dr_grpo, dapo, gspo) applied before the file and --set; recorded in run.json"""
    steps: int = 200
    """optimizer steps to train for"""
    seed: int = 0
    """seeds torch, sampling and the task; a CPU run with the same seed is reproducible"""
    eval_every: int = 20
    """greedy eval on the held-out split at step 0 and every N steps; 0 disables eval"""
    out: str = ""
    """run folder; "" = runs/<preset>-<task>-<time>"""
    name: str = ""
    """run name shown by the dashboard; "" = the folder's name"""
    model: ModelConfig = field(default_factory=ModelConfig)
    task: TaskConfig = field(default_factory=TaskConfig)
    warm_start: WarmStartConfig = field(default_factory=WarmStartConfig)
    rollout: RolloutConfig = field(default_factory=RolloutConfig)
    algo: AlgoConfig = field(default_factory=AlgoConfig)
    optim: OptimConfig = field(default_factory=OptimConfig)
    log: LogConfig = field(default_factory=LogConfig)
    faults: FaultConfig = field(default_factory=FaultConfig)


# name -> (source, overrides). Every preset names all the knobs it is about, so applying one after
# another leaves no trace of the first.
PRESETS: dict[str, tuple[str, dict[str, Any]]] = {
    "grpo": (
        "DeepSeekMath (Shao et al. 2024): group z-score, mean over tokens then sequences, k3 KL in the loss",
        {"algo.adv_mode": "group", "algo.ratio": "token", "algo.loss_agg": "seq_mean_token_mean",
         "algo.kl_mode": "loss", "algo.kl_estimator": "k3", "algo.kl_coef": 0.04,
         "algo.clip_eps_low": 0.2, "algo.clip_eps_high": 0.2, "algo.drop_zero_var_groups": False,
         "algo.refill_rounds": 0},
    ),
    "dr_grpo": (
        ("Dr. GRPO (Liu et al. 2025, Understanding R1-Zero-Like Training): no std division, token sums "
         "over a constant, no KL"),
        {"algo.adv_mode": "mean_only", "algo.ratio": "token", "algo.loss_agg": "seq_mean_token_sum_norm",
         "algo.kl_mode": "none", "algo.clip_eps_low": 0.2, "algo.clip_eps_high": 0.2,
         "algo.drop_zero_var_groups": False, "algo.refill_rounds": 0},
    ),
    "dapo": (
        ("DAPO (Yu et al. 2025): clip-higher (0.2/0.28), token-mean loss, dynamic sampling refilled up to 4 "
         "more rounds, no KL"),
        {"algo.adv_mode": "group", "algo.ratio": "token", "algo.loss_agg": "token_mean",
         "algo.kl_mode": "none", "algo.clip_eps_low": 0.2, "algo.clip_eps_high": 0.28,
         "algo.drop_zero_var_groups": True, "algo.refill_rounds": 4},
    ),
    "gspo": (
        "GSPO (Zheng et al. 2025): sequence-level ratio (geometric mean), clip 3e-4/4e-4, no KL",
        {"algo.adv_mode": "group", "algo.ratio": "sequence", "algo.loss_agg": "seq_mean_token_mean",
         "algo.kl_mode": "none", "algo.clip_eps_low": 3e-4, "algo.clip_eps_high": 4e-4,
         "algo.drop_zero_var_groups": False, "algo.refill_rounds": 0},
    ),
}


@functools.cache  # parsing the source is slow, and set_value asks for every override
def field_docs(cls: type) -> dict[str, str]:
    """Attribute docstrings of a dataclass (the string literal under each field), by field name."""
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(cls)))
    except (OSError, TypeError):
        return {}
    body = tree.body[0].body
    docs = {}
    for node, nxt in itertools.pairwise(body):
        if (isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)
                and isinstance(nxt, ast.Expr) and isinstance(nxt.value, ast.Constant)
                and isinstance(nxt.value.value, str)):
            docs[node.target.id] = nxt.value.value.strip()
    return docs


def leaf_fields(cfg: Any, prefix: str = "") -> dict[str, tuple[Any, type, str]]:
    """Dotted key -> (current value, type, docstring) for every scalar field, sections included."""
    out: dict[str, tuple[Any, type, str]] = {}
    hints = typing.get_type_hints(type(cfg))
    docs = field_docs(type(cfg))
    for f in dataclasses.fields(cfg):
        value = getattr(cfg, f.name)
        if dataclasses.is_dataclass(value):
            out.update(leaf_fields(value, f"{prefix}{f.name}."))
        else:
            out[f"{prefix}{f.name}"] = (value, hints[f.name], docs.get(f.name, ""))
    return out


def _coerce(key: str, raw: Any, kind: type) -> Any:
    if isinstance(raw, str) and kind is not str:
        text = raw.strip()
        if kind is bool:
            if text.lower() in ("1", "true", "yes", "on"):
                return True
            if text.lower() in ("0", "false", "no", "off"):
                return False
            raise ConfigError(f"{key}: expected true or false, got {raw!r}")
        try:
            return kind(text)
        except ValueError:
            raise ConfigError(f"{key}: expected {kind.__name__}, got {raw!r}") from None
    if kind is float and isinstance(raw, int) and not isinstance(raw, bool):
        return float(raw)
    if not isinstance(raw, kind) or (kind is int and isinstance(raw, bool)):
        raise ConfigError(f"{key}: expected {kind.__name__}, got {type(raw).__name__} {raw!r}")
    return raw


def set_value(cfg: Config, key: str, raw: Any) -> None:
    """Set one dotted key, converting a string to the field's type; unknown keys raise ConfigError."""
    leaves = leaf_fields(cfg)
    if key not in leaves:
        import difflib

        close = difflib.get_close_matches(key, list(leaves), n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise ConfigError(f"unknown config key {key!r}{hint}")
    value = _coerce(key, raw, leaves[key][1])
    *path, last = key.split(".")
    target = cfg
    for part in path:
        target = getattr(target, part)
    setattr(target, last, value)


def apply_preset(cfg: Config, name: str) -> None:
    if name not in PRESETS:
        raise ConfigError(f"unknown preset {name!r}; choices: {', '.join(PRESETS)}")
    cfg.preset = name
    for key, value in PRESETS[name][1].items():
        set_value(cfg, key, value)


def flatten(table: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """Nested TOML tables -> dotted keys, so `[algo] kl_coef = 0` and `"algo.kl_coef" = 0` agree."""
    flat: dict[str, Any] = {}
    for key, value in table.items():
        if isinstance(value, dict):
            flat.update(flatten(value, f"{prefix}{key}."))
        else:
            flat[f"{prefix}{key}"] = value
    return flat


def read_toml(path: str | Path) -> dict[str, Any]:
    try:
        with open(path, "rb") as fh:
            return flatten(tomllib.load(fh))
    except FileNotFoundError:
        raise ConfigError(f"config file {str(path)!r} not found") from None
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"config file {str(path)!r}: {e}") from None


def build_config(preset: str | None = None, toml_path: str | None = None,
                 overrides: list[tuple[str, Any]] = ()) -> Config:
    """Defaults, then the preset (argument, else the file's `preset`, else grpo), the file, the overrides."""
    cfg = Config()
    from_file = read_toml(toml_path) if toml_path else {}
    apply_preset(cfg, preset or from_file.pop("preset", None) or cfg.preset)
    from_file.pop("preset", None)
    for key, value in list(from_file.items()) + list(overrides):
        set_value(cfg, key, value)
    return cfg


def to_dict(cfg: Config) -> dict[str, Any]:
    """Flat dotted dict of every field, as run.json records it."""
    return {key: value for key, (value, _, _) in leaf_fields(cfg).items()}


def validate(cfg: Config) -> None:
    """Raise ConfigError (one line) for anything that would fail or mislead once training started."""
    # registries live beside their functions
    from grpo_core import advantages, losses, policy, rollout_correction, tasks

    def need(ok: bool, message: str) -> None:
        if not ok:
            raise ConfigError(message)

    r, a = cfg.rollout, cfg.algo
    need(r.group_size >= 2, f"rollout.group_size must be >= 2 (got {r.group_size}): "
                            "a group of one has no baseline")
    need(r.prompts_per_step >= 1, "rollout.prompts_per_step must be >= 1")
    need(r.temperature > 0, "rollout.temperature must be > 0")
    need(0 < r.top_p <= 1, "rollout.top_p must be in (0, 1]")
    need(r.max_new_tokens >= 1, "rollout.max_new_tokens must be >= 1")
    need(r.dtype in policy.DTYPES, f"rollout.dtype must be one of {', '.join(policy.DTYPES)}")
    need(cfg.steps >= 1, "steps must be >= 1")
    need(cfg.optim.micro_batch >= 0, "optim.micro_batch must be >= 0 (0 = the whole minibatch at once)")
    need(cfg.eval_every >= 0, "eval_every must be >= 0")
    need(a.epochs >= 1, "algo.epochs must be >= 1")
    need(1 <= a.minibatches <= r.prompts_per_step,
         f"algo.minibatches must be in 1..rollout.prompts_per_step ({r.prompts_per_step}): "
         "minibatches split whole groups")
    need(a.adv_eps >= 0 and a.kl_coef >= 0, "algo.adv_eps and algo.kl_coef must be >= 0")
    need(0 <= a.clip_eps_low < 1 and a.clip_eps_high >= 0, "algo.clip_eps_low must be in [0, 1), "
                                                          "algo.clip_eps_high >= 0")
    need(a.loss_agg_norm >= 0, "algo.loss_agg_norm must be >= 0")
    need(a.clip_ratio_c > 1, f"algo.clip_ratio_c must be > 1 (got {a.clip_ratio_c})")
    need(a.sapo_tau_pos > 0 and a.sapo_tau_neg > 0, "algo.sapo_tau_pos and algo.sapo_tau_neg must be > 0")
    need(a.log_ratio_clamp >= 0, "algo.log_ratio_clamp must be >= 0 (0 = off)")
    need(a.refill_rounds >= 0, "algo.refill_rounds must be >= 0")
    need(a.refill_rounds == 0 or a.drop_zero_var_groups,
         "algo.refill_rounds refills dropped groups: it needs algo.drop_zero_var_groups=true")
    need(0 <= a.overlong_buffer < r.max_new_tokens,
         f"algo.overlong_buffer must be in 0..rollout.max_new_tokens - 1 ({r.max_new_tokens - 1})")
    need(0 <= a.rollout_correction_min < a.rollout_correction_max,
         "algo.rollout_correction_min must be >= 0 and below algo.rollout_correction_max")
    need(a.rollout_correction == "" or a.old_logprob_source == "recompute",
         "algo.rollout_correction weighs pi_old / pi_rollout: it needs algo.old_logprob_source=recompute "
         "(with rollout the two are the same and every weight is 1)")
    need(a.rollout_correction == "" or a.rollout_correction in rollout_correction.ROLLOUT_CORRECTIONS,
         f"algo.rollout_correction: {rollout_correction.ROLLOUT_CORRECTIONS.unknown(a.rollout_correction)} or \"\"")
    need(a.old_logprob_source in ("recompute", "rollout"),
         f"algo.old_logprob_source must be recompute or rollout (got {a.old_logprob_source!r})")
    need(a.kl_mode in ("none", "loss", "reward"), f"algo.kl_mode must be none, loss or reward (got {a.kl_mode!r})")
    for key, registry, value in [("algo.adv_mode", advantages.ADVANTAGES, a.adv_mode),
                                 ("algo.ratio", losses.RATIOS, a.ratio),
                                 ("algo.policy_loss", losses.POLICY_LOSSES, a.policy_loss),
                                 ("algo.loss_agg", losses.AGGREGATIONS, a.loss_agg),
                                 ("algo.kl_estimator", losses.KL_ESTIMATORS, a.kl_estimator),
                                 ("model.kind", policy.POLICIES, cfg.model.kind),
                                 ("task.name", tasks.TASKS, cfg.task.name)]:
        need(value in registry, f"{key}: {registry.unknown(value)}")
    need(cfg.model.kind != "hf" or bool(cfg.model.hf_path), "model.hf_path is required when model.kind=hf")
    need(not r.compiled_decode or cfg.model.kind == "hf",
         "rollout.compiled_decode is for model.kind=hf (transformers' static KV cache)")
    need(cfg.model.device == "auto" or cfg.model.device.split(":")[0] in ("cpu", "cuda", "mps"),
         f"model.device must be auto, cpu, cuda or cuda:N (got {cfg.model.device!r})")
    need(0 < cfg.task.eval_frac < 1, "task.eval_frac must be in (0, 1)")
    need(cfg.model.cpu_threads >= 0, "model.cpu_threads must be >= 0 (0 = automatic)")
    w = cfg.warm_start
    need(0 <= w.target_pass_rate <= 1, "warm_start.target_pass_rate must be in [0, 1]")
    need(w.check_every >= 1 and w.batch_size >= 1 and w.check_samples >= 1,
         "warm_start.check_every, batch_size and check_samples must be >= 1")
    rv = cfg.faults.reward_verifier
    if rv and ":" not in rv:
        from grpo_core.verifiers import VERIFIERS

        need(rv in VERIFIERS, f"faults.reward_verifier: {VERIFIERS.unknown(rv)}")
