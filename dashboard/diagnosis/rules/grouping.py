"""The same prompt under different group ids (issue 37, cause 9; PeterGriffinJin/Search-R1#88): a group baseline
compares a response with the others of its group id, so a prompt whose responses are spread over several ids
(an id drawn per repeat instead of per prompt) gets groups of one: advantage 0, or a baseline from other prompts.
Seen in the samples: on a step, prompts whose responses carry more than one group id while the groups hold a single
response each. A duplicate prompt in a batch spans two groups of full size and is no fault.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from dashboard.diagnosis import checks as C
from dashboard.diagnosis.build import evidence, finding, fmt
from dashboard.diagnosis.context import RunData
from dashboard.diagnosis.findings import NotJudged
from dashboard.diagnosis.registry import RECHECK_LONG, rule

SPLIT_SHARE = 0.5  # most of the prompts with several responses split over ids of one response each

GROUP_IDS = C.Check("the group ids", "the id that groups responses must be the prompt's (one per prompt, copied to "
                    "each of its repeats); print the ids and prompts of one step and check that a prompt's responses "
                    "share one id")


@rule("split_groups", "the same prompt under different group ids", None, recheck_rows=RECHECK_LONG)
def split_groups(d: RunData):
    s = d.sample_columns("step", "group", "prompt")
    if s is None or not all(c in s for c in ("step", "group", "prompt")):
        return NotJudged("split_groups", "the samples do not give step, group id and prompt")
    f = pd.DataFrame({"step": s["step"], "group": s["group"], "prompt": s["prompt"]}).dropna()
    if f.empty:
        return NotJudged("split_groups", "the samples do not give step, group id and prompt")
    per_prompt = f.groupby(["step", "prompt"], sort=False).agg(n=("group", "size"), ids=("group", "nunique"))
    size = f.groupby(["step", "group"], sort=False).size()
    several = per_prompt[per_prompt["n"] >= 2]
    if several.empty:
        return []
    split = several["ids"] == several["n"]  # every response of the prompt under its own id
    share = float(split.mean())
    if share < SPLIT_SHARE or float(size.median()) > 1:
        return []
    example = several[split].index[0]
    ev = [evidence("samples", share, SPLIT_SHARE, "share of (step, prompt)s with >= 2 responses",
                   f"{fmt(100 * share)}% of the prompts with several responses have each response under its own group "
                   f"id (groups of {fmt(float(size.median()))} response): e.g. step {example[0]}, "
                   f"{int(several.loc[example, 'n'])} responses to one prompt under "
                   f"{int(several.loc[example, 'ids'])} ids")]
    steps = np.unique(f["step"].to_numpy())
    return [finding("split_groups", "warning", "The same prompt under different group ids",
                    (int(steps[0]), int(steps[-1])), ev, (GROUP_IDS, C.GROUP_SIZE), metrics=())]
