"""One synonym table for the metric names of custom trainers, used by every text reader (rows, key-value
logs, console logs), and the user's own `--map theirs=ours`.

A column's canonical name is looked up, first match wins:
  1. the user's map (`--map`, or `GRPOSCOPE_MAP="a=b,c=d"` in the environment, which grpo-dash passes on),
     on the name as logged;
  2. the name itself when it is canonical (`reward/mean`);
  3. the frameworks' maps (`keymaps.FAMILIES`: TRL, verl, OpenRLHF, NeMo-RL, slime, AReaL, prime-rl,
     ms-swift; logger prefixes stripped);
  4. `SYNONYMS` below, on the normalised name (lower case, runs of spaces and dashes as one `_`), so that
     `Avg Response Len`, `avg-response-len` and `avg_response_len` are one name;
  5. else the name as logged, an extra column.
Counts become fractions through `RATIOS` (`truncated_count / rollout_count`). Every entry names what the
logged quantity must mean to be mapped; where a common name is ambiguous it is left out on purpose.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from functools import lru_cache

import numpy as np
import pandas as pd

from collectors.readers.keymap import canonical_name, parse_overrides
from collectors.schema import METRICS

MAP_ENV = "GRPOSCOPE_MAP"

# normalised custom name -> canonical name. Read from custom GRPO trainers (MiniMind, countdown-style
# single-GPU trainers, OpenRLHF/TRL-like scripts): what each line assumes is said where it is not obvious.
SYNONYMS: dict[str, str] = {
    # the raw reward averaged over the step's responses
    "reward": "reward/mean",
    "mean_reward": "reward/mean",
    "reward_mean": "reward/mean",
    "avg_reward": "reward/mean",
    "rewards/mean": "reward/mean",
    "reward_std": "reward/std",
    "std_reward": "reward/std",
    "reward_min": "reward/min",
    "reward_max": "reward/max",
    "min_reward": "reward/min",
    "max_reward": "reward/max",
    # the verifier's pass rate over responses (a custom trainer's `accuracy` is the fraction judged correct)
    "accuracy": "reward/pass_rate",
    "acc": "reward/pass_rate",
    "pass_rate": "reward/pass_rate",
    # the fraction of responses the verifier judged correct under other names (value-checked in [0, 1] by
    # text.guess.refine_plan: one outside it is kept as logged)
    "success_rate": "reward/pass_rate",
    "solve_rate": "reward/pass_rate",
    "answer_accuracy": "reward/pass_rate",  # CS336-style trainers: the answer reward's 0/1 mean
    # groups whose rewards all tie
    "frac_reward_zero_std": "groups/zero_std_frac",
    "zero_std_group_ratio": "groups/zero_std_frac",
    "zero_std_frac": "groups/zero_std_frac",
    "zero_std_ratio": "groups/zero_std_frac",
    "frac_zero_std": "groups/zero_std_frac",
    # groups where every response passed / none did (custom trainers' `all_correct_group_ratio` beside
    # `mixed_group_ratio`: fractions of the step's groups)
    "all_correct_group_ratio": "groups/all_pass_frac",
    "all_wrong_group_ratio": "groups/all_fail_frac",
    "all_pass_frac": "groups/all_pass_frac",
    "all_fail_frac": "groups/all_fail_frac",
    # mean over groups of the within-group reward std
    "group_reward_std": "groups/reward_std_mean",
    # completion length in tokens
    "completion_length": "completions/len_mean",  # TRL before completions/mean_length
    "avg_gen_tokens": "completions/len_mean",
    "avg_response_len": "completions/len_mean",
    "avg_response_length": "completions/len_mean",
    "mean_response_length": "completions/len_mean",
    "response_length": "completions/len_mean",
    "mean_length": "completions/len_mean",
    "avg_response_token_length": "completions/len_mean",  # CS336-style trainers, in tokens
    "max_gen_tokens": "completions/len_max",
    "max_response_length": "completions/len_max",
    "truncated_frac": "completions/truncated_frac",
    "truncation_rate": "completions/truncated_frac",
    # policy statistics; `approx_kl` in a custom trainer is its estimate of the KL to the reference
    "entropy": "policy/entropy",
    "token_entropy": "policy/entropy",  # CS336-style trainers: mean per-token entropy of the responses
    "kl": "policy/kl_ref",
    "kl_ref": "policy/kl_ref",
    "ref_kl": "policy/kl_ref",
    "approx_kl": "policy/kl_ref",
    "kl_div": "policy/kl_ref",
    "clipfrac": "policy/clipfrac",
    "clip_frac": "policy/clipfrac",
    "clip_fraction": "policy/clipfrac",
    "adv_mean": "adv/mean",
    "adv_std": "adv/std",
    "advantage_mean": "adv/mean",
    "advantage_std": "adv/std",
    "mean_advantage": "adv/mean",
    "std_advantage": "adv/std",
    # the same three under a `advantage/` namespace (RDAN-GRPO's tracker on ROLL: the mean and population std of
    # the responses' scalar advantages, and the share with |A| <= 1e-8, i.e. adv/zero_frac's own test; it is not
    # groups/zero_std_frac: invalid responses are zeroed too, and a tied group of all-passing responses keeps a
    # process-quality advantage, so the two differ by what the trainer adds to the group-normalised reward)
    "advantage/mean": "adv/mean",
    "advantage/std": "adv/std",
    "advantage/zero_rate": "adv/zero_frac",
    # losses and the optimizer
    "loss": "loss/total",
    "total_loss": "loss/total",
    "training_loss": "loss/total",  # transformers' notebook table heads the Trainer's `loss` "Training Loss"
    "actor_loss": "loss/policy",
    "policy_loss": "loss/policy",
    "pg_loss": "loss/policy",
    # not kl_loss: with or without its coefficient depends on the trainer (verl's actor/kl_loss is without)
    "learning_rate": "optim/lr",
    "lr": "optim/lr",
    "grad_norm": "optim/grad_norm",
    "step_time": "perf/step_s",
    "eval_accuracy": "eval/pass_rate",
    "eval_reward": "eval/reward_mean",
}

# (numerator, denominator, canonical): two counts logged per step whose ratio is a canonical fraction.
RATIOS: list[tuple[str, str, str]] = [
    ("truncated_count", "rollout_count", "completions/truncated_frac"),
    ("num_truncated", "num_completions", "completions/truncated_frac"),
    ("zero_std_groups", "num_groups", "groups/zero_std_frac"),
]

_SEP_RE = re.compile(r"[\s\-]+")
_user_map: dict[str, str] = {}


def normalise(key: str) -> str:
    """`Avg Response Len` -> `avg_response_len`: the form SYNONYMS is keyed on."""
    return _SEP_RE.sub("_", key.strip()).lower()


# -- the --map option, one syntax for grpo-import and grpo-diagnose (and grpo-dash's: one pair per --map) ----
MAP_METAVAR = "THEIRS=OURS"
MAP_HELP = ("rename a logged metric (text logs) to a canonical name, e.g. --map acc=reward/pass_rate; "
            "COLUMN=step names the step, COLUMN=kind the column telling eval rows apart; one pair per --map, "
            "repeated for several")


def add_map_option(parser) -> None:
    """`--map THEIRS=OURS`, repeatable, on an argparse parser; read it with `parse_map`."""
    parser.add_argument("--map", action="append", default=[], metavar=MAP_METAVAR, help=MAP_HELP)


def parse_args_with_map(parser, argv: list[str] | None):
    """parser.parse_args(argv), except that a word it does not take which looks like a --map pair (`--map a=b
    c=d` after the positional arguments) exits 2 with parse_map's line on how --map takes several."""
    args, extra = parser.parse_known_args(argv)
    if extra:
        try:
            parse_map([], extra)
        except ValueError as e:
            parser.exit(2, f"{parser.prog}: {e}\n")
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    return args


def parse_map(pairs: Iterable[str], others: Iterable[str] = ()) -> dict[str, str]:
    """The pairs of repeated `--map THEIRS=OURS` options -> {theirs: ours}; ValueError in one line otherwise.

    `others`: the command's other words (its positional arguments). One that looks like a pair and names no
    file was meant for --map (`--map a=b c=d`, as grpo-import once took it): the error says to repeat --map
    rather than that no reader opens `c=d`.
    """
    import os

    out: dict[str, str] = {}
    for pair in pairs:
        theirs, sep, ours = pair.partition("=")
        if "," in pair and sep:
            raise ValueError(f"--map {pair!r}: one {MAP_METAVAR} per --map; repeat --map for several")
        if not sep or not theirs.strip() or not ours.strip():
            raise ValueError(f"--map {pair!r}: expected {MAP_METAVAR} (e.g. --map acc=reward/pass_rate)")
        out[theirs] = ours
    strays = [w for w in others if "=" in w and "://" not in w and not os.path.exists(w)]
    if strays:
        raise ValueError(f"{strays[0]!r} looks like a --map pair: one {MAP_METAVAR} per --map, repeated for several "
                         f"(--map {strays[0]})")
    return out


def set_user_map(mapping: Mapping[str, str]) -> None:
    """The `--map` of a CLI, for every text reader opened in this process."""
    _user_map.clear()
    _user_map.update(mapping)


@lru_cache(maxsize=8)
def _env_map(text: str) -> dict[str, str]:
    return parse_overrides(p for p in text.split(",") if p.strip())


def user_map() -> dict[str, str]:
    """The user's `theirs=ours` renames: GRPOSCOPE_MAP from the environment, then set_user_map (wins)."""
    env = os.environ.get(MAP_ENV, "")
    try:
        base = _env_map(env) if env else {}
    except ValueError:
        base = {}  # a malformed variable must not stop every reader; the CLIs check --map themselves
    return {**base, **_user_map}


@lru_cache(maxsize=1 << 14)
def _standard_name(key: str) -> str:
    name = canonical_name(key)
    if name != key:
        return name
    return SYNONYMS.get(normalise(key), key)


def canonical(key: str, mapping: Mapping[str, str] | None = None) -> str:
    """Our name for one logged column name (see the module docstring for the order)."""
    mapping = user_map() if mapping is None else mapping
    if key in mapping:
        return mapping[key]
    if key in METRICS:
        return key
    return _standard_name(key)


def rename_plan(columns: Iterable[str], mapping: Mapping[str, str] | None = None) -> dict[str, str]:
    """{logged column: canonical name} for a frame's columns; one lookup per column, not per value."""
    mapping = user_map() if mapping is None else mapping
    return {c: canonical(c, mapping) for c in columns}


def to_canonical(frame: pd.DataFrame, mapping: Mapping[str, str] | None = None,
                 plan: Mapping[str, str] | None = None) -> pd.DataFrame:
    """A frame of logged columns (numbers) -> the same rows under canonical names.

    Columns landing on one name are combined, the first one (in column order) winning where it is not
    null; RATIOS turn count pairs into fractions (the counts stay as extra columns). `plan`: the renames to
    use (a reader's rename_plan refined by its guesses), else rename_plan's.
    """
    plan = rename_plan(frame.columns, mapping) if plan is None else dict(plan)
    norms = {normalise(c) for c in plan}
    if len(set(plan.values())) == len(plan) and not any(n in norms and d in norms for n, d, _ in RATIOS):
        return frame.rename(columns=plan)  # no two columns share a name, no counts to divide: one rename
    out: dict[str, pd.Series] = {}
    for col, name in plan.items():
        out[name] = frame[col] if name not in out else out[name].combine_first(frame[col])
    for num, den, name in RATIOS:
        if name in out:
            continue
        n, d = _column(frame, plan, num), _column(frame, plan, den)
        if n is not None and d is not None:
            with np.errstate(divide="ignore", invalid="ignore"):
                out[name] = n / d.where(d != 0)
    return pd.DataFrame(out, index=frame.index, copy=False)


def _column(frame: pd.DataFrame, plan: Mapping[str, str], norm_name: str) -> pd.Series | None:
    for col in plan:
        if normalise(col) == norm_name:
            return frame[col]
    return None
