"""The sample browser's filters: a samples frame in, the responses to show out. No streamlit here.

Group filters keep whole prompt groups (a zero-variance group is only visible as a group); response
filters pick single responses and keep their group's context columns. Links from the diagnosis name a
filter by its key (`?filter=all_fail&step=120`); aliases accept the spellings a rule may use.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd

GROUP_KEYS = ("step", "group")
DEFAULT_LIMIT = 20  # responses for the "top N" filters


@dataclass(frozen=True)
class SampleFilter:
    key: str
    label: str
    select: Callable[[pd.DataFrame, int], pd.DataFrame]
    ranking: bool = False  # a "top N" list: shown in its own order, not grouped


def with_group_stats(samples: pd.DataFrame) -> pd.DataFrame:
    """Add group_reward_std, group_pass_frac and group_size to every row (one groupby, not one per group)."""
    s = samples.copy()
    if not len(s):
        return s.assign(group_reward_std=pd.Series(dtype=float), group_pass_frac=pd.Series(dtype=float),
                        group_size=pd.Series(dtype="int64"))
    g = s.groupby(list(GROUP_KEYS), sort=False)
    # the sample std (n - 1), as the advantage beside it divides by (grpo_core's default, TRL's torch.std): the
    # population std printed 0.433 beside advantages worked with 0.5; a group of one response has no spread: 0
    s["group_reward_std"] = g["reward"].transform(lambda r: float(np.nanstd(r.to_numpy(dtype=float), ddof=1))
                                                  if r.notna().sum() > 1 else 0.0)
    s["group_size"] = g["reward"].transform("size")
    if "passed" in s and s["passed"].notna().any():
        s["group_pass_frac"] = g["passed"].transform(lambda p: float(p.fillna(False).astype(bool).mean()))
    else:
        s["group_pass_frac"] = np.nan
    return s


def _groups_where(mask_col: Callable[[pd.DataFrame], pd.Series]):
    def select(s: pd.DataFrame, limit: int) -> pd.DataFrame:
        return s[mask_col(s).to_numpy(dtype=bool)]
    return select


def _top(column: str, ascending: bool):
    def select(s: pd.DataFrame, limit: int) -> pd.DataFrame:
        if column not in s or not s[column].notna().any():
            return s.iloc[0:0]
        return s.sort_values(column, ascending=ascending, kind="stable", na_position="last").head(limit)
    return select


def _truncated(s: pd.DataFrame, limit: int) -> pd.DataFrame:
    if "truncated" not in s:
        return s.iloc[0:0]
    return s[s["truncated"].fillna(False).astype(bool).to_numpy()]


def _zero_reward(s: pd.DataFrame, limit: int) -> pd.DataFrame:
    return s[(s["reward"] == 0).to_numpy(dtype=bool)]


FILTERS: tuple[SampleFilter, ...] = (
    SampleFilter("all", "all groups", lambda s, n: s),
    SampleFilter("zero_variance", "zero-variance groups (all rewards equal)",
                 _groups_where(lambda s: s["group_reward_std"] < 1e-12)),
    SampleFilter("all_fail", "all-fail groups", _groups_where(lambda s: s["group_pass_frac"] == 0)),
    SampleFilter("all_pass", "all-pass groups", _groups_where(lambda s: s["group_pass_frac"] == 1)),
    SampleFilter("longest", "longest responses", _top("num_tokens", ascending=False), ranking=True),
    SampleFilter("truncated", "truncated responses", _truncated),
    SampleFilter("highest_reward", "highest reward", _top("reward", ascending=False), ranking=True),
    SampleFilter("lowest_reward", "lowest reward", _top("reward", ascending=True), ranking=True),
    SampleFilter("zero_reward", "reward exactly 0", _zero_reward),
)
FILTER_KEYS = {f.key: f for f in FILTERS}
GROUP_FILTERS = ("all", "zero_variance", "all_fail", "all_pass")
ALIASES = {"zero_var": "zero_variance", "zero_std": "zero_variance", "zero_variance_groups": "zero_variance",
           "allfail": "all_fail", "all_failed": "all_fail", "allpass": "all_pass", "all_passed": "all_pass",
           "long": "longest", "length": "longest", "high_reward": "highest_reward", "top_reward": "highest_reward",
           "low_reward": "lowest_reward", "reward_zero": "zero_reward", "reward_0": "zero_reward"}


def filter_key(name: str | None) -> str:
    """The canonical filter key for a name from a URL or a finding's link; unknown names give "all"."""
    if not name:
        return "all"
    name = str(name).strip().lower()
    name = ALIASES.get(name, name)
    return name if name in FILTER_KEYS else "all"


def apply_filter(samples: pd.DataFrame, key: str, limit: int = DEFAULT_LIMIT) -> pd.DataFrame:
    """Rows to show for filter `key`, in display order (groups together, then by sample)."""
    s = with_group_stats(samples)
    if not len(s):
        return s
    flt = FILTER_KEYS[filter_key(key)]
    picked = flt.select(s, limit)
    if flt.ranking:
        return picked.reset_index(drop=True)
    keys = [c for c in ("step", "group", "sample") if c in picked]
    return picked.sort_values(keys, kind="stable").reset_index(drop=True)


def is_group_filter(key: str) -> bool:
    """Whether a filter keeps whole prompt groups (then "Top N" counts groups), not single responses."""
    return filter_key(key) in GROUP_FILTERS


def first_n(rows: pd.DataFrame, key: str, limit: int) -> pd.DataFrame:
    """The rows of the first `limit` groups for a group filter, the first `limit` responses otherwise: "Top N"
    applies to every filter, so "all groups" of a large step is not every response of it."""
    if not len(rows):
        return rows
    if not is_group_filter(key):
        return rows.head(limit)
    groups = rows[list(GROUP_KEYS)].drop_duplicates().head(limit)
    return rows.merge(groups, on=list(GROUP_KEYS), how="inner", sort=False)


COMPACT_CHARS = 120  # a group whose every response is one line at most this long is listed one line a response


def _width(text: str) -> int:
    """Columns a text takes in a monospaced block: a CJK character takes two."""
    return sum(2 if "\u2e80" <= ch <= "\ufaff" or "\uff00" <= ch <= "\uffef" else 1 for ch in text)


def _cell(text: object, width: int, right: bool = False) -> str:
    text = str(text)
    pad = " " * max(0, width - _width(text))
    return pad + text if right else text + pad


def compact_lines(group: pd.DataFrame, words: tuple[str, ...] = ("pass", "fail", "?", "reward", "passed", "advantage",
                                                                  "tokens", "completion", "(no text logged)"),
                  ) -> list[str] | None:
    """A group's responses as aligned lines under a header (sample, reward, pass, advantage, tokens, text), or
    None when a response is long or spans lines (then each is shown whole). `words`: pass, fail, unknown, the
    column names and the mark of a response without text, in the page's language. Model text stays plain text: these lines go to st.code, never
    to Markdown."""
    texts = [None if _missing(t) else str(t) for t in group.get("completion", pd.Series([None] * len(group)))]
    if any(t is not None and ("\n" in t or len(t) > COMPACT_CHARS) for t in texts):
        return None
    yes, no, unknown, *names = words
    no_text = names[5] if len(names) > 5 else "(no text logged)"
    widths = (4, 9, 6, 10, 7)
    out = [" ".join(_cell(n, w, right=i in (1, 3, 4)) for i, (n, w) in enumerate(zip(["#", *names[:4]], widths)))
           + f"   │ {names[4]}"]
    for (_, r), text in zip(group.iterrows(), texts, strict=True):
        passed = r.get("passed")
        mark = unknown if _missing(passed) else yes if passed else no
        adv = r.get("advantage", float("nan"))
        tokens = r.get("num_tokens")
        cells = [f"#{r['sample']}", f"{r['reward']:.4g}", mark, "?" if not np.isfinite(float(adv)) else f"{adv:+.3g}",
                 "?" if _missing(tokens) else int(tokens)]
        trunc = "✂" if r.get("truncated") in (True, 1) else " "
        out.append(" ".join(_cell(c, w, right=i in (1, 3, 4)) for i, (c, w) in enumerate(zip(cells, widths)))
                   + f" {trunc} │ {no_text if text is None else text}")
    return out


def _missing(value) -> bool:
    """None, NaN or pd.NA: the ways a null shows up in a row of a frame read from Parquet."""
    return value is None or (pd.api.types.is_scalar(value) and bool(pd.isna(value)))


def steps_with_samples(samples: pd.DataFrame) -> list[int]:
    return sorted(int(x) for x in samples["step"].unique()) if len(samples) else []


def group_summary(rows: pd.DataFrame) -> pd.DataFrame:
    """One line per group shown: step, group, prompt id, size, reward mean/std, pass fraction."""
    if not len(rows):
        return pd.DataFrame(columns=["step", "group", "prompt_id", "responses", "reward_mean", "reward_std",
                                     "pass_frac"])
    g = rows.groupby(list(GROUP_KEYS), sort=False)
    out = g.agg(responses=("reward", "size"), reward_mean=("reward", "mean"),
                reward_std=("group_reward_std", "first"), pass_frac=("group_pass_frac", "first")).reset_index()
    if "prompt_id" in rows:
        out.insert(2, "prompt_id", g["prompt_id"].first().to_numpy())
    return out
