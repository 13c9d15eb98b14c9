"""The learning-rate schedule ends before the run does (allenai/open-instruct#537): the logged learning rate
reaches 0 (a scheduler sized for fewer steps than are run, or counting optimizer steps where the run counts
rollouts) and the steps after it update nothing, whatever the reward does. Not a symptom of the notes' table:
a setup fault, reported beside them (no symptom id). Warm-up from 0 at the start is no end.
"""

from __future__ import annotations

import numpy as np

from dashboard.diagnosis import checks as C
from dashboard.diagnosis.build import evidence, finding, fmt
from dashboard.diagnosis.context import RunData
from dashboard.diagnosis.findings import NotJudged
from dashboard.diagnosis.registry import rule

# A learning rate under a thousandth of its own peak moves nothing an optimizer's noise does not (a cosine or
# linear decay to 0 is below that only in its last 0.1-3% of steps)
LR_OFF = 1e-3
# ...held over the last fifth of the logged steps or more: a schedule that ends at the last step is the usual one
LR_OFF_SHARE = 0.2
MIN_POINTS = 10


@rule("lr_ends_early", "the learning-rate schedule ends before the run", None)
def lr_ends_early(d: RunData):
    lr = d.dense("optim/lr")
    if lr is None or len(lr[1]) < MIN_POINTS:
        return NotJudged("lr_ends_early", "optim/lr is not logged (or on fewer than 10 steps)")
    steps, x = lr
    peak = float(np.max(x))
    if peak <= 0:
        return []
    off = x <= LR_OFF * peak
    after_peak = np.arange(len(x)) > int(np.argmax(x))
    tail = np.logical_and.accumulate((off & after_peak)[::-1])[::-1]  # off from some point to the end
    if tail.sum() < LR_OFF_SHARE * len(x):
        return []
    i0 = int(np.argmax(tail))
    ev = [evidence("optim/lr", float(tail.mean()), LR_OFF_SHARE, "share of logged steps at the end",
                   f"the learning rate is {fmt(float(x[i0]))} (under {LR_OFF:g} of its peak {fmt(peak)}) from step "
                   f"{steps[i0]} to the last logged step {steps[-1]}: the last {fmt(100 * float(tail.mean()))}% of "
                   f"the run updates nothing")]
    check = C.Check("the scheduler's total steps", "compare the scheduler's total (max_steps, num_train_epochs x "
                    "steps per epoch, total_training_steps) with the steps the run takes; with several optimizer "
                    "steps per rollout, or gradient accumulation, the two count different things",
                    C.chart("optim/lr"))
    return [finding("lr_ends_early", "warning", f"The learning rate reaches 0 at step {steps[i0]}, before the run ends",
                    (int(steps[i0]), int(steps[-1])), ev, (check, C.LR), metrics=("optim/lr",))]
