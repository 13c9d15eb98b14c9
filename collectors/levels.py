"""Columns whose meaning the logged key alone does not say: the run's config does (or, for a sign, the framework).

TRL logs `sampling/importance_sampling_ratio/mean` under one name whatever its `vllm_importance_sampling_mode`:
in the token modes it is the mean per-token weight, in the sequence modes the mean per-response weight, a
product of token ratios (trl/trainer/grpo_trainer.py, `_generate_and_score_completions`). The two need
different yardsticks (a product over 8,000 tokens of per-token ratios of 1.0001 is 0.45), so they are two
canonical columns, and which one a run's values go to is a fact of the run, read here from its config.
ms-swift's `rollout_correction/*` likewise follow its `rollout_importance_sampling_mode`.

Every reader's chunks pass through `place` (collectors.run.Run.refresh), so a key is placed the same way
whichever logger carried it (wandb, TensorBoard, trainer_state.json, a console log). A run whose config does not
name the mode keeps the key under its own name (an extra column): guessing the level would judge the values
with the wrong yardstick.

Two more facts a key map cannot hold, applied here for the same reason (every logger alike): a stand-in key fills
a canonical column only where the faithful key is absent (OpenRLHF's `response_clip_ratio` beside `truncated`:
the map sent both to one column, and which value a step kept depended on the order of the tags), and OpenRLHF's
`dynamic_filtering_pass_rate` is in percent of the prompts dynamic filtering consumed (`dropped_frac`, which the
OpenRLHF console reader uses as well). slime counts its tied groups (`rollout/zero_std/count_<r>`) where the schema
has a fraction: with the config's rollout_batch_size (prompt groups per rollout) the counts become one.

AReaL logs `behave_approx_kl` as log p proximal - log p behaviour, whose mean estimates minus KL(behaviour ||
proximal) (areal/utils/functional/functional.py, `ppo_actor_loss_fn`): negated, it is policy/rollout_kl (over the
tokens its rejection sampling kept; see collectors/readers/keymaps/areal.py).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import pandas as pd

LEVEL_INFO = "rollout_is_level"  # RunMeta.info key: {logged key: "mode from config key = value"}
_PREFIXES = ("train/", "training/")  # the loggers' namespaces a key may carry (transformers, verl)

TOKEN_WEIGHT, SEQ_WEIGHT = "policy/rollout_is_weight_mean", "policy/rollout_is_seq_weight_mean"
TOKEN_MASKED, SEQ_MASKED = "policy/rollout_is_masked_frac", "policy/rollout_is_seq_masked_frac"


@dataclass(frozen=True)
class ByMode:
    """A logged key whose canonical column depends on a mode named in the config."""

    key: str  # as the framework names it, without a logger's prefix
    config: tuple[str, ...]  # config keys that name the mode, first found wins
    to: Mapping[str, str]  # mode -> canonical column; a mode not listed leaves the key under its own name
    implied: tuple[tuple[str, str], ...] = ()  # (config key, mode): a key whose presence alone says the mode


TRL_MODES = ("vllm_importance_sampling_mode",)
SWIFT_MODES = ("rollout_importance_sampling_mode",)

BY_MODE: tuple[ByMode, ...] = (
    # TRL 0.26 on: four modes, default sequence_mask; logged after the clamp (truncate) or with masked units as 0
    # (mask): the weight the loss used. Before 0.26 (a `vllm_importance_sampling_cap` and no mode) it was
    # per-token truncation only.
    ByMode("sampling/importance_sampling_ratio/mean", TRL_MODES,
           {"token_truncate": TOKEN_WEIGHT, "token_mask": TOKEN_WEIGHT,
            "sequence_truncate": SEQ_WEIGHT, "sequence_mask": SEQ_WEIGHT},
           implied=(("vllm_importance_sampling_cap", "token_truncate"),)),
    # ms-swift: the mean over completion tokens of the weights. Its sequence modes use the geometric mean of the
    # token ratios (per-token scale, not a product): sequence_mask keeps each token's own ratio (0 in a masked
    # response), a per-token weight; sequence_truncate spreads a clamped geometric mean over the tokens, which is
    # neither column and stays under its own name.
    ByMode("rollout_correction/is_weight_mean", SWIFT_MODES,
           {"token_truncate": TOKEN_WEIGHT, "token_mask": TOKEN_WEIGHT, "sequence_mask": TOKEN_WEIGHT}),
    # the share of tokens (token modes) or of responses (sequence modes) over the threshold
    ByMode("rollout_correction/clipped_frac", SWIFT_MODES,
           {"token_truncate": TOKEN_MASKED, "token_mask": TOKEN_MASKED,
            "sequence_truncate": SEQ_MASKED, "sequence_mask": SEQ_MASKED}),
)
_BY_KEY = {m.key: m for m in BY_MODE}
# logged key -> canonical column of its negation
NEGATED: dict[str, str] = {"ppo_actor/update/behave_approx_kl/avg": "policy/rollout_kl"}
# stand-in key -> (canonical column, the faithful keys that take it first). OpenRLHF 0.8.3 on: response_clip_ratio
# is 1 for a sample that reached the length cap whether or not its last token ended it (newer versions: prompt +
# response reaching the context window); 0.9.2 on, `truncated` is vLLM's finish_reason == "length", our meaning.
STAND_INS: dict[str, tuple[str, tuple[str, ...]]] = {
    "response_clip_ratio": ("completions/truncated_frac", ("truncated", "rollout/truncated_rate")),
}
PASS_RATE, DROPPED = "dynamic_filtering_pass_rate", "groups/dropped_frac"


def _setting(config: Mapping[str, Any], name: str) -> Any:
    """The value of `name` in a flattened config (`a.b.name` counts), or None."""
    if name in config:
        return config[name]
    return next((v for k, v in config.items() if k.endswith("." + name)), None)


def mode_of(rule: ByMode, config: Mapping[str, Any]) -> tuple[str, str] | None:
    """(mode, how it is known) from the config, or None when the config does not say."""
    for name in rule.config:
        value = _setting(config, name)
        if isinstance(value, str) and value:
            return value, f"config {name} = {value}"
    for name, mode in rule.implied:
        if _setting(config, name) is not None:
            return mode, f"config {name} without a mode: {mode}"
    return None


def _bare(column: str) -> str:
    for prefix in _PREFIXES:
        if column.startswith(prefix):
            return column[len(prefix):]
    return column


def plan(columns, config: Mapping[str, Any]) -> dict[str, tuple[str, str]]:
    """{logged column: (canonical column, how the level is known)} for the columns of `columns` placed by mode."""
    out: dict[str, tuple[str, str]] = {}
    for col in columns:
        rule = _BY_KEY.get(_bare(str(col)))
        if rule is None:
            continue
        got = mode_of(rule, config)
        if got is not None and got[0] in rule.to:
            out[col] = (rule.to[got[0]], got[1])
    return out


def place(chunk: pd.DataFrame, config: Mapping[str, Any], info: dict[str, Any]) -> pd.DataFrame:
    """The chunk with its mode-dependent columns renamed to their canonical column (where the config names the
    mode and no column of that name is there already); `info[LEVEL_INFO]` says which and why."""
    chunk = _zero_std_counts(_pass_rate(_stand_ins(_negate(chunk)), config), config)
    moves = plan(chunk.columns, config)
    moves = {c: t for c, t in moves.items() if t[0] not in chunk.columns}
    if not moves:
        return chunk
    info[LEVEL_INFO] = {**info.get(LEVEL_INFO, {}), **{c: f"{t} ({how})" for c, (t, how) in moves.items()}}
    out = chunk.rename(columns={c: t for c, (t, _) in moves.items()})
    out.attrs = dict(chunk.attrs)
    nan_at = out.attrs.get("nan_at")
    if nan_at:
        out.attrs["nan_at"] = {moves[k][0] if k in moves else k: v for k, v in nan_at.items()}
    return out


def _negate(chunk: pd.DataFrame) -> pd.DataFrame:
    """NEGATED keys' canonical twins added beside them (the logged column stays as it was)."""
    add = {t: -chunk[c] for c in chunk.columns if (t := NEGATED.get(_bare(str(c)))) and t not in chunk.columns}
    if not add:
        return chunk
    out = chunk.assign(**add)
    out.attrs = dict(chunk.attrs)
    nan_at = out.attrs.get("nan_at")
    if nan_at:
        logged = {NEGATED[_bare(str(c))]: nan_at[c] for c in nan_at if _bare(str(c)) in NEGATED}
        out.attrs["nan_at"] = {**nan_at, **logged}
    return out


def _stand_ins(chunk: pd.DataFrame) -> pd.DataFrame:
    """A stand-in key renamed to its canonical column when neither that column nor a faithful key is in the chunk;
    else it stays under its own name (an extra column), whatever order the keys came in."""
    bare = {_bare(str(c)): c for c in chunk.columns}
    moves = {col: canon for key, (canon, faithful) in STAND_INS.items() if (col := bare.get(key)) is not None
             and canon not in chunk.columns and not any(f in bare for f in faithful)}
    if not moves:
        return chunk
    out = chunk.rename(columns=moves)
    out.attrs = dict(chunk.attrs)
    nan_at = out.attrs.get("nan_at")
    if nan_at:
        out.attrs["nan_at"] = {moves.get(k, k): v for k, v in nan_at.items()}
    return out


def dropped_frac(pct: float, n_samples: float | None) -> float | None:
    """groups/dropped_frac from OpenRLHF's dynamic_filtering_pass_rate: 1 - pct / 100 (0.8.1 on: percent of the
    prompts consumed that the filter kept); 0.11 logs kept samples per consumed prompt, up to n_samples x 100,
    so above 100 it is divided by n_samples_per_prompt; None where the unit cannot be told (above 100 without
    n_samples) or the value is no percentage."""
    if math.isnan(pct) or pct < 0 or math.isinf(pct):
        return None
    if pct <= 100:
        return 1.0 - pct / 100.0
    if n_samples and n_samples >= 1 and pct <= 100 * n_samples:
        return 1.0 - pct / (100.0 * n_samples)
    return None


def n_samples_per_prompt(config: Mapping[str, Any]) -> float | None:
    value = _setting(config, "n_samples_per_prompt")
    try:
        return None if value is None or isinstance(value, bool) else float(value)
    except (TypeError, ValueError):
        return None


def _pass_rate(chunk: pd.DataFrame, config: Mapping[str, Any]) -> pd.DataFrame:
    """groups/dropped_frac beside a logged dynamic_filtering_pass_rate (kept under its own name) where the chunk
    has none."""
    col = next((c for c in chunk.columns if _bare(str(c)) == PASS_RATE), None)
    if col is None or DROPPED in chunk.columns:
        return chunk
    n = n_samples_per_prompt(config)
    values = [dropped_frac(float(v), n) for v in chunk[col]]
    if all(v is None for v in values):
        return chunk  # the unit cannot be told (above 100 without n_samples_per_prompt): no column of nulls
    out = chunk.assign(**{DROPPED: [float("nan") if v is None else v for v in values]})
    out.attrs = dict(chunk.attrs)
    return out


# slime (slime/observability/rollout_metrics.py `_compute_zero_std_metrics`): `rollout/zero_std/count_<r>` counts the
# step's prompt groups whose rewards all equal r, logged only for the values that occur (none at all for PPO); the
# groups number rollout_batch_size. A slime rollout step is one that logs `rollout/repetition_frac` (every rollout
# does, `compute_metrics_from_samples`; no other framework's key), so a step without tied groups reads 0.
ZERO_STD_COUNT, ROLLOUT_MARK, ZERO_STD = "rollout/zero_std/count_", "rollout/repetition_frac", "groups/zero_std_frac"


def _zero_std_counts(chunk: pd.DataFrame, config: Mapping[str, Any]) -> pd.DataFrame:
    """groups/zero_std_frac = the step's tied-group counts / rollout_batch_size, when the config gives that size,
    names a group-based advantage (not ppo), and the chunk holds slime's rollout steps."""
    groups = _setting(config, "rollout_batch_size")
    estimator = _setting(config, "advantage_estimator")
    if (ZERO_STD in chunk.columns or ROLLOUT_MARK not in chunk.columns or estimator in (None, "ppo")
            or isinstance(groups, bool) or not isinstance(groups, (int, float)) or not groups > 0):
        return chunk
    counts = [c for c in chunk.columns if str(c).startswith(ZERO_STD_COUNT)]
    tied = chunk[counts].fillna(0.0).sum(axis=1) if counts else pd.Series(0.0, index=chunk.index)
    frac = (tied / float(groups)).where(chunk[ROLLOUT_MARK].notna())
    out = chunk.assign(**{ZERO_STD: frac})
    out.attrs = dict(chunk.attrs)
    return out
