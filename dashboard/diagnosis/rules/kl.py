"""KL rules: KL / clip fraction explode (notes, section 7 row 3), and KL to the reference already high at the
first step (the reference is not the starting policy; notes, sections 3 and 6 q.4).

An explosion is sustained (SUSTAIN logged points in a row) or catastrophic (one KL in the tens; NaN/inf is
non_finite's). A logged spike that returns at once (the first reuse step after the first optimizer update,
where Adam's first steps are large, or one odd batch) is neither; a metric far from 0 at its first logged
step is a level, and a jump is measured from there.
"""

from __future__ import annotations

import numpy as np

from dashboard.diagnosis import checks as C
from dashboard.diagnosis import facts, stats
from dashboard.diagnosis.build import evidence, finding, fmt
from dashboard.diagnosis.context import RunData
from dashboard.diagnosis.findings import NotJudged
from dashboard.diagnosis.registry import rule
from dashboard.diagnosis.series import episodes, rolling_median

KL_JUMP = 5.0  # a 5-point median this many times the run's level before it is an explosion...
KL_FLOOR = 0.5  # ...and above this (nats): the first update moves KL off 0 (to 0.24 on our healthy run)
# Once LONG points give a real baseline, a lower floor: LLM runs sit at 1e-3..1e-1 nats, and a jump from
# 0.01 to 0.4 is an explosion there, which the 0.5 floor would miss. Below 0.05 nats a 5x move is noise.
KL_FLOOR_SETTLED = 0.05
KL_HUGE = 5.0  # a 5-point median KL to the reference above 5 nats: the policy is far from where it started
KL_CATASTROPHIC = 10.0  # one logged KL in the tens is an explosion on its own (seen: 12, then 1e24, then inf)
CLIP_HIGH = 0.2  # PPO practice keeps clip fraction ~0.1-0.2; above it sustained, the trust region is exceeded
CLIP_JUMP_FLOOR = 0.05
SHORT, LONG = 5, 20
SUSTAIN = 3  # logged points in a row: an explosion stays; a spike (one odd batch, Adam's first reuse step) returns
SUSTAIN_SETTLED = 5  # below the absolute floor the evidence is weaker: it must stay longer to count
# KL to the reference at the first step: a policy equal to its reference gives 0 there (TRL logs 0 or ~1e-5;
# a bf16/fp32 numeric mismatch stays near 1e-3). 0.05 nats is an order of magnitude above that and far below
# the ~1 nat an SFT adapter over its base model shows.
REF_KL_FIRST = 0.05
FIRST_STEPS = 1  # the first logged point must be at step <= 1 (before or during the first update) to judge
SERIES = (("policy/kl_ref", KL_FLOOR, KL_FLOOR_SETTLED, KL_HUGE),
          ("policy/clipfrac", CLIP_JUMP_FLOOR, None, CLIP_HIGH),
          ("policy/approx_kl_old", KL_FLOOR, KL_FLOOR_SETTLED, None))


def _jumps(x: np.ndarray, floor: float, settled_floor: float | None = None, prior: np.ndarray | None = None,
           sustain: int = 3) -> np.ndarray:
    """Where x stays above KL_JUMP x the run's level before it, and above a floor, for `sustain` logged points in a
    row (a spike that returns at once, or two spikes with a calm point between, is no explosion).

    The level before is the median of the LONG points ending SHORT points earlier; until half of those exist,
    the first logged value (far from 0 there: a level, not a jump; at 0: an LR far too large explodes on
    update one and must be caught). The floor is `floor` until LONG points exist, then `settled_floor`.
    `prior`: the LONG-point rolling median of x when the caller has it. x: (T,) -> (T,) bool
    """
    prior = (rolling_median(x, LONG) if prior is None else prior)[:-SHORT]
    first = x[np.isfinite(x)][0] if np.isfinite(x).any() else np.nan
    before = np.full_like(x, first)
    before[SHORT:] = np.where(np.isfinite(prior), prior, first)
    floors = np.full_like(x, floor)
    if settled_floor is not None:
        floors[SHORT + LONG:] = settled_floor
    with np.errstate(invalid="ignore"):
        return stats.sustained((x > floors) & (x > KL_JUMP * np.fmax(before, floors / KL_JUMP)), sustain)


def _explosion(metric: str, steps: np.ndarray, x: np.ndarray, floor: float, settled: float | None,
               level: float | None) -> tuple[object, tuple[int, int], bool] | None:
    """(evidence, step range, critical?) of a sustained jump or a catastrophic value of one series, else None."""
    # Every way to fire needs a value above the lowest bar (a jump clears a floor, a level or KL_CATASTROPHIC is
    # above it): a series that never gets there, as an LLM's KL of 1e-3, skips the rolling medians
    bar = min(b for b in (floor, settled, level) if b is not None)
    if not bool((x > bar).any()):
        return None
    prior = rolling_median(x, LONG)
    crit = _jumps(x, floor, prior=prior)
    why = f"{SUSTAIN} logged points in a row > {KL_JUMP:g}x the run's level before and > {floor:g}"
    if level is not None:
        crit |= stats.sustained(x > level, SUSTAIN)
        why += f", or above {level:g}"
    if metric == "policy/kl_ref":
        crit |= x >= KL_CATASTROPHIC
        why += f", or one value >= {KL_CATASTROPHIC:g}"
    # Below the absolute floor, a jump off the run's own settled level is a warning: at LLM scale
    # (KL 1e-3..1e-1) it is an explosion in the making; on a noisy small run it may be a wobble.
    mask = crit | (_jumps(x, floor, settled, prior, SUSTAIN_SETTLED) if settled is not None else crit)
    eps = episodes(mask, min_len=1)
    catastrophic = metric == "policy/kl_ref" and bool((x >= KL_CATASTROPHIC).any())
    if not eps and not catastrophic:
        return None
    if not eps:
        i = int(np.argmax(x >= KL_CATASTROPHIC))
        eps = [(i, i)]
    is_crit = bool(crit.any())
    if not is_crit:
        why = f"{SUSTAIN_SETTLED} logged points in a row > {KL_JUMP:g}x the run's level before and > {settled:g}"
    i0, i1 = eps[0][0], eps[-1][1]
    peak = float(np.nanmax(x[i0:i1 + 1]))
    pre = float(np.nanmedian(x[max(0, i0 - LONG):i0])) if i0 > 0 else float("nan")
    ev = evidence(metric, peak, (level or floor) if is_crit else settled, why,
                  f"{metric} jumps to {fmt(peak)} at steps {steps[i0]}-{steps[i1]} (median before: {fmt(pre)})")
    return ev, (int(steps[i0]), int(steps[i1])), is_crit


@rule("kl_clip_explode", "KL / clip fraction explode", "kl_clip_explode")
def kl_clip_explode(d: RunData):
    have = [m for m, *_ in SERIES if d.dense(m) is not None]
    if not have:
        return NotJudged("kl_clip_explode", "neither policy/kl_ref nor policy/clipfrac is logged")
    ev, ranges, severe = [], [], False
    for metric, floor, settled, level in SERIES:
        dd = d.dense(metric)
        if dd is None or len(dd[1]) < SHORT:
            continue
        hit = _explosion(metric, *dd, floor, settled, level)
        if hit is not None:
            ev.append(hit[0])
            ranges.append(hit[1])
            severe |= hit[2]
    if not ev:
        return []
    rng = (min(r[0] for r in ranges), max(r[1] for r in ranges))
    after = _reward_after(d, rng[0])
    for name in ("optim/lr", "optim/grad_norm"):
        x = d.dense(name)
        if x is not None and len(x[1]):
            v = float(np.nanmax(x[1]))
            ev.append(evidence(name, v, None, "max over the run", f"{name} max {fmt(v)}"))
    for hit in (d.number("algo.epochs", "num_iterations", "ppo_epochs"), d.number("algo.minibatches")):
        if hit is not None and hit[1] > 1:
            ev.append(evidence(f"config:{hit[0]}", hit[1], None, "config", f"{hit[0]} = {hit[1]:g}"))
    title = "KL / clip fraction explode" if severe else "KL jumps far above its own level"
    severity = "critical" if severe else "warning"
    catastrophic = any(e.metric == "policy/kl_ref" and e.value >= KL_CATASTROPHIC for e in ev)
    if facts.rises(d, after) and not catastrophic:
        # the reward keeps climbing through it: worth knowing, not a run that fails
        severity, title = "info", title + " while the reward keeps rising"
        ev.append(evidence("reward/mean", after.change, None, "Theil-Sen change from the jump on",
                           f"reward rises by {fmt(after.change)} from step {rng[0]} on (p = {after.p:.2g})"))
    return [finding("kl_clip_explode", severity, title, rng, ev, C.KL_CLIP,
                    metrics=tuple(e.metric for e in ev if not e.metric.startswith("config:")))]


def _reward_after(d: RunData, step: int) -> stats.Trend | None:
    r = d.dense(facts.REWARD)
    if r is None:
        return None
    keep = r[0] >= step
    return stats.trend(r[0][keep], r[1][keep])


@rule("reference_mismatch", "KL to the reference far from 0 at the first step", "reference_mismatch")
def reference_mismatch(d: RunData):
    kl = d.dense("policy/kl_ref")
    if kl is None:
        return NotJudged("reference_mismatch", "policy/kl_ref is not logged (or only as placeholder zeros)")
    steps, x = kl
    if steps[0] > FIRST_STEPS:
        return NotJudged("reference_mismatch", f"the first KL to the reference is logged at step {steps[0]}, after "
                         "updates: the starting KL is unknown")
    v = float(x[0])
    if v <= REF_KL_FIRST:
        return []
    ev = [evidence("policy/kl_ref", v, REF_KL_FIRST, f"value at step {steps[0]}",
                   f"KL to the reference is {fmt(v)} nats at step {steps[0]}, before the policy could move: "
                   f"a policy that starts as its reference gives about 0 there")]
    if len(x) >= 3:
        med = float(np.median(x))
        ev.append(evidence("policy/kl_ref", med, None, "median over the run", f"median over the run {fmt(med)}: "
                           "a level the run starts at, not an explosion"))
    check = C.Check("the reference model", "is the reference the checkpoint training starts from? An adapter "
                    "trained over a base model, with the base as reference, or a wrong checkpoint, starts far "
                    "from it; the KL term then pulls toward another model", C.chart("policy/kl_ref"))
    return [finding("reference_mismatch", "warning", "The reference is not the starting policy (KL high at step "
                    f"{steps[0]})", (int(steps[0]), int(steps[-1])), ev, (check,), metrics=("policy/kl_ref",))]
