"""verifier_suspect: responses with reward 0 that look right by a looser match (needs samples).

Two looser matches, both independent of the task's answer key (samples do not carry it):
1. consistency: the same answer to the same prompt, after normalising whitespace, case and trailing
   punctuation, scored > 0 in one response and 0 in another; a correct verifier scores equal answers equally.
2. arithmetic: the prompt ends in "a op b =" and the response's last number is the result.
"""

from __future__ import annotations

import re
from itertools import compress

import numpy as np
import pandas as pd

from dashboard.diagnosis import checks as C
from dashboard.diagnosis.build import evidence, finding, fmt
from dashboard.diagnosis.context import RunData
from dashboard.diagnosis.findings import NotJudged
from dashboard.diagnosis.registry import RECHECK_LONG, rule

LAST_STEPS = 50  # the latest steps with samples are enough evidence and keep a long run cheap
MIN_EXAMPLES = 5
SUSPECT_WARN, SUSPECT_CRIT = 0.1, 0.3  # share of reward-0 responses that look right
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
_ARITH = re.compile(r"(-?\d+)\s*([+\-*x×])\s*(-?\d+)\s*=\s*$")
SAME_ANSWER = "the same answer to this prompt scored > 0 elsewhere"
_OPS = {"+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b, "x": lambda a, b: a * b,
        "×": lambda a, b: a * b}


def normalise(text: str) -> str:
    """Whitespace runs to one space (split() and re's \\s agree on every code point), lower case, no trailing
    punctuation."""
    return " ".join(str(text).split()).lower().rstrip(".!。")


def last_number(text: str) -> str | None:
    hits = _NUMBER.findall(str(text))
    return hits[-1] if hits else None


def arithmetic_answer(prompt: str) -> str | None:
    m = _ARITH.search(str(prompt))
    if m is None:
        return None
    a, op, b = int(m.group(1)), m.group(2), int(m.group(3))
    return str(_OPS[op](a, b))


def suspects(s: pd.DataFrame) -> pd.DataFrame:
    """Reward-0 rows that look right, with a `why` column. s: samples with prompt, completion, reward."""
    _, reward, _ = _reward_columns(s["reward"].to_numpy())
    prompts = s["prompt"].to_numpy(dtype=object)
    has_prompt = np.flatnonzero(pd.notna(prompts))  # a response to no prompt matches neither way
    rows, why = suspect_rows(prompts[has_prompt], s["completion"].to_numpy(dtype=object)[has_prompt],
                             reward[has_prompt])
    out = s.iloc[has_prompt[rows]]
    return out.assign(why=pd.Series(why, index=out.index, dtype="str"))


def suspect_rows(prompts: np.ndarray, texts: np.ndarray, reward: np.ndarray) -> tuple[list[int], list[str]]:
    """(positions of the reward-0 responses that look right, in order; why each does).
    prompts: (N,) object, none missing; texts: (N,) object; reward: (N,) float64, NaN where there is none.

    Plain Python lists, sets and dicts, not pandas nor numpy per row: a check of the live guard runs this on every
    recent sample, and a Series lookup per row cost as much as the next three rules together."""
    paid_rows = (reward > 0).tolist()
    prompts = prompts.tolist()
    texts = [t if isinstance(t, str) else str(t) for t in texts.tolist()]
    norm = _normalised(texts)
    paid = set(compress(zip(prompts, norm), paid_rows))
    answers: dict = {}  # prompt -> its arithmetic's result; text -> its last number (both repeat within a group)
    numbers: dict = {}
    keep, why = [], []
    for i in np.flatnonzero(reward == 0).tolist():
        p, n = prompts[i], norm[i]
        if n and (p, n) in paid:
            keep.append(i)
            why.append(SAME_ANSWER)
            continue
        if p not in answers:
            answers[p] = arithmetic_answer(p)
        if (want := answers[p]) is None:
            continue
        if (t := texts[i]) not in numbers:
            numbers[t] = last_number(t)
        if numbers[t] == want:
            keep.append(i)
            why.append(f"the prompt's arithmetic gives {want}, which the response answers")
    return keep, why


def _reward_columns(raw: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(the rewards as stored, as float64 with NaN where not a number, == 0 as a frame compares them); (N,) each.
    raw: (N,) the reward column as stored.

    A numeric column is cast once: pd.to_numeric and a Series comparison cost the guard more than the cast."""
    if raw.dtype.kind in "biuf":
        reward = raw.astype(np.float64, copy=False)
        return raw, reward, reward == 0
    r = pd.Series(raw, dtype=object)  # object, as stored: pandas would read a column of strings as str
    reward = pd.to_numeric(r, errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan)
    return raw, reward, (r == 0).to_numpy(dtype=bool, na_value=False)


def _normalised(texts: list[str]) -> list[str]:
    """normalise() of each text, each distinct text once (a group's responses often repeat)."""
    seen = {t: normalise(t) for t in set(texts)}
    return [seen[t] for t in texts]


def _last_steps(step: np.ndarray, last: int) -> tuple[np.ndarray, np.ndarray]:
    """(the `last` largest distinct steps that are there, sorted; which rows are at one of them or have no step).
    step: (N,) -> (K,), (N,) bool. A row without a step always counts; it never makes a step of the range."""
    missing = pd.isna(step)
    steps = np.sort(pd.unique(step[~missing] if missing.any() else step))
    if len(steps) <= last:
        return steps, np.ones(len(step), dtype=bool)
    steps = steps[-last:]
    return steps, np.isin(step, steps) | missing


def _distinct(prompts: np.ndarray, texts: np.ndarray, k: int) -> list[int]:
    """Positions of the first `k` rows whose (prompt, text) pair has not come before, compared as text (a chat
    message list is a text like any other here). (N,) each -> <= k ints."""
    seen, out = set(), []
    for j, pair in enumerate(zip(map(str, prompts.tolist()), map(str, texts.tolist()), strict=True)):
        if pair not in seen:
            seen.add(pair)
            out.append(j)
            if len(out) == k:
                break
    return out


def _examples(cols: dict[str, np.ndarray], rows: np.ndarray, why: list[str]) -> list[dict]:
    """One dict per row: each column's value there (texts cut to 200 characters, numpy numbers as Python's) and
    why. cols: name -> (N,) values as stored; rows: (K,) positions."""
    out = []
    for j, i in enumerate(rows.tolist()):
        ex = {c: _plain(x[i]) for c, x in cols.items()}
        ex["why"] = _plain(why[j])
        out.append(ex)
    return out


def _plain(v):
    """A value as DataFrame.to_dict("records") gives it (numpy scalars as Python's), a text cut to 200 characters."""
    if isinstance(v, str):
        return str(v)[:200]
    if isinstance(v, np.integer):
        return int(v)
    if isinstance(v, np.floating):
        return float(v)
    return bool(v) if isinstance(v, np.bool_) else v


@rule("verifier_suspect", "reward-0 responses that look correct: check the verifier", "reward_flat", recheck_rows=RECHECK_LONG)
def verifier_suspect(d: RunData):
    """Reads each column once as an array and the examples from the arrays, without filtering the frame: the
    live guard judges this right after a training step, where every pandas call costs several times its warm
    price (tests/diagnosis/test_rules_samples.py compares it with the frame reading)."""
    s = d.sample_columns("step", "group", "prompt", "completion", "reward")
    if s is None or not all(c in s for c in ("prompt", "completion", "reward", "step")):
        return NotJudged("verifier_suspect", "the run has no sample texts (prompt, completion, reward)")
    texts = s["completion"].astype(object, copy=False)
    has_text = ~pd.isna(texts)
    if not has_text.any():
        return NotJudged("verifier_suspect", "the run has no sample texts (prompt, completion, reward)")
    step, prompts = s["step"], s["prompt"].astype(object, copy=False)
    steps, recent = _last_steps(step, LAST_STEPS)
    rows = np.nonzero(recent & has_text & ~pd.isna(prompts))[0]
    raw, reward, is_zero = _reward_columns(s["reward"])
    zero = int(np.count_nonzero(is_zero[rows]))
    if zero == 0:
        return []
    keep, why = suspect_rows(prompts[rows], texts[rows], reward[rows])
    share = len(keep) / zero
    if len(keep) < MIN_EXAMPLES or share < SUSPECT_WARN:
        return []
    severity = "critical" if share >= SUSPECT_CRIT else "warning"
    where = f"of the last {len(steps)} steps" if len(steps) else "(none carries a step)"
    ev = [evidence("samples", share, SUSPECT_WARN, f"over {zero} reward-0 responses {where}",
                   f"{len(keep)} of {zero} reward-0 responses ({fmt(100 * share)}%) look correct by a looser match")]
    cols = {"step": step, "group": s.get("group"), "prompt": prompts,
            "completion": texts, "reward": raw}
    # one example per (prompt, response): a group answers the same text several times, and five copies of one
    # example say less than five different ones
    pick = _distinct(prompts[rows[keep]], texts[rows[keep]], 5)
    examples = _examples({c: x for c, x in cols.items() if x is not None}, rows[np.asarray(keep)[pick]],
                         [why[j] for j in pick])
    rng = (int(steps[0]), int(steps[-1])) if len(steps) else None  # None: no response carries a step
    return [finding("verifier_suspect", severity, "Reward-0 responses look correct: the verifier may reject right "
                    "answers", rng, ev, (C.VERIFIER,), metrics=("reward/mean",),
                    examples=examples)]
