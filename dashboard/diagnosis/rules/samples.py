"""verifier_suspect: responses with reward 0 that look right by a looser match (needs samples).

Two looser matches, both independent of the task's answer key (samples do not carry it):
1. consistency: the same answer to the same prompt, after normalising whitespace, case and trailing
   punctuation, scored > 0 in one response and 0 in another; a correct verifier scores equal answers equally.
2. arithmetic: the prompt ends in "a op b =" and the response's last number is the result.
"""

from __future__ import annotations

import re

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
    return re.sub(r"\s+", " ", str(text)).strip().lower().rstrip(".!。")


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
    """Reward-0 rows that look right, with a `why` column. s: samples with prompt, completion, reward.

    Plain Python sets and dicts over the columns' arrays, not pandas per row: a check of the live guard runs this
    on every recent sample, and a Series lookup per row cost as much as the next three rules together."""
    prompts, texts = s["prompt"].to_numpy(dtype=object), s["completion"].to_numpy(dtype=object)
    reward = pd.to_numeric(s["reward"], errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan)
    norm = _normalised(texts)
    paid_rows = np.nonzero((reward > 0) & pd.notna(prompts))[0]
    paid = {(prompts[i], norm[i]) for i in paid_rows}
    answers: dict = {}  # prompt -> its arithmetic's result; text -> its last number (both repeat within a group)
    numbers: dict = {}
    keep, why = [], []
    for i in np.nonzero(reward == 0)[0]:
        p, n = prompts[i], norm[i]
        if n and (p, n) in paid:
            keep.append(i)
            why.append(SAME_ANSWER)
            continue
        if p not in answers:
            answers[p] = arithmetic_answer(p)
        if (want := answers[p]) is None:
            continue
        if (t := texts[i] if isinstance(texts[i], str) else str(texts[i])) not in numbers:
            numbers[t] = last_number(t)
        if numbers[t] == want:
            keep.append(i)
            why.append(f"the prompt's arithmetic gives {want}, which the response answers")
    out = s.iloc[keep]
    return out.assign(why=pd.Series(why, index=out.index, dtype="str"))


def _normalised(texts: np.ndarray) -> list[str]:
    """normalise() of each text, each distinct text once (a group's responses often repeat)."""
    seen: dict[str, str] = {}
    out = []
    for t in texts:
        t = t if isinstance(t, str) else str(t)
        out.append(seen[t] if t in seen else seen.setdefault(t, normalise(t)))
    return out


@rule("verifier_suspect", "reward-0 responses that look correct: check the verifier", "reward_flat", recheck_rows=RECHECK_LONG)
def verifier_suspect(d: RunData):
    s = d.samples()
    if s is None or not {"prompt", "completion", "reward", "step"} <= set(s.columns) or s["completion"].isna().all():
        return NotJudged("verifier_suspect", "the run has no sample texts (prompt, completion, reward)")
    steps = np.sort(s["step"].unique())[-LAST_STEPS:]
    s = s[s["step"].isin(steps) & s["completion"].notna() & s["prompt"].notna()]
    zero = int((s["reward"] == 0).sum())
    if zero == 0:
        return []
    bad = suspects(s)
    share = len(bad) / zero
    if len(bad) < MIN_EXAMPLES or share < SUSPECT_WARN:
        return []
    severity = "critical" if share >= SUSPECT_CRIT else "warning"
    ev = [evidence("samples", share, SUSPECT_WARN, f"over {zero} reward-0 responses of the last {len(steps)} steps",
                   f"{len(bad)} of {zero} reward-0 responses ({fmt(100 * share)}%) look correct by a looser match")]
    cols = [c for c in ("step", "group", "prompt", "completion", "reward", "why") if c in bad]
    examples = [{k: (str(v)[:200] if isinstance(v, str) else v) for k, v in row.items()}
                for row in bad[cols].head(5).to_dict("records")]
    examples = [{k: (int(v) if isinstance(v, (np.integer,)) else float(v) if isinstance(v, np.floating) else v)
                 for k, v in e.items()} for e in examples]
    return [finding("verifier_suspect", severity, "Reward-0 responses look correct: the verifier may reject right "
                    "answers", (int(steps[0]), int(steps[-1])), ev, (C.VERIFIER,), metrics=("reward/mean",),
                    examples=examples)]

