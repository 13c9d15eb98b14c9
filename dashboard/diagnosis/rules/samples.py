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
from dashboard.diagnosis.registry import rule

LAST_STEPS = 50  # the latest steps with samples are enough evidence and keep a long run cheap
MIN_EXAMPLES = 5
SUSPECT_WARN, SUSPECT_CRIT = 0.1, 0.3  # share of reward-0 responses that look right
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
_ARITH = re.compile(r"(-?\d+)\s*([+\-*x×])\s*(-?\d+)\s*=\s*$")
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
    """Reward-0 rows that look right, with a `why` column. s: samples with prompt, completion, reward."""
    s = s.assign(norm=s["completion"].map(normalise))
    paid = s[s["reward"] > 0].groupby("prompt")["norm"].agg(set)
    zero = s[s["reward"] == 0]
    why = []
    for p, c, n in zip(zero["prompt"], zero["completion"], zero["norm"]):
        if n and n in paid.get(p, ()):
            why.append("the same answer to this prompt scored > 0 elsewhere")
            continue
        want = arithmetic_answer(p)
        if want is not None and last_number(c) == want:
            why.append(f"the prompt's arithmetic gives {want}, which the response answers")
            continue
        why.append("")
    zero = zero.assign(why=why)
    return zero[zero["why"] != ""]


@rule("verifier_suspect", "reward-0 responses that look correct: check the verifier", "reward_flat")
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
