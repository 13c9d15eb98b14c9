"""Per-response values in a row, turned into the step statistics our own runs log (collectors/schema.py).

Custom trainers often write what each response got rather than an aggregate:
- a list of the group's rewards, `"rewards": [0.0, 1.0, 0.0, 0.0]` (one group), or a list of lists (a group each);
- a string of 0/1 digits, one per response, `reward_groups=0100` (a key-value log);
- a count `correct=1/4`: k of n responses passed.
A list or digit string becomes reward/mean, reward/std, reward/min, reward/max, groups/zero_std_frac (groups whose
rewards all tie), groups/reward_std_mean and, for 0/1 rewards, reward/pass_rate, groups/all_pass_frac and
groups/all_fail_frac; a count k/n becomes the fraction k/n under its own name (which the synonym table may then
name a pass rate). A logged aggregate beside them wins (TextRun combines two columns of one name, first given
first). Everything here is one pass per column over a block's rows.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pyarrow as pa

# Names of a column whose lists are per-response rewards (not token ids, not texts): what their words say.
REWARD_LIST_WORDS = ("reward", "score", "correct")
_COUNT_RE = re.compile(r"^\s*(\d{1,9})\s*/\s*(\d{1,9})\s*$")
_DIGITS_RE = re.compile(r"^[01]{2,64}$")


def _given(s: pd.Series) -> pd.Series:
    return s[s.notna()]


def count_column(s: pd.Series) -> pd.Series | None:
    """`k/n` texts (0 <= k <= n, n > 0) as the fractions k / n; None unless every given value is one."""
    given = _given(s)
    try:
        if not len(given) or given.map(lambda v: not isinstance(v, str)).any():
            return None
        parts = given.str.extract(_COUNT_RE)
    except (pa.ArrowException, UnicodeError):  # text pyarrow cannot hand to Python (a lone surrogate): no count
        return None
    if parts.isna().any().any():
        return None
    k, n = parts[0].astype(np.float64), parts[1].astype(np.float64)
    if ((n <= 0) | (k > n)).any():
        return None
    return (k / n).reindex(s.index)


def is_reward_name(name: str) -> bool:
    low = str(name).lower()
    return any(w in low for w in REWARD_LIST_WORDS)


def response_lists(s: pd.Series) -> list[list[list[float]] | None] | None:
    """Each row's groups of per-response values, or None when the column holds no such lists.

    A list of numbers is one group; a list of lists, one group per inner list; a digit string of 0s and 1s is one
    group when every given value is one of a single length and at least one starts with 0 (so it cannot be a
    number printed without its leading zero).
    """
    given = _given(s)
    if not len(given):
        return None
    first = given.iloc[0]
    if isinstance(first, (list, tuple, np.ndarray)):
        out = []
        for v in s:
            groups = _groups(v)
            if groups is False:
                return None
            out.append(groups)
        return out
    if isinstance(first, str):
        texts = given.astype(str).str.strip()
        if not texts.str.match(_DIGITS_RE).all() or texts.str.len().nunique() != 1 or not texts.str.startswith("0").any():
            return None
        return [None if not isinstance(v, str) else [[float(c) for c in v.strip()]] for v in s]
    return None


def _groups(v) -> list[list[float]] | None | bool:
    """One cell -> its groups; None for a null cell, False for a cell that holds something else."""
    if v is None or (isinstance(v, float) and np.isnan(v)):
        return None
    if not isinstance(v, (list, tuple, np.ndarray)) or not len(v):
        return False
    items = list(v)
    if all(isinstance(x, (list, tuple, np.ndarray)) for x in items):
        groups = [list(x) for x in items]
    else:
        groups = [items]
    try:
        return [[float(x) for x in g] for g in groups if len(g)]
    except (TypeError, ValueError):
        return False


def group_stats(rows: list[list[list[float]] | None]) -> pd.DataFrame:
    """Per row (one step's groups of rewards) -> the canonical step statistics (see the module docstring).

    Hand-worked: [[0, 0], [1, 0]] -> reward/mean 0.25, zero_std_frac 0.5, all_fail_frac 0.5, all_pass_frac 0,
    pass_rate 0.25, reward_std_mean (0 + 0.5) / 2 = 0.25.
    """
    cols: dict[str, list[float]] = {k: [] for k in (
        "reward/mean", "reward/std", "reward/min", "reward/max", "groups/zero_std_frac", "groups/reward_std_mean",
        "reward/pass_rate", "groups/all_pass_frac", "groups/all_fail_frac")}
    # 0/1 rewards are told by the whole block, not row by row (a row of [0, 1] in a graded reward is no pass rate)
    # and only once both values were seen: a reward that is 0 on every response says nothing of pass and fail
    seen = np.concatenate([np.asarray(g, dtype=np.float64) for groups in rows if groups for g in groups] or [[]])
    binary = bool(len(seen)) and bool(np.isin(seen, (0.0, 1.0)).all()) and {0.0, 1.0} <= set(seen.tolist())
    for groups in rows:
        if not groups:
            for v in cols.values():
                v.append(np.nan)
            continue
        flat = np.concatenate([np.asarray(g, dtype=np.float64) for g in groups])
        stds = np.array([np.std(g) for g in groups])
        cols["reward/mean"].append(float(flat.mean()))
        cols["reward/std"].append(float(flat.std()) if len(flat) > 1 else np.nan)  # one response has no spread
        cols["reward/min"].append(float(flat.min()))
        cols["reward/max"].append(float(flat.max()))
        grouped = max(map(len, groups)) > 1  # groups of one response say nothing of ties within a group
        cols["groups/zero_std_frac"].append(float((stds == 0).mean()) if grouped else np.nan)
        cols["groups/reward_std_mean"].append(float(stds.mean()) if grouped else np.nan)
        cols["reward/pass_rate"].append(float(flat.mean()) if binary else np.nan)
        both = binary and grouped
        cols["groups/all_pass_frac"].append(float(np.mean([min(g) == 1 for g in groups])) if both else np.nan)
        cols["groups/all_fail_frac"].append(float(np.mean([max(g) == 0 for g in groups])) if both else np.nan)
    return pd.DataFrame(cols)


def expand(frame: pd.DataFrame) -> tuple[pd.DataFrame, list[str]]:
    """A block of logged columns with count texts as fractions and per-response reward lists replaced by the
    step statistics (appended after the logged columns, so a logged aggregate of one name wins); and notes."""
    notes: list[str] = []
    out = frame
    for c in list(frame.columns):
        s = frame[c]
        if s.dtype.kind in "fiub":
            continue
        if (frac := count_column(s)) is not None:
            out = out.assign(**{str(c): frac})
            notes.append(f"`{c}` holds counts k/n: read as the fraction k/n")
            continue
        if not is_reward_name(str(c)) or (rows := response_lists(s)) is None:
            continue
        stats = group_stats(rows)
        stats.index = frame.index
        sizes = sorted({len(g) for groups in rows if groups for g in groups})
        stats = stats.dropna(axis=1, how="all")
        stats = stats[[k for k in stats.columns if k not in out.columns]]  # a logged aggregate of the name wins
        out = pd.concat([out.drop(columns=[c]), stats], axis=1)
        notes.append(f"`{c}` holds each response's reward (groups of {', '.join(map(str, sizes[:3]))}): read as the "
                     "step's reward, its spread and the tied, all-pass and all-fail groups")
    return out, notes
