"""Key maps from the metric names of TRL, verl and OpenRLHF to ours, and the helpers every reader shares.

A map is a plain dict `their name -> canonical name`. Where a framework's metric means something other than
ours, the comment on its line says how; a metric with no faithful canonical twin stays under its own name
as an extra column (nothing is dropped, nothing is relabelled into a meaning it does not have).
Loggers such as wandb and TensorBoard add prefixes (`train/`, `eval/`); `canonical_name` strips them.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Mapping
from functools import lru_cache
from typing import Any

import numpy as np
import pandas as pd

from collectors.run import NAN_AT
from collectors.schema import METRICS

# TRL 1.16 GRPOTrainer log keys (trainer_state.json log_history, wandb, TensorBoard).
TRL: dict[str, str] = {
    "reward": "reward/mean",
    # TRL's reward_std is the std over the whole batch, like our reward/std (not a within-group std).
    "reward_std": "reward/std",
    # Counts zero-variance groups only when scale_rewards is "group" or "none"; with "batch" it is 0 or 1.
    "frac_reward_zero_std": "groups/zero_std_frac",
    "completions/mean_length": "completions/len_mean",
    "completions/max_length": "completions/len_max",
    # Fraction of completions that hit max_completion_length without EOS: our truncated fraction.
    "completions/clipped_ratio": "completions/truncated_frac",
    "kl": "policy/kl_ref",
    "entropy": "policy/entropy",
    "clip_ratio/region_mean": "policy/clipfrac",
    "clip_ratio/low_mean": "policy/clipfrac_low",
    "clip_ratio/high_mean": "policy/clipfrac_high",
    # Without EOS the whole completion is cut; TRL logs 0 here when no completion of the step ended (min and max
    # of the terminated lengths have no canonical twin and stay under their own names).
    "completions/mean_terminated_length": "completions/terminated_len_mean",
    # vLLM-vs-trainer importance sampling diagnostics; ours is the mean |log p rollout - log p train|.
    "sampling/sampling_logp_difference/mean": "policy/rollout_logprob_abs_diff",
    "sampling/sampling_logp_difference/max": "policy/rollout_logprob_abs_diff_max",
    # TRL (1.16 and the 0.2x versions) logs the IS ratio after its correction: clamped to the clip bounds in the
    # *_truncate modes, 0 for masked tokens/sequences in the *_mask modes (the default, sequence_mask, clip_max
    # 3). Its mean is therefore the weight the loss used, our rollout_is_weight_mean, not the raw ratio's mean;
    # its min and max are bounded by the clip and have no canonical twin (they stay under their own names).
    "sampling/importance_sampling_ratio/mean": "policy/rollout_is_weight_mean",
    "loss": "loss/total",
    "grad_norm": "optim/grad_norm",
    "learning_rate": "optim/lr",
    # TRL: seconds in training_step summed over one optimizer step (generation included, data loading not)
    "step_time": "perf/step_s",
    "eval_reward": "eval/reward_mean",
}
# The transformers Trainer's end-of-training summary, logged once at the last step: not a step's metric.
TRAINER_SUMMARY_KEYS = frozenset({"train_runtime", "train_samples_per_second", "train_steps_per_second",
                                  "train_loss", "total_flos"})

# verl (ray_trainer metrics; file logger, console, wandb).
VERL: dict[str, str] = {
    # critic/score is the verifier score, critic/rewards the score after KL-in-reward shaping.
    "critic/score/mean": "reward/mean",
    "critic/score/min": "reward/min",
    "critic/score/max": "reward/max",
    "actor/pg_clipfrac": "policy/clipfrac",
    # actor/pg_clipfrac_lower is the dual-clip bound (negative advantages, ratio > clip_ratio_c), not 1 - eps
    "actor/pg_clipfrac_lower": "policy/clipfrac_dual",
    # ppo_kl is the KL between the old (rollout-time) and current policy, a staleness gauge.
    "actor/ppo_kl": "policy/approx_kl_old",
    "actor/entropy": "policy/entropy",
    # Older verl logged the entropy itself under this name (the coefficient is applied elsewhere).
    "actor/entropy_loss": "policy/entropy",
    # kl_loss is the mean KL to the reference, before the coefficient.
    "actor/kl_loss": "policy/kl_ref",
    "actor/pg_loss": "loss/policy",
    "actor/grad_norm": "optim/grad_norm",
    "actor/lr": "optim/lr",
    "critic/advantages/mean": "adv/mean",
    "response_length/mean": "completions/len_mean",
    "response_length/max": "completions/len_max",
    # Fraction of responses that reached the response length limit.
    "response_length/clip_ratio": "completions/truncated_frac",
    # With rollout.calculate_log_probs: |p rollout - p actor| over response tokens, in probabilities (not logs).
    "training/rollout_probs_diff_mean": "policy/rollout_prob_abs_diff",
    "training/rollout_probs_diff_max": "policy/rollout_prob_abs_diff_max",
    "timing_s/step": "perf/step_s",
    "timing/step": "perf/step_s",
    "perf/throughput": "perf/tokens_per_s",
    "perf/time_per_step": "perf/step_s",
    # KL in the reward (algorithm.use_kl_in_reward): the mean per-token KL of the rollout policy to the
    # reference, and its coefficient; newer verl names them actor/reward_kl_penalty(_coeff).
    "critic/kl": "policy/kl_ref",
    "critic/kl_coeff": "policy/kl_coef",
    "actor/reward_kl_penalty": "policy/kl_ref",
    "actor/reward_kl_penalty_coeff": "policy/kl_coef",
    # Online filtering: fraction of prompt groups whose responses all scored 0 / all scored 1, before the filter.
    "rollout/too_bad_sample_ratio": "groups/all_fail_frac",
    "rollout/too_good_sample_ratio": "groups/all_pass_frac",
}

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
#   `dynamic_filtering_pass_rate` (0.8.1 on): percent of the prompts consumed that dynamic filtering kept; the
#   console reader turns it into groups/dropped_frac (here it would be read as a fraction, so it is not mapped);
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
    # fraction. Where a log has both, readers that choose take this one over response_clip_ratio.
    "truncated": "completions/truncated_frac",
    # 0.8.3 on: 1 when the sample hit the length cap, whether or not its last token was the end token: the
    # response reached max_new_tokens (experience_maker.py), or in newer versions prompt + response reached
    # the context window (prompt_max_len + max_new_tokens; in agent runs the environment's tokens count).
    "response_clip_ratio": "completions/truncated_frac",
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

FAMILIES: dict[str, dict[str, str]] = {"trl": TRL, "verl": VERL, "openrlhf": OPENRLHF}
# Loggers' namespaces; `train/` is dropped, `eval/` and `eval_` name an eval metric.
_PREFIXES = ("train/", "training/", "train_")


def canonical_name(key: str, maps: Iterable[Mapping[str, str]] = FAMILIES.values()) -> str:
    """Our name for `key`: a known family key, a canonical name as is, else `key` unchanged (an extra column)."""
    maps = list(maps)
    for candidate in _candidates(key):
        if candidate in METRICS:
            return candidate
        for table in maps:
            if candidate in table:
                return table[candidate]
    return key


def _candidates(key: str) -> list[str]:
    out = [key]
    for prefix in _PREFIXES:
        if key.startswith(prefix) and key != prefix:
            out.append(key[len(prefix):])
    if key.startswith("eval/"):
        out.append("eval_" + key[len("eval/"):])
    return out


@lru_cache(maxsize=1 << 14)
def family_name(key: str) -> str:
    """`canonical_name` over every family map, cached: readers call it once per logged value."""
    return canonical_name(key)


def to_number(value: Any) -> float | None:
    """A float for numbers, booleans and numeric strings (NaN included); None for anything else.

    Out of float range is kept as infinity with its sign (an integer of 400 digits, "1e400"): the value was
    logged, it is just not finite, and the diagnosis treats it as such.
    """
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, (int, float, np.integer, np.floating)):
        try:
            return float(value)
        except OverflowError:  # an int beyond 1.8e308
            return math.inf if value > 0 else -math.inf
    if isinstance(value, str):
        try:
            return float(value.strip())
        except ValueError:
            return None
    return None


STEP_LIMIT = 2**63  # steps are int64 in every table


def to_step(value: Any) -> int | None:
    """An int64 step from an int, an integral float or integer text; None for anything else (NaN, 1e400,
    2**80, 1.5, "x"): such a row has no place on the step axis and is left out by `chunk`."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (float, np.floating)):
        if not math.isfinite(value) or value != int(value):
            return None
        value = int(value)
    elif isinstance(value, str):
        if not is_int_text(value.strip()):
            return None
        value = int(value.strip()) if len(value) < 30 else STEP_LIMIT
    elif not isinstance(value, (int, np.integer)):
        return None
    return int(value) if -STEP_LIMIT <= value < STEP_LIMIT else None


BAD_STEPS = "bad_steps"  # chunk.attrs: how many rows `chunk` left out for a step that is not an int64


def map_row(raw: Mapping[str, Any], maps: Iterable[Mapping[str, str]] | Callable[[str], str] | None = None,
            overrides: Mapping[str, str] | None = None) -> tuple[dict[str, float], list[str]]:
    """Rename and coerce one step's metrics; return (row, keys whose value was not a number).

    A null value stays null (None) rather than absent, so a sparse key keeps its column, and apart from a
    logged NaN (float NaN), which `chunk` records. When two source keys land on one canonical name
    (`actor/entropy` and the old `actor/entropy_loss`), the first non-null wins.
    """
    if maps is None:
        lookup = family_name
    elif callable(maps):  # a cached name function of the reader's own (per-value speed)
        lookup = maps
    else:
        lookup = lambda k, m=list(maps): canonical_name(k, m)
    row: dict[str, float | None] = {}
    bad: list[str] = []
    for key, value in raw.items():
        name = (overrides or {}).get(key) or lookup(key)
        number = None if value is None else to_number(value)
        if number is None and value is not None:
            bad.append(key)
            continue
        if name in row and row[name] is not None and not math.isnan(row[name]):
            continue
        row[name] = number
    return row, bad


def chunk(rows: list[dict[str, Any]], seq_start: int = 0) -> pd.DataFrame:
    """Rows of {"step": int, name: float or None} -> a metrics chunk with `_seq` in arrival order.

    In the frame a null (None) and a logged NaN are both NaN, so the logged NaNs are listed in
    `frame.attrs[NAN_AT]` first: the diagnosis tells "not measured this step" from "the loss was NaN".
    A row whose step is not an int64 (NaN, 1e400, 2**80, text) is left out; `frame.attrs[BAD_STEPS]`
    counts them for the reader to report.
    """
    good = [row | {"step": step} for row in rows if (step := to_step(row.get("step"))) is not None]
    left_out, rows = len(rows) - len(good), good
    if any(not k.isascii() for row in rows for k in row):  # JSON's "\ud800" is a lone surrogate: no column name
        rows = [{k.encode("utf-8", "replace").decode() if not k.isascii() else k: v for k, v in row.items()}
                for row in rows]
    nan_at: dict[str, list[int]] = {}
    for row in rows:
        for key, value in row.items():
            if isinstance(value, float) and math.isnan(value):  # a null (None) is not a NaN
                nan_at.setdefault(key, []).append(int(row["step"]))
    frame = pd.DataFrame(rows)
    frame.attrs[NAN_AT] = nan_at
    frame.attrs[BAD_STEPS] = left_out
    if not len(frame):
        return frame
    frame["step"] = frame["step"].astype("int64")
    frame["_seq"] = np.arange(seq_start, seq_start + len(frame), dtype=np.int64)
    return frame


def parse_overrides(pairs: Iterable[str]) -> dict[str, str]:
    """`["theirs=ours", ...]` -> {"theirs": "ours"}; raises ValueError naming the bad pair."""
    out: dict[str, str] = {}
    for pair in pairs:
        theirs, sep, ours = pair.partition("=")
        if not sep or not theirs or not ours:
            raise ValueError(f"--map {pair!r}: expected theirs=ours")
        out[theirs] = ours
    return out


_STEP_RE = re.compile(r"^\d+$")


def is_int_text(text: str) -> bool:
    return bool(_STEP_RE.match(text))


_SCALED_RE = re.compile(r"^(?P<name>.+)\((?P<scale>[0-9.]+(?:e[-+]?\d+)?)\)$", re.IGNORECASE)


def unscale(key: str, value: float) -> tuple[str, float]:
    """Older verl logs `actor/lr(1e-4): 0.010`, meaning 0.010 x 1e-4: return ("actor/lr", 1e-6)."""
    m = _SCALED_RE.match(key)
    try:
        return (m["name"], value * float(m["scale"])) if m else (key, value)
    except ValueError:  # "1.2.3" matches the pattern but is no number: not a scale, a plain name
        return key, value


def merge_by_step(rows: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Rows that share a step become one (later keys win), in first-appearance order.

    The run table replaces a whole row per step, so several partial writes of one step (a validation line
    and a training line, one TensorBoard tag at a time) must be merged before they reach it.
    """
    merged: dict[int, dict[str, Any]] = {}
    for row in rows:
        step = to_step(row.get("step"))
        if step is None:
            merged.setdefault(id(row), row)  # not a step; `chunk` leaves it out and counts it
        else:
            merged.setdefault(step, {}).update(row | {"step": step})
    return list(merged.values())


def fill_from(frame: pd.DataFrame, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Complete rows for steps already in `frame` with the values already there (the new ones win)."""
    if not len(frame) or not rows:
        return rows
    steps = frame["step"].to_numpy()
    out = []
    for row in rows:
        i = int(np.searchsorted(steps, row["step"]))
        if i < len(steps) and steps[i] == row["step"]:
            old = {k: v for k, v in frame.iloc[i].items() if not (isinstance(v, float) and math.isnan(v))}
            old.pop("_seq", None)
            row = old | row
        out.append(row)
    return out


def step_chunks(known: pd.DataFrame, rows: list[dict[str, Any]], seq: int) -> tuple[list[pd.DataFrame], int]:
    """New rows of a reader -> ([metrics chunk] or [], the next `_seq`).

    Partial writes of a step are merged, and a step already in `known` (the run's table) keeps the values
    it had, because the table replaces whole rows per step.
    """
    if not rows:
        return [], seq
    rows = fill_from(known, merge_by_step(rows))
    return [chunk(rows, seq)], seq + len(rows)

