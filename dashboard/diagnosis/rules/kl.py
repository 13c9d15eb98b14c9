"""KL rules: KL / clip fraction explode (notes, section 7 row 3), and KL to the reference already high at the
first step (the reference is not the starting policy; notes, sections 3 and 6 q.4).

An explosion is sustained (SUSTAIN logged points in a row) or catastrophic (one KL in the tens; NaN/inf is
non_finite's). A logged spike that returns at once (the first reuse step after the first optimizer update,
where Adam's first steps are large, or one odd batch) is neither; a metric far from 0 at its first logged
step is a level, and a jump is measured from there.

The run's own early level: the KL to the reference at a first step of 1 or earlier is its value there (the
policy starts as its reference, so that is where any move starts from); the clip fraction and the old-vs-current
KL start from the regime the run is in from its first steps (the median of its first SHORT points), since their
first step may be on-policy (0) while every reuse of the rollout after it clips: a level present from the first
steps (rollouts reused many times, or old log-probs that disagree with the training forward, first_step_ratio's
finding) is not an explosion, and the clip fraction's CLIP_HIGH counts only KL_JUMP times above that level
(issue 24). An explosion is critical when it stays: its median over the next LONG logged points stays far above
the level before it (or, at the end of the log, it has not come back yet); a jump that comes back sooner is a
warning ("KL jumps far above its own level"); one KL in the tens is critical on its own (seen: 12, then 1e24, then inf).

A KL to the reference is also judged by its level, in its own units (nats per token): one that climbs steadily from
near 0 to a held median above KL_RUNAWAY is a runaway as much as a jump is (the notes' row 3 names the size, not
the shape). A level present from the first logged row is no runaway: that is reference_mismatch's.
"""

from __future__ import annotations

import numpy as np

from dashboard.diagnosis import checks as C
from dashboard.diagnosis import facts, stats
from dashboard.diagnosis.build import evidence, finding, fmt, steps_text
from dashboard.diagnosis.consequences import CAPPED_ROOT
from dashboard.diagnosis.context import RunData
from dashboard.diagnosis.findings import NotJudged
from dashboard.diagnosis.registry import rule
from dashboard.diagnosis.rules.reward import ZERO_VAR_CRIT  # four in five groups tied: a wrecked policy
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
# TRL, verl and our trainer compute every log-prob of logits / T at the sampling temperature T, the reference's
# too: a change of the logits moves the log-ratio by ~1/T, and a KL by ~1/T^2 of what it shows at T = 1 (at T =
# 0.1, a drift of 0.19 nats reads 19). Below T = 1 the KL bars are scaled by 1/T^2 (never lowered above it).
KL_SCALED_BELOW = 1.0
SUSTAIN = 3  # logged points in a row: an explosion stays; a spike (one odd batch, Adam's first reuse step) returns
# ...and it is sudden: at least this many times the few points just before it (a steady climb doubles slowly; an
# explosion multiplies the KL by 10-100 within a few steps)
RECENT_JUMP = 3.0
# A KL to the reference of 1 nat per token held over LONG logged points: the policy gives the tokens it samples
# e (2.7) times the reference's probability on average, so a 100-token answer is e^100 times likelier under it.
# GRPO practice sits at 1e-3..1e-1 (DeepSeekMath's beta 0.04 keeps it there); over the 63 real runs, those labelled
# healthy hold medians under 0.35 nats and single logged spikes up to 1.4-3 nats that come back within a few logs.
KL_RUNAWAY = 1.0
# ...from a start below this (a tenth of it: near the reference); a start above is a level from the first row
KL_RUNAWAY_START = 0.1
SUSTAIN_SETTLED = 5  # below the absolute floor the evidence is weaker: it must stay longer to count
# KL to the reference at the first step: a policy equal to its reference gives 0 there (TRL logs 0 or ~1e-5;
# a bf16/fp32 numeric mismatch stays near 1e-3). 0.05 nats is an order of magnitude above that and far below
# the ~1 nat an SFT adapter over its base model shows.
REF_KL_FIRST = 0.05
# A first row logged after some updates (every N steps: the first row is step N) judges only a KL a few updates
# cannot give: KL_RUNAWAY, a level healthy runs do not reach in hundreds of steps (see above); the row must be the
# run's first logging interval (its step no later than the interval to the next), not a resumed run's.
REF_KL_LATE = KL_RUNAWAY
FIRST_STEPS = 1  # the first logged point must be at step <= 1 (before or during the first update) to judge
# ... except where steps count from 0: our trainer logs step 0 before any update, and its step 1 after one
# (TRL, verl and OpenRLHF number from 1, and their step 1 is computed with the starting weights)
ZERO_BASED_SOURCES = frozenset({"grpo_core"})
SERIES = (("policy/kl_ref", KL_FLOOR, KL_FLOOR_SETTLED, KL_HUGE),
          ("policy/clipfrac", CLIP_JUMP_FLOOR, None, CLIP_HIGH),
          ("policy/approx_kl_old", KL_FLOOR, KL_FLOOR_SETTLED, None))


def _jumps(x: np.ndarray, floor: float, settled_floor: float | None = None, prior: np.ndarray | None = None,
           sustain: int = 3, early: float | None = None) -> np.ndarray:
    """Where x stays above KL_JUMP x the run's level before it, and above a floor, for `sustain` logged points in a
    row (a spike that returns at once, or two spikes with a calm point between, is no explosion).

    The level before is the median of the LONG points ending SHORT points earlier; until half of those exist,
    the run's early level: `early`, by default the first logged value (far from 0 there: a level, not a jump; at
    0: an LR far too large explodes on update one and must be caught). The floor is `floor` until LONG points
    exist, then `settled_floor`. `prior`: the LONG-point rolling median of x when the caller has it.
    x: (T,) -> (T,) bool
    """
    before = level_before(x, rolling_median(x, LONG) if prior is None else prior, early)
    floors = np.full_like(x, floor)
    if settled_floor is not None:
        floors[SHORT + LONG:] = settled_floor
    with np.errstate(invalid="ignore"):
        held = stats.sustained((x > floors) & (x > KL_JUMP * np.fmax(before, floors / KL_JUMP)), sustain)
    return _sudden(x, held, sustain)


def _sudden(x: np.ndarray, held: np.ndarray, sustain: int) -> np.ndarray:
    """`held` without the runs that are a drift, not a jump: a run whose first `sustain` points' median is not
    RECENT_JUMP times the median of the SHORT points just before it. The level before (a LONG-point median ending
    SHORT points earlier) lags a KL that climbs steadily, and lags more in steps where a run logs every N steps
    (LONG points are 20 x N steps): against it a climb 0 -> 1 nat over 100 steps, logged every 5, read as a jump.
    x, held: (T,) -> (T,) bool"""
    out = held.copy()
    for i0, i1 in stats.runs_of(held):
        recent = x[max(0, i0 - SHORT):i0]
        recent = recent[np.isfinite(recent)]
        if len(recent) and np.nanmedian(x[i0:i0 + sustain]) <= RECENT_JUMP * float(np.median(recent)):
            out[i0:i1 + 1] = False
    return out


def level_before(x: np.ndarray, prior: np.ndarray, early: float | None = None) -> np.ndarray:
    """The run's level before each point: the LONG-point rolling median `prior` ending SHORT points earlier, the
    early level (`early`, by default the first logged value) until that exists. (T,) -> (T,)"""
    first = early if early is not None else (x[np.isfinite(x)][0] if np.isfinite(x).any() else np.nan)
    before = np.full_like(x, first)
    before[SHORT:] = np.where(np.isfinite(prior[:-SHORT]), prior[:-SHORT], first)
    return before


def early_level(metric: str, steps: np.ndarray, x: np.ndarray) -> float:
    """The run's own early level of one series (module docstring): the KL to the reference's first logged value (at
    a first step of 1 or earlier the policy is its reference; a first KL logged after updates is a level already,
    and a jump is measured from it); for the clip fraction and the old-vs-current KL, the median of the first
    SHORT points."""
    finite = np.isfinite(x)
    if not finite.any():
        return float("nan")
    if metric == "policy/kl_ref":
        return float(x[finite][0])
    return float(np.median(x[finite][:SHORT]))


def no_kl_term(d: RunData) -> str | None:
    """"key = value" when the config says the loss and the reward carry no KL term (our algo.kl_mode none, TRL
    beta 0, verl use_kl_loss and use_kl_in_reward both false, a KL coefficient of 0), else None (a term, or
    unknown). Nothing then holds the policy near its reference: the KL to it measures how far the policy went."""
    mode = d.setting("algo.kl_mode")
    if mode is not None:
        return f"{mode[0]} = {mode[1]}" if str(mode[1]).lower() == "none" else None
    loss, reward = d.setting("use_kl_loss"), d.setting("use_kl_in_reward")
    if loss is not None and reward is not None:
        off = all(str(v[1]).lower() in ("false", "0") for v in (loss, reward))
        return f"{loss[0]} = {loss[1]}, {reward[0]} = {reward[1]}" if off else None
    coef = d.number("beta", "init_kl_coef", "kl_coef", "kl_coeff")
    return f"{coef[0]} = {coef[1]:g}" if coef is not None and coef[1] == 0 else None


def unsaid(d: RunData) -> str | None:
    """What the config does not say of the KL to the reference's meaning, as text, when it does not say whether a
    KL term holds the policy (no_kl_term's keys: without a term the KL measures how far the policy went, a level of
    nats that is no explosion); None when it says so. The text names the sampling temperature too when that is
    unsaid as well (temperature_scale: at T = 0.1 a drift of 0.19 nats reads 19). A temperature alone unsaid is
    the frameworks' default of 1 (TRL, verl, OpenRLHF), assumed. A metrics export without its config says neither."""
    term = any(d.setting(*k) is not None for k in (("algo.kl_mode",), ("use_kl_loss", "use_kl_in_reward"),
                                                    ("beta", "init_kl_coef", "kl_coef", "kl_coeff")))
    if term:
        return None
    temp = d.number("rollout.temperature", "temperature") is not None
    return "whether a KL term holds the policy" + ("" if temp else
                                                    " nor the sampling temperature its log-probs are computed at")


def temperature_scale(d: RunData) -> tuple[float, str] | None:
    """(1/T^2, the config key) for a sampling temperature T below KL_SCALED_BELOW in the config, else None."""
    t = d.number("rollout.temperature", "temperature")
    if t is None or not 0.0 < t[1] < KL_SCALED_BELOW:
        return None
    return 1.0 / t[1] ** 2, t[0]


def _explosion(metric: str, steps: np.ndarray, x: np.ndarray, floor: float, settled: float | None,
               level: float | None, scale: float = 1.0, late_start: bool = False) -> tuple[object, tuple[int, int], bool, bool] | None:
    """(evidence, step range, critical?, a catastrophic value?) of a sustained jump or a catastrophic value of one
    series, else None. steps, x: (T,) the series' logged steps and finite values.

    Critical: a jump far above the run's level before it (or a crossing of `level`, far above the run's early
    level for the clip fraction) that stays: its median over the next LONG points (fewer at the end of the log: a
    fresh jump stays until it comes back) is still KL_JUMP times that level (a crossing: within KL_JUMP of
    `level`); or one KL of KL_CATASTROPHIC or more. A jump that comes back sooner is a warning. `scale`: the
    absolute bars of a KL (floors, level, catastrophic) are multiplied by it (temperature_scale)."""
    floor, settled = floor * scale, settled * scale if settled is not None else None
    level = level * scale if level is not None else None
    catastrophic_at = KL_CATASTROPHIC * scale if metric == "policy/kl_ref" else None
    # Every way to fire needs a value above the lowest bar (a jump clears a floor, a level or KL_CATASTROPHIC is
    # above it): a series that never gets there, as an LLM's KL of 1e-3, skips the rolling medians
    bar = min(b for b in (floor, settled, level) if b is not None)
    if not bool((x > bar).any()):
        return None
    early = early_level(metric, steps, x)
    prior = rolling_median(x, LONG)
    before = level_before(x, prior, early)
    jump = _jumps(x, floor, prior=prior, early=early)
    none = np.zeros(len(x), dtype=bool)
    above, crossed = None, none
    if level is not None:
        # the KL to the reference has a known start (0): far above `level` is far from it, unless its first row
        # is already at nats (a reference that is not the starting policy: reference_mismatch); a clip fraction or
        # a staleness KL above `level` counts only far above the level the run holds from its first steps
        known_start = metric == "policy/kl_ref" and not late_start
        above = level if known_start or not np.isfinite(early) else max(level, KL_JUMP * early)
        crossed = stats.sustained(x > above, SUSTAIN)
    # a KL in the tens from the first logged row on is a level (reference_mismatch's), not a blow-up
    cat = x >= catastrophic_at if catastrophic_at is not None else none
    if late_start:
        cat &= x >= KL_JUMP * early
    settled_jump = _jumps(x, floor, settled, prior, SUSTAIN_SETTLED, early=early) if settled is not None else none
    eps = episodes(jump | crossed | cat | settled_jump, min_len=1)
    if not eps:
        return None

    def stays(a: int) -> bool:
        need = max(floor, KL_JUMP * before[a]) if jump[a] else max(floor, above / KL_JUMP)
        return bool(np.nanmedian(x[a:a + LONG]) > need)

    held = [a for a, _ in episodes(jump | crossed, min_len=1) if stays(a)]
    is_crit = bool(held) or bool(cat.any())
    loud = bool(jump.any() or crossed.any() or cat.any())
    if loud:
        why = f"{SUSTAIN} logged points in a row > {KL_JUMP:g}x the run's level before and > {floor:g}"
        if above is not None:
            why += f", or above {above:g}"
        why += f", holding over the next {LONG}"
        if catastrophic_at is not None:
            why += f"; or one value >= {catastrophic_at:g}"
    else:
        why = f"{SUSTAIN_SETTLED} logged points in a row > {KL_JUMP:g}x the run's level before and > {settled:g}"
    i0, i1 = eps[0][0], eps[-1][1]
    peak = float(np.nanmax(x[i0:i1 + 1]))
    pre = float(np.nanmedian(x[max(0, i0 - LONG):i0])) if i0 > 0 else float("nan")
    text = f"{metric} jumps to {fmt(peak)} at {steps_text(steps[i0], steps[i1])} (median before: {fmt(pre)})"
    if loud and not is_crit:
        text += f"; it comes back: its median over the next {LONG} logged points falls back near the level before"
    ev = evidence(metric, peak, (level or floor) if loud else settled, why, text)
    return ev, (int(steps[i0]), int(steps[i1])), is_crit, bool(cat.any())


def _runaway(steps: np.ndarray, x: np.ndarray, scale: float = 1.0) -> tuple[object, tuple[int, int], bool] | None:
    """(evidence, step range, still there at the end?) of a KL to the reference that climbed from near 0
    (its first logged value under KL_RUNAWAY_START) to a median over LONG logged points above KL_RUNAWAY (both x
    `scale`, temperature_scale), else None. The range starts at the first point above the bar from which the
    median of the next LONG points is above it too. steps, x: (T,) the logged steps and finite values."""
    bar, start = KL_RUNAWAY * scale, KL_RUNAWAY_START * scale
    if len(x) < LONG or x[0] >= start:
        return None
    ahead = rolling_median(x, LONG)[LONG - 1:]  # ahead[i]: the median of x[i:i + LONG]
    onset = (x[:len(ahead)] > bar) & (ahead > bar)
    if not onset.any():
        return None
    i0 = int(np.argmax(onset))
    held_to_end = bool(ahead[-1] > bar)
    i1 = len(x) - 1 if held_to_end else int(np.flatnonzero(ahead > bar)[-1]) + LONG - 1
    med = float(np.median(x[i0:i1 + 1]))
    ev = evidence("policy/kl_ref", med, bar, f"median over steps {steps[i0]}-{steps[i1]}",
                  f"KL to the reference climbs from {fmt(float(x[0]))} at step {steps[0]} to a median of {fmt(med)} "
                  f"nats per token over steps {steps[i0]}-{steps[i1]} (> {fmt(bar)}, held over {LONG} logged points"
                  f"{', to the end of the log' if held_to_end else ''}): far from where the policy started")
    return ev, (int(steps[i0]), int(steps[i1])), held_to_end


@rule("kl_clip_explode", "KL / clip fraction explode", "kl_clip_explode")
def kl_clip_explode(d: RunData):
    have = [m for m, *_ in SERIES if d.dense(m) is not None]
    if not have:
        return NotJudged("kl_clip_explode", "neither policy/kl_ref nor policy/clipfrac is logged")
    ev, ranges, severe, blowup, climbs = [], [], False, False, False
    tscale, free, unknown = temperature_scale(d), no_kl_term(d), unsaid(d)
    late_start, wreck = late_reference(d), early_wreck(d)
    lowered = False  # a critical explosion of the KL to the reference alone, lowered by the cap below
    for metric, floor, settled, level in SERIES:
        dd = d.dense(metric)
        if dd is None or len(dd[1]) < SHORT:
            continue
        scale = tscale[0] if tscale is not None and metric != "policy/clipfrac" else 1.0
        hit = _explosion(metric, *dd, floor, settled, level, scale, late_start and metric == "policy/kl_ref")
        if metric == "policy/kl_ref" and wreck is not None:
            # wrecked before the first logged row: the tied groups, not the KL's size alone, say so (no cap)
            ev.append(wreck[0])
            ranges.append(wreck[1])
            severe = True
            continue
        if hit is None and metric == "policy/kl_ref":
            # a steady climb: a warning (a jump that stays is critical); a policy pushed the wrong way climbs so
            run = _runaway(*dd, scale)
            hit = None if run is None else (run[0], run[1], False, False)
            climbs = run is not None
        if hit is not None:
            ev.append(hit[0])
            ranges.append(hit[1])
            # without a KL term the KL to the reference is the distance travelled: no explosion of the update
            # on its own (the clip fraction and the old-vs-current KL still say one)
            # and where the config does not say whether a term holds it, nor the temperature: the same KL may be that
            capped = (free is not None or unknown is not None) and metric == "policy/kl_ref"
            severe |= hit[2] and not capped
            blowup |= hit[3] and not capped
            lowered |= bool(hit[2] or hit[3]) and capped
    if not ev:
        return []
    if free is not None and any(e.metric == "policy/kl_ref" for e in ev):
        ev.append(evidence("config:kl", float("nan"), None, "config",
                           f"no KL term ({free}): nothing holds the policy near its reference, so its KL to it "
                           "measures how far the policy went; at most a warning on its own"))
    elif unknown is not None and lowered:
        # an explosion for all the log says: it still explains what follows it (CAPPED_ROOT, consequences.py); a
        # run known to have no KL term travels, and what follows is judged on its own
        ev.append(evidence("config:kl", CAPPED_ROOT if not severe else float("nan"), None, "config",
                           f"the config does not say {unknown}: a KL far from the reference may be how far the "
                           "policy went, not an explosion; at most a warning on its own"))
    if tscale is not None and any(e.metric != "policy/clipfrac" for e in ev):
        ev.append(evidence(f"config:{tscale[1]}", tscale[0], None, "config",
                           f"{tscale[1]} = {fmt(tscale[0] ** -0.5)}: log-probs of logits / T make a KL about "
                           f"{fmt(tscale[0])}x what the same change shows at T = 1; the KL bars are scaled by it"))
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
    title = "KL to the reference climbs far from it" if climbs and len(ranges) == 1 else \
        "KL / clip fraction explode" if severe else "KL jumps far above its own level"
    severity = "critical" if severe else "warning"
    if facts.rises(d, after) and not blowup:
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


def _late_kl(d: RunData) -> tuple[np.ndarray, np.ndarray] | None:
    """The KL to the reference (steps, values) when its first row, logged after updates in the run's first logging
    interval, is at REF_KL_LATE or more (x temperature_scale); else None."""
    kl = d.dense("policy/kl_ref")
    if kl is None or len(kl[0]) < 2 or kl[0][0] <= FIRST_STEPS or not _first_row_of_run(kl[0]):
        return None
    return kl if kl[1][0] >= REF_KL_LATE * (temperature_scale(d) or (1.0,))[0] else None


def _groups_wrecked(d: RunData) -> float | None:
    """The median tied share (zero-variance groups, or 1 for a median reward spread of exactly 0) when it is above
    ZERO_VAR_CRIT over the run: nearly every group ties; else None (spread left, or neither logged)."""
    z, sd = d.dense("groups/zero_std_frac"), d.dense("reward/std")
    if z is not None and len(z[1]):
        v = float(np.median(z[1]))
        return v if v > ZERO_VAR_CRIT else None
    return 1.0 if sd is not None and len(sd[1]) and float(np.median(sd[1])) == 0.0 else None


def late_reference(d: RunData) -> bool:
    """A KL to the reference at REF_KL_LATE or more already at a first row logged after updates (the run's first
    logging interval), in a run whose groups still have spread: a reference that is not the starting policy. A
    learning rate far too large also gets there in a few updates (TRL averages a logging interval's rows: lr 0.05
    logs 3.7 nats at step 5), but it wrecks the policy: from then on nearly every group ties (zero-variance share
    above ZERO_VAR_CRIT, or no reward spread at all), which a policy that only started elsewhere does not show."""
    return _late_kl(d) is not None and _groups_wrecked(d) is None


def early_wreck(d: RunData) -> tuple[object, tuple[int, int]] | None:
    """(evidence, step range) of an explosion inside the first logging interval: late_reference's KL at the first
    row with the groups wrecked from then on (the other half of its test). A run logged every N steps whose learning
    rate wrecks the policy in its first N updates shows no jump, only a KL already at nats on its first row (a
    thinned TRL run at lr 0.05: 3.7 nats at step 10, every group tied); None otherwise. The range runs from the
    first row to the last point still at REF_KL_LATE or more."""
    kl, tied = _late_kl(d), _groups_wrecked(d)
    if kl is None or tied is None:
        return None
    steps, x = kl
    bar = REF_KL_LATE * (temperature_scale(d) or (1.0,))[0]
    last = int(np.flatnonzero(x >= bar)[-1])
    ev = evidence("policy/kl_ref", float(x[0]), bar, f"value at step {steps[0]}",
                  f"KL to the reference is already {fmt(float(x[0]))} nats per token at step {steps[0]}, the first "
                  f"logged row, and {fmt(100 * tied)}% of groups tie over the run (median): the policy was wrecked "
                  f"within its first {int(steps[0])} updates, before the first log")
    return ev, (int(steps[0]), int(steps[last]))


def _first_row_of_run(steps: np.ndarray) -> bool:
    """Whether the first logged step is the run's first logging interval: at most the gap to the next row (a run
    logged every 10 steps starts at 10; one resumed at step 101 does not). steps: (T,) ascending"""
    return len(steps) >= 2 and 0 < steps[0] <= steps[1] - steps[0]


@rule("reference_mismatch", "KL to the reference far from 0 at the first step", "reference_mismatch")
def reference_mismatch(d: RunData):
    kl = d.dense("policy/kl_ref")
    if kl is None or not len(kl[0]):  # logged, but with no finite value
        return NotJudged("reference_mismatch", "policy/kl_ref is not logged (or only as placeholder zeros)")
    steps, x = kl
    v = float(x[0])
    if d.steps_from_order:  # a first row may come after any number of updates: neither test applies
        return NotJudged("reference_mismatch", "the steps are row positions (no step column): whether the first "
                         "KL to the reference comes before any update is unknown")
    if steps[0] > FIRST_STEPS - (d.source in ZERO_BASED_SOURCES):
        if not late_reference(d):
            return NotJudged("reference_mismatch", f"the first KL to the reference is logged at step {steps[0]}, "
                             "after updates: the starting KL is unknown")
        ev = [evidence("policy/kl_ref", v, REF_KL_LATE, f"value at step {steps[0]}",
                       f"KL to the reference is already {fmt(v)} nats per token at step {steps[0]}, the first "
                       f"logged row: {int(steps[0]) - 1} updates do not move a policy that far from where it started")]
    elif v <= REF_KL_FIRST:
        return []
    else:
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
