"""What a table of rows means when nobody told us: which column is the step, which rows are eval records, which
columns are companions of a metric. Pure functions on a frame of logged columns, each with the evidence it
wants in the values (a step counts up; a kind column holds words such as `train` and `eval`), so a name alone
never decides. The readers say in a note what was guessed and how `--map` overrides it.

Vocabulary: names gathered from public logs and frameworks' sources (names only, as facts); each entry says why
it means what it is taken for.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

# A column that holds the step, in order of preference (the first one given on most rows wins). The name is a
# candidate only; the values must count up (below).
STEP_NAMES: dict[str, str] = {
    "step": "the common name (our own runs, most custom trainers)",
    "global_step": "transformers' Trainer state and most PyTorch loops",
    "train/global_step": "transformers' wandb/TensorBoard callback",
    "trainer/global_step": "PyTorch Lightning's wandb logger",
    "system/step": "ROLL's pipelines log the step under system/",
    "optimizer_step": "custom GRPO trainers that count optimizer updates (CS336-style trainers)",
    "grpo_step": "custom GRPO trainers that count rollout-and-update rounds",
    "train_step": "custom trainers' name for the update counter",
    "training_step": "custom trainers' name for the update counter",
    "update": "CleanRL-style PPO loops count `update`",
    "updates": "CleanRL-style PPO loops count `updates`",
    "iteration": "verl's older loggers and custom loops",
    "iter": "nanoGPT-style loops",
    "iteration_idx": "custom trainers counting iterations from 0",
    "round": "multi-round RL loops (one rollout-and-update round per row)",
    "_step": "wandb's own history counter (last: a count of log calls, not of updates)",
}

# A column naming what kind of record a row is, and the words that say a row is an eval record.
KIND_NAMES = ("type", "split", "mode", "phase", "stage", "kind", "record_type", "event")
EVAL_WORDS = frozenset({"eval", "evaluation", "val", "valid", "validation", "test", "dev", "held_out", "heldout"})
TRAIN_WORDS = frozenset({"train", "training", "rollout", "rollouts", "update", "optim", "step", "policy"})
# A boolean column true on eval rows only (`{"eval": true, "recall@10": ...}` beside train rows).
EVAL_FLAGS = ("eval", "is_eval", "evaluation", "is_validation")

# Companion columns of a metric X: `X_available` (True/False) and `X_reason` (why X was not measured).
COMPANIONS = ("_available", "_reason")

KIND = "kind"  # `--map COLUMN=kind` names the kind column


@dataclass(frozen=True)
class StepGuess:
    """Which column is the step: `column` (None: the row order) and how that was found, in words."""

    column: str | None
    how: str


def _integers(s: pd.Series) -> np.ndarray | None:
    """The given values of a column as int64 when every one is a whole number below 2**53, else None."""
    try:
        v = pd.to_numeric(s, errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan)
    except (TypeError, ValueError, OverflowError):
        return None
    v = v[~np.isnan(v)]
    if not len(v) or not np.all(np.isfinite(v)) or np.any(np.abs(v) >= 2**53) or np.any(v != np.round(v)):
        return None
    return v.astype(np.int64)


# A step may start over (a relaunch appended to the file) but mostly counts up: it must rise at least this many
# times per fall (5 launches in 1,410 rows rise 350 times per fall; a shuffled column rises about once per fall).
MIN_RISES_PER_FALL = 4


def counts_up(s: pd.Series) -> bool:
    """True when the column's given values are whole numbers that mostly rise (ties allowed: rows of one step)."""
    v = _integers(s)
    if v is None or len(v) < 2:
        return v is not None and len(v) == 1
    d = np.diff(v)
    return bool((d > 0).any()) and int((d < 0).sum()) * MIN_RISES_PER_FALL <= int((d > 0).sum())


def strides_up(s: pd.Series) -> bool:
    """True when a column no name marks as the step still is one: given on every row, whole numbers that rise by
    one fixed stride (1, or a logging interval). A cumulative count (tokens, samples) rises by varying amounts."""
    if s.isna().any():
        return False
    v = _integers(s)
    if v is None or len(v) < 3:
        return False
    d = np.diff(v)
    return bool(d[0] > 0 and (d == d[0]).all())


def guess_step(frame: pd.DataFrame, mapping: Mapping[str, str] | None = None) -> StepGuess:
    """The step column of a block of rows (see the module docstring).

    Order: a column the user maps to `step`; a STEP_NAMES name (also in another case, or as the last part of a
    path such as `trainer/step`) whose values count up, the one given on most rows first; a column whose values
    rise by a fixed stride; else None (the row order).
    """
    cols = [str(c) for c in frame.columns]
    for c in cols:
        if (mapping or {}).get(c) == "step":
            return StepGuess(c, f"`{c}` (your --map {c}=step)")
    named = []
    for c in cols:
        if c in (mapping or {}):
            continue  # the user named what it is
        key = c.lower()
        rank = list(STEP_NAMES).index(key) if key in STEP_NAMES else (
            len(STEP_NAMES) if key.rsplit("/", 1)[-1] in ("step", "global_step") else None)
        if rank is not None:
            named.append((-int(frame[c].notna().sum()), rank, c))
    for _, _, c in sorted(named):
        if counts_up(frame[c]):
            exact = c in ("step", "global_step", "train/global_step", "iteration", "iter", "_step")
            return StepGuess(c, "" if exact else f"`{c}` (a step counter by its name, and its values count up)")
    for c in cols:
        if c not in (mapping or {}) and strides_up(frame[c]):
            return StepGuess(c, f"`{c}` (its values rise by a fixed stride on every row)")
    return StepGuess(None, "the row order (no column counts up as a step does)")


def _words(s: pd.Series) -> set[str]:
    return {str(v).strip().lower() for v in s.dropna().unique()[:50] if isinstance(v, str)}


def guess_kind(frame: pd.DataFrame, mapping: Mapping[str, str] | None = None) -> tuple[str | None, str]:
    """(the column saying which rows are eval records, how it was told), or (None, "").

    A text column named like KIND_NAMES (or mapped to `kind`) whose words include an eval word and either a
    train word or nothing but eval rows beside rows without it; or a boolean EVAL_FLAGS column.
    """
    for c in frame.columns:
        if (mapping or {}).get(str(c)) == KIND:
            return str(c), f"`{c}` (your --map {c}={KIND})"
    for c in frame.columns:
        name = str(c).lower()
        if str(c) in (mapping or {}):
            continue
        if name in KIND_NAMES and frame[c].dtype.kind not in "fiub":
            words = _words(frame[c])
            if words & EVAL_WORDS:
                return str(c), f"`{c}` (its values {', '.join(sorted(words)[:5])} name the record kinds)"
        if name in EVAL_FLAGS and _is_flag(frame[c]):
            return str(c), f"`{c}` (true on eval rows)"
    return None, ""


def _is_flag(s: pd.Series) -> bool:
    given = s.dropna()
    return len(given) > 0 and all(isinstance(v, (bool, np.bool_)) or v in (0, 1, 0.0, 1.0) for v in given[:200])


def eval_rows(frame: pd.DataFrame, column: str) -> np.ndarray:
    """(N,) bool: the rows the kind column marks as eval records."""
    s = frame[column]
    if _is_flag(s):
        return np.asarray(s.map(lambda v: v is True or v == 1), dtype=bool)  # a null is no eval row
    return s.map(lambda v: isinstance(v, str) and v.strip().lower() in EVAL_WORDS).to_numpy(dtype=bool)


def companions(columns) -> list[str]:
    """The `X_available` / `X_reason` columns of a logged metric X among `columns`."""
    names = {str(c) for c in columns}
    return [c for c in names for suffix in COMPANIONS if c.endswith(suffix) and c[: -len(suffix)] in names]


def drop_companions(frame: pd.DataFrame) -> tuple[pd.DataFrame, list[str]]:
    """The frame without companion columns; a metric whose `X_available` is false on a row is null there (what
    was written in its place is no reading). Returns (frame, the companions dropped)."""
    found = companions(frame.columns)
    if not found:
        return frame, []
    frame = frame.copy()
    for c in found:
        if c.endswith("_available"):
            metric = c[: -len("_available")]
            flag = frame[c].map(lambda v: v is False or v == 0 or (isinstance(v, str) and v.strip().lower()
                                                                 in ("false", "0", "no")))
            frame.loc[flag.to_numpy(dtype=bool), metric] = None
    return frame.drop(columns=found), sorted(found)


# -- what the reward is called ----------------------------------------------------------------------------------
# Names that hold the step's reward in logs where no column is called reward (checked in that order, used only
# when no column already means reward/mean): each is the mean reward a trainer or framework logs under it.
REWARD_FALLBACKS: dict[str, str] = {
    "score": "verl's critic/score and custom trainers: the verifier's score before any KL penalty",
    "mean_score": "custom trainers' mean of the verifier's scores",
    "avg_score": "custom trainers' mean of the verifier's scores",
    "total_reward": "custom trainers summing several reward functions per response, averaged over the step",
    "mean_total_reward": "the same, named with its statistic",
    "return": "RL loops (CleanRL, OpenRLHF's `return`): the episode return, the reward of a one-turn response",
    "mean_return": "the same, named with its statistic",
    "episode_return": "multi-turn agent loops: the return of an episode",
    "rewards": "a per-step scalar under the plural (TRL's rewards/<func> without the function)",
}
# Words that make a logged column a pass rate (fraction of responses judged correct), when its values lie in
# [0, 1]; used only when no column already means reward/pass_rate.
PASS_WORDS = ("pass_rate", "success_rate", "solve_rate", "answer_accuracy", "accuracy", "correct_rate", "acc")
# Held-out metrics that are pass rates too: pass@1 (code and math evals: the fraction solved in one sample);
# hit@k and recall@k of a recommender with one held-out item per case (the fraction of cases whose item is in
# the top k). Matched on the last part of the name, `k` any number.
PASS_AT = re.compile(r"^(?:pass@1|hit@\d+|hit_rate|hitrate|recall@\d+)$")
PASS_RANGE = (0.0, 1.0)  # a fraction of responses; a column outside it is no pass rate


def in_unit_range(values: pd.Series) -> bool:
    v = pd.to_numeric(values, errors="coerce").dropna()
    return len(v) > 0 and bool(((v >= PASS_RANGE[0]) & (v <= PASS_RANGE[1])).all())


# A column named with one of these before its metric holds an eval metric (`validation_accuracy`, `val/reward`);
# `eval/` is also what GenericRun names the metrics of eval rows.
EVAL_PREFIXES = ("eval/", "eval_", "val_", "val/", "validation_", "validation/", "valid_", "test_", "test/")


def _split(name: str) -> tuple[str, str]:
    """`eval/reward` -> ("eval/", "reward"); `validation_accuracy` -> ("eval/", "accuracy"); else ("", name):
    the eval split's columns are named like the train split's."""
    low = name.lower()
    for p in EVAL_PREFIXES:
        if low.startswith(p) and len(name) > len(p):
            return "eval/", name[len(p):]
    return "", name


_EVAL_OF = {"reward/mean": "eval/reward_mean", "reward/pass_rate": "eval/pass_rate"}


def refine_plan(plan: Mapping[str, str], frame: pd.DataFrame, canonical,
                fixed=()) -> tuple[dict[str, str], list[str]]:
    """The rename plan of a block (logged column -> canonical name) with the reward found where its name is not
    one the maps know, and value checks; and notes saying what was guessed.

    `canonical(name) -> str` is the reader's name lookup (synonyms.canonical with the user's map). Per split
    (train columns, `eval/` columns): a pass-rate name whose values leave [0, 1] goes back to its own name; with
    no reward/mean, the first REWARD_FALLBACKS name, else a column naming a reward and a mean (`reward/selected_
    mean`), is the reward; with no pass rate, a column named with PASS_WORDS whose values lie in [0, 1] is one.
    Eval columns take eval/reward_mean and eval/pass_rate.
    """
    out = {c: name for c, name in plan.items() if c not in fixed}  # the user's --map is never second-guessed
    notes: list[str] = []
    for prefix in ("", "eval/"):
        cols = [c for c in out if _split(str(c))[0] == prefix]
        sub = {c: (canonical(_split(str(c))[1]) if prefix else out[c]) for c in cols}
        for c, name in list(sub.items()):
            if name == "reward/pass_rate" and frame[c].notna().any() and not in_unit_range(frame[c]):
                sub[c] = str(c)
                notes.append(f"`{c}` is named like a pass rate but holds values outside [0, 1]: kept as logged")
        if "reward/mean" not in set(sub.values()):
            pick = _reward_candidate(sub, patterns=False)
            if pick is not None:
                sub[pick] = "reward/mean"
                notes.append(f"reward: `{pick}` (no column is called reward; --map {pick}=OTHER if it is not)")
        if "reward/pass_rate" not in set(sub.values()):
            pick = _pass_candidate(sub, frame)
            if pick is not None:
                sub[pick] = "reward/pass_rate"
                notes.append(f"pass rate: `{pick}` (named like one, values in [0, 1]; --map {pick}=OTHER if not)")
        if not {"reward/mean", "reward/pass_rate"} & set(sub.values()):
            # a name holding `reward` and `mean` is the last resort: with a pass rate the reward is that rate
            # (TextRun._reward_from_pass), which a custom `reward/<part>_mean` beside it may not be
            pick = _reward_candidate(sub, patterns=True)
            if pick is not None:
                sub[pick] = "reward/mean"
                notes.append(f"reward: `{pick}` (named with reward and mean; --map {pick}=OTHER if it is not)")
        for c, name in sub.items():
            if not prefix:
                out[c] = name
            elif str(c).startswith("eval/"):  # eval rows' metrics, named by GenericRun
                out[c] = _EVAL_OF.get(name, name if name.startswith("eval/") else str(c))
            else:  # a logged `val_*` column: named anew only as the eval reward or pass rate
                if name in _EVAL_OF and plan[c] != _EVAL_OF[name]:
                    notes.append(f"eval: `{c}` read as {_EVAL_OF[name]} (its name puts {name} on the held-out "
                                 f"split; --map {c}=OTHER if it is not)")
                out[c] = _EVAL_OF.get(name, out[c])
    return {c: out.get(c, name) for c, name in plan.items()}, notes


def _reward_candidate(sub: Mapping[str, str], patterns: bool) -> str | None:
    free = {str(c).lower().rsplit("/", 1)[-1]: c for c, name in sub.items() if name == _split(str(c))[1]}
    for name in REWARD_FALLBACKS:
        if name in free:
            return free[name]
    if not patterns:
        return None
    for c, name in sub.items():
        low = str(c).lower()
        if name == _split(str(c))[1] and "reward" in low and ("mean" in low or "avg" in low) and "std" not in low:
            return c
    return None


def _pass_candidate(sub: Mapping[str, str], frame: pd.DataFrame) -> str | None:
    """A column named as a PASS_WORDS word (exact names first, in PASS_WORDS order, then `<what>_<word>`) whose
    values lie in [0, 1]; a `format_*` rate checks the output's form, not its answer, and is never one."""
    free = [c for c, name in sub.items() if name == _split(str(c))[1]]
    lows = {c: str(c).lower().rsplit("/", 1)[-1] for c in free}
    for exact in (True, False):
        for w in PASS_WORDS:
            for c in free:
                low = lows[c]
                hit = (low == w or bool(PASS_AT.match(low))) if exact else \
                    low.endswith("_" + w) and not low.startswith("format")
                if hit and in_unit_range(frame[c]):
                    return c
    return None


# Words in a column name that make a table a training log (with a number beside): the reward, its pass rate or a
# loss. A table with none of them is not taken for one (a config, a list of prompts).
TRAINING_WORDS = ("reward", "loss", "score", "return", "accuracy", "pass_rate", "success_rate", "solve_rate")


def looks_like_training(names) -> bool:
    """True when a column name (or a STEP_NAMES name) says the table logs training."""
    for n in names:
        low = str(n).lower()
        if low in STEP_NAMES or any(w in low for w in TRAINING_WORDS):
            return True
    return False
