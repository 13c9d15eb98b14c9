"""Batch arithmetic in the config (issue 37, cause 6): sizes that do not divide.

- verl: each GPU accumulates ppo_mini_batch_size x rollout.n / GPUs responses in micro-batches of
  ppo_micro_batch_size_per_gpu; a micro-batch larger than that share gives zero accumulation steps, one that does
  not divide it leaves responses out of the update (verl checks mini % micro == 0 after normalising, verl#141).
- TRL: a generation batch spans steps_per_generation micro-steps and an optimizer step gradient_accumulation_steps
  of them; when the first is not a multiple of the second, an optimizer step mixes rollouts of two policies (the
  timeline of huggingface/trl#3493; steps_per_generation defaults to gradient_accumulation_steps, trl#3662).
A configuration audit, no symptom of the notes' table.
"""

from __future__ import annotations

from dashboard.diagnosis import checks as C
from dashboard.diagnosis.build import evidence, finding
from dashboard.diagnosis.context import RunData
from dashboard.diagnosis.findings import NotJudged
from dashboard.diagnosis.registry import RECHECK_LONG, rule

BATCH_CHECK = C.Check("the batch sizes", "work the sizes through by hand: responses per optimizer step per GPU "
                      "(mini-batch x responses per prompt / GPUs), divided by the micro-batch, must be a whole number "
                      "of at least 1; a generation batch must span whole optimizer steps")


def _verl(d: RunData) -> list[str] | None:
    mini, micro = d.number("actor.ppo_mini_batch_size"), d.number("actor.ppo_micro_batch_size_per_gpu")
    n, gpus, nodes = d.number("rollout.n"), d.number("trainer.n_gpus_per_node"), d.number("trainer.nnodes")
    if None in (mini, micro, n, gpus, nodes) or micro[1] <= 0 or gpus[1] * nodes[1] <= 0:
        return None
    share = mini[1] * n[1] / (gpus[1] * nodes[1])
    keys = (f"{mini[0]} = {mini[1]:g} x {n[0]} = {n[1]:g} / {gpus[1] * nodes[1]:g} GPUs = {share:g} responses per "
            f"GPU, {micro[0]} = {micro[1]:g}")
    if micro[1] > share:
        return [f"{keys}: zero accumulation steps (a micro-batch larger than a GPU's share of the mini-batch)"]
    if share % micro[1]:
        return [f"{keys}: {share % micro[1]:g} responses per GPU left out of each optimizer step"]
    return []


def _trl(d: RunData) -> list[str] | None:
    spg, ga = d.number("steps_per_generation"), d.number("gradient_accumulation_steps")
    if spg is None or ga is None or ga[1] <= 0:
        return None
    if spg[1] % ga[1]:
        return [(f"{spg[0]} = {spg[1]:g} is not a multiple of {ga[0]} = {ga[1]:g}: an optimizer step mixes rollouts "
                 "of two generation batches, sampled by two policies")]
    return []


@rule("config_batch_arithmetic", "batch sizes that do not divide", recheck_rows=RECHECK_LONG)
def config_batch_arithmetic(d: RunData):
    said = [x for x in (_verl(d), _trl(d)) if x is not None]
    if not said:
        return NotJudged("config_batch_arithmetic", "the config does not give the batch sizes to check")
    lines = [line for x in said for line in x]
    if not lines:
        return []
    rng = (int(d.steps[0]), int(d.steps[-1])) if d.n else None
    ev = [evidence("config:batch", float("nan"), None, "config", line) for line in lines]
    return [finding("config_batch_arithmetic", "warning", "Batch sizes in the config do not divide", rng, ev,
                    (BATCH_CHECK, C.EPOCHS))]
