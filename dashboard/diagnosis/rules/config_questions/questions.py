"""The notes' five configuration questions (section 6), the shape of an answer, and what every framework's
reader shares: a lookup by key or dotted suffix that records the keys it read, and readings of values."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

QUESTIONS = (
    "Is the advantage normalised per prompt group, over the whole batch, or without dividing by the std?",
    "Is the ratio per token or sequence-level? Is the loss averaged over tokens first or over responses first?",
    "Do the old log-probs saved by the rollout engine agree with the training side?",
    "Is the KL added directly outside the objective, folded into the reward, or not used at all?",
    "After several epochs, how stale are the rollouts?",
)
UNKNOWN = "unknown"


@dataclass(frozen=True)
class Answer:
    number: int  # 1..5, as in the notes
    question: str
    answer: str  # UNKNOWN when the config does not say
    keys: tuple[str, ...]  # the config keys the answer was read from

    @property
    def known(self) -> bool:
        return self.answer != UNKNOWN


LOG_KEY = "log: "  # how a metric read from the run's log is named among an answer's keys


class Lookup:
    """Find a setting by its name or by a dotted suffix of its key (`args.beta` matches `beta`), and a metric in
    the run's log (where the config does not say, what the framework logged may)."""

    def __init__(self, config: Mapping[str, Any], log: Any = None) -> None:
        self.config = dict(config)
        self.log = log  # the run's metrics (a DataFrame: one column a metric), or None when not given
        self.used: list[str] = []

    def key(self, *names: str) -> str | None:
        for name in names:
            if name in self.config:
                return name
            for k in self.config:
                if k.endswith("." + name):
                    return k
        return None

    def get(self, *names: str, default: Any = None) -> Any:
        k = self.key(*names)
        if k is None:
            return default
        self.used.append(k)
        return self.config[k]

    def logged(self, name: str) -> list[float] | None:
        """The finite values the log has for metric `name` (in step order); None when it has none."""
        if self.log is None or name not in getattr(self.log, "columns", ()):
            return None
        values = [f for f in map(_float, self.log[name]) if f is not None and math.isfinite(f)]
        if not values:
            return None
        self.used.append(LOG_KEY + name)
        return values

    def take_used(self) -> tuple[str, ...]:
        used, self.used = tuple(dict.fromkeys(self.used)), []
        return used


Reader = tuple[Callable[[Lookup], str], ...]  # one function per question, in QUESTIONS' order


def _float(v: Any) -> float | None:
    try:
        return float(v)
    except (TypeError, ValueError):
        return None


def truthy(v: Any) -> bool | None:
    """A config flag as True / False ("yes", "0", 1.0, "none", ...); None when unset or unreadable."""
    if isinstance(v, bool) or v is None:
        return v
    if isinstance(v, (int, float)):
        return bool(v)
    s = str(v).strip().lower()
    return {"true": True, "1": True, "yes": True, "false": False, "0": False, "no": False, "none": False}.get(s)


def num(v: Any) -> float:
    """A config number as a float; 0.0 when unset or not a number, so an unset size reads as "off"."""
    try:
        return float(v)
    except (TypeError, ValueError):
        return 0.0


def reuse_text(epochs: Any, minibatches: Any) -> str:
    """How stale the rollouts get, in words: `epochs` x `minibatches` optimizer steps per rollout (unset: 1)."""
    try:
        e, m = int(epochs if epochs is not None else 1), int(minibatches if minibatches is not None else 1)
    except (TypeError, ValueError):
        return f"epochs={epochs}, minibatches={minibatches}"
    n = e * m
    if n <= 1:
        return "one optimizer step per rollout: fully on-policy"
    return (f"{n} optimizer steps per rollout ({e} epoch(s) x {m} minibatch(es)); only the first is on-policy, "
            f"the last uses rollouts {n - 1} update(s) old")
