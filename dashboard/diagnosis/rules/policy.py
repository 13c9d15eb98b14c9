"""Policy rules: entropy collapse, low diversity (notes, section 7 row 4)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from dashboard.diagnosis import checks as C
from dashboard.diagnosis import facts, stats
from dashboard.diagnosis.build import evidence, finding, fmt, steps_text
from dashboard.diagnosis.context import RunData
from dashboard.diagnosis.findings import NotJudged
from dashboard.diagnosis.registry import RECHECK_LONG, rule
from dashboard.diagnosis.series import WARMUP_STEPS, early_level, episodes, rolling_median, window_for

ENTROPY_COLLAPSE_FRAC = 0.5  # entropy at less than half its own early level...
ENTROPY_FAST_STEPS = 50  # ...reached within this many steps of leaving 90% of it is "fast"
ENTROPY_SEVERE_FRAC = 0.25
LOW_TEMPERATURE = 0.5  # notes, section 7 row 1: a low temperature makes groups alike
# Per-token entropy of a sampling LLM at temperature 1 is 0.3-1.5 nats on reasoning tasks; below 0.1 nats from
# the first step on, the policy is nearly deterministic before any RL (an SFT'd policy): low diversity.
ENTROPY_NEAR_ZERO = 0.1
IDENTICAL_GROUPS = 0.5  # half the groups with every response the same text: no exploration
# One text for most responses of a step, across different prompts: the policy answers the same whatever it is
# asked (mode collapse; a classifier that answers one class to every input). Four in five responses over at least
# four prompts: a task whose right answers share one text that often is one no model is trained on.
SAME_ANSWER_SHARE, SAME_ANSWER_PROMPTS = 0.8, 4


@rule("entropy_collapse", "entropy collapses fast", "entropy_collapse")
def entropy_collapse(d: RunData):
    if (nj := d.need("entropy_collapse", "policy/entropy", min_points=WARMUP_STEPS + 10)):
        return nj
    steps, h = d.dense("policy/entropy")
    w = window_for(len(h), lo=5, hi=20)
    base = early_level(h, w)
    if not np.isfinite(base) or base <= 0:
        return NotJudged("entropy_collapse", "the early entropy level is not positive")
    if base < ENTROPY_NEAR_ZERO:
        return []  # near 0 from the start: nothing left to collapse; low_diversity reports that level
    med = rolling_median(h, w)
    low = episodes(med < ENTROPY_COLLAPSE_FRAC * base, min_len=3)
    if not low:
        return []
    i_low = low[0][0]
    above = np.nonzero(med[:i_low] >= 0.9 * base)[0]
    i_start = int(above[-1]) if len(above) else 0
    took = int(steps[i_low] - steps[i_start])
    now = float(np.nanmin(med[i_low:]))
    lowest = int(steps[i_low + int(np.nanargmin(med[i_low:]))])  # "fell to 0.053 in 21 steps" hid 300 more steps
    fast = took <= ENTROPY_FAST_STEPS
    severity = ("critical" if now < ENTROPY_SEVERE_FRAC * base else "warning") if fast else "info"
    ev = [evidence("policy/entropy", now, ENTROPY_COLLAPSE_FRAC * base, f"{w}-step median vs early level {fmt(base)}",
                   f"entropy fell from {fmt(base)} to below half of it in {took} steps "
                   f"({steps_text(steps[i_start], steps[i_low])}), and to {fmt(now)} ({fmt(100 * now / base)}% of its "
                   f"early level) by step {lowest}")]
    title = "Entropy collapses fast" if fast else "Entropy declined slowly below half its early level"
    if severity != "info" and facts.improving(d):
        # a policy locking in what the reward pays for: a note while the reward (or eval) still climbs
        severity, title = "info", "Entropy falls while the reward climbs"
    elif severity == "critical" and (rise := _rise_not_ruled_out(d)) is not None:
        severity = "warning"
        ev.append(rise)
    return [finding("entropy_collapse", severity, title, (int(steps[i_start]), int(steps[low[-1][1]])), ev,
                    C.ENTROPY, metrics=("policy/entropy",))]


def _rise_not_ruled_out(d: RunData):
    """Evidence that the reward may still be rising (its change interval over the run reaches a rise of
    facts.RISE_BAND of its spread), else None. A collapse is critical where the policy stopped learning; a rise too
    uncertain for `improving` (a log thinned to every 5th step holds a fifth of the points, and the interval widens)
    is not a stop either: a warning until the reward says which."""
    t = facts.reward_trend(d)
    if t is None:
        return None
    lo, hi = t.change_bounds
    scale = facts.reward_scale(d)[0]
    if not hi > facts.RISE_BAND * scale:
        return None
    return evidence(facts.REWARD, hi, facts.RISE_BAND * scale, "high end of the change's 95% bounds over the run",
                    f"the reward's change over the run is {fmt(lo)} .. {fmt(hi)} (95% bounds): a rise is not ruled "
                    "out, so the collapse may be the policy locking in what it learns")


def identical_group_frac(d: RunData) -> tuple[float, int] | None:
    """Fraction of (step, group)s whose responses are all the same text, over the last steps with samples."""
    s = d.sample_columns("step", "group", "completion")
    if s is None or not all(c in s for c in ("step", "group", "completion")):
        return None
    text_code, texts = pd.factorize(s["completion"].astype(object, copy=False), use_na_sentinel=False)
    if len(texts) == 1 and pd.isna(texts[0]):  # no texts at all
        return None
    return same_text_share(s["step"], s["group"], text_code)


def same_text_share(step: np.ndarray, group: np.ndarray, text_code: np.ndarray,
                    last_steps: int = 20) -> tuple[float, int] | None:
    """(share of groups whose responses are one text, groups counted) over the last `last_steps` steps.
    step, group: (N,) columns of the samples; text_code: (N,) int, a code per distinct text (a missing text
    has one of its own), as pd.factorize(texts, use_na_sentinel=False) gives. None when no row has a step and
    a group.

    Codes and np.unique over the arrays, not a pandas groupby + nunique nor a filtered frame: the live guard
    runs this at its checks right after a training step, where every pandas call costs several times its warm
    price (tests/diagnosis/test_rules_samples.py compares this with the groupby)."""
    ok = ~(pd.isna(step) | pd.isna(group))
    if not ok.any():
        return None
    if not ok.all():
        step, group, text_code = step[ok], group[ok], text_code[ok]
    steps, step_code = np.unique(step, return_inverse=True)
    if len(steps) > last_steps:
        keep = step_code >= len(steps) - last_steps
        step_code, group, text_code = step_code[keep] - (len(steps) - last_steps), group[keep], text_code[keep]
    group_code = pd.factorize(group)[0]
    n = int(text_code.max()) + 1
    # (step, group) -> one key below last_steps * N, and (key, text) -> one below last_steps * N**2: no overflow
    key = step_code.astype(np.int64) * (int(group_code.max()) + 1) + group_code
    per_group = np.bincount(np.unique(key * n + text_code) // n)
    counted = int(np.count_nonzero(per_group))
    return float(np.count_nonzero(per_group == 1) / counted), counted


def same_answer_everywhere(d: RunData, last_steps: int = 20) -> tuple[float, int, str, int] | None:
    """(median over the last steps of the share of a step's responses that are its most common text, the number
    of prompts that text answered at the last such step, the text, steps counted); None without step, prompt and
    completion texts. Steps with fewer than SAME_ANSWER_PROMPTS prompts are not counted."""
    s = d.sample_columns("step", "prompt", "completion")
    if s is None or not all(c in s for c in ("step", "prompt", "completion")):
        return None
    step, prompt, text = s["step"], s["prompt"], s["completion"]
    ok = ~(pd.isna(step) | pd.isna(prompt) | pd.isna(text))
    if not ok.any():
        return None
    step, prompt, text = step[ok], prompt[ok], text[ok]
    steps, step_code = np.unique(step, return_inverse=True)
    keep = step_code >= len(steps) - last_steps
    step_code, prompt_code = step_code[keep], pd.factorize(prompt[keep])[0]
    text_code, texts = pd.factorize(text[keep])
    shares, last = [], None
    for k in np.unique(step_code):
        at = step_code == k
        if len(np.unique(prompt_code[at])) < SAME_ANSWER_PROMPTS:
            continue
        counts = np.bincount(text_code[at])
        top = int(np.argmax(counts))
        shares.append(counts[top] / at.sum())
        last = (len(np.unique(prompt_code[at][text_code[at] == top])), str(texts[top]))
    if not shares:
        return None
    return float(np.median(shares)), last[0], last[1], len(shares)


@rule("low_diversity", "low entropy / low temperature: little in-group diversity", "low_diversity", recheck_rows=RECHECK_LONG)
def low_diversity(d: RunData):
    t = d.number("rollout.temperature", "temperature")
    ident = identical_group_frac(d)
    h = d.dense("policy/entropy")
    if t is None and ident is None and (h is None or len(h[1]) < 3):
        return NotJudged("low_diversity", "neither the sampling temperature, the entropy nor sample texts are "
                         "available")
    ev = []
    if h is not None and len(h[1]) >= 3:
        h0, hm = stats.first_level(h[1]), float(np.median(h[1]))
        if h0 < ENTROPY_NEAR_ZERO and hm < ENTROPY_NEAR_ZERO:
            ev.append(evidence("policy/entropy", hm, ENTROPY_NEAR_ZERO, "first level and median over the run",
                               f"entropy {fmt(h0)} nats at the first steps and {fmt(hm)} over the run: the policy "
                               "is nearly deterministic from the start, so a group's responses agree"))
    if t is not None and t[1] < LOW_TEMPERATURE:
        ev.append(evidence(f"config:{t[0]}", t[1], LOW_TEMPERATURE, "config",
                           f"sampling temperature {t[1]:g} < {LOW_TEMPERATURE}: a group's responses come out alike"))
    if ident is not None and ident[0] > IDENTICAL_GROUPS:
        ev.append(evidence("samples", ident[0], IDENTICAL_GROUPS, f"over {ident[1]} groups of the last steps",
                           f"{fmt(100 * ident[0])}% of groups answered with one identical text"))
    same = same_answer_everywhere(d)
    if same is not None and same[0] >= SAME_ANSWER_SHARE and same[1] >= SAME_ANSWER_PROMPTS:
        ev.append(evidence("samples", same[0], SAME_ANSWER_SHARE, f"median over the last {same[3]} steps with samples",
                           f"{fmt(100 * same[0])}% of a step's responses are one text, whatever the prompt: "
                           f"{same[2][:80]!r} answered {same[1]} different prompts at the last step (mode collapse)"))
    if not ev:
        return []
    for name in ("groups/zero_std_frac", "policy/entropy")[:2 - any(e.metric == "policy/entropy" for e in ev)]:
        x = d.dense(name)
        if x is not None and len(x[1]):
            ev.append(evidence(name, float(np.median(x[1])), None, "median", f"{name} median {fmt(float(np.median(x[1])))}"))
    rng = (int(d.steps[0]), int(d.steps[-1])) if d.n else None
    # Without a group baseline (PPO with GAE, REINFORCE) no advantage compares responses to one prompt: a policy
    # nearly deterministic from the start is worth knowing, no loss of signal (the samples would say more)
    grouped, said = facts.group_baseline(d)
    severity = "warning"
    if grouped is False and all(e.metric == "policy/entropy" for e in ev):
        severity = "info"
        ev.append(evidence(f"config:{said.split(' = ')[0]}", float("nan"), None, "config",
                           f"{said}: no group baseline, so alike responses take no signal away"))
    return [finding("low_diversity", severity, "Little in-group diversity (low temperature or entropy)", rng, ev,
                    (C.TEMPERATURE, C.DIVERSITY, C.EXPLORATION), metrics=("groups/zero_std_frac", "policy/entropy"))]
