"""Verifiers: (completion text, reference answer) -> Score(reward, passed).

Registered by name; `resolve("pkg.mod:fn")` loads a user's function instead. A verifier may return a
Score, a (reward, passed) pair, a bool (reward 1 or 0) or a number (passed when it is > 0), so a plain
`def check(completion, answer) -> bool` is enough. Binary rewards are the default, as in the notes.
"""

from __future__ import annotations

import importlib
import math
import re
from collections.abc import Callable
from dataclasses import dataclass

from grpo_core.registry import Registry


@dataclass(frozen=True)
class Score:
    reward: float
    passed: bool


Verifier = Callable[[str, str], Score]
VERIFIERS: Registry = Registry("verifier")

_NUMBER = re.compile(r"-?\d[\d,]*(?:\.\d+)?|-?\.\d+")


def _to_number(text: str) -> float | None:
    try:
        return float(text.strip().replace(",", ""))
    except ValueError:
        return None


def _same_number(a: float | None, b: float | None) -> bool:
    return a is not None and b is not None and math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9)


@VERIFIERS.register("exact")
def exact(completion: str, answer: str) -> bool:
    """Equal after stripping surrounding whitespace."""
    return completion.strip() == answer.strip()


@VERIFIERS.register("numeric")
def numeric(completion: str, answer: str) -> bool:
    """The whole completion parses as the answer's number (commas allowed: 1,000 == 1000)."""
    return _same_number(_to_number(completion), _to_number(answer))


@VERIFIERS.register("regex")
def regex(completion: str, answer: str) -> bool:
    """The answer is a regular expression the stripped completion must match in full."""
    return re.fullmatch(answer, completion.strip()) is not None


def last_number(text: str) -> float | None:
    """The last number written in a text, as in GSM8K ("... so the answer is #### 1,234" -> 1234)."""
    found = _NUMBER.findall(text)
    return _to_number(found[-1]) if found else None


@VERIFIERS.register("last_number")
def last_number_match(completion: str, answer: str) -> bool:
    """The last number of the completion equals the last number of the answer."""
    return _same_number(last_number(completion), last_number(answer))


@VERIFIERS.register("broken_padded_exact")
def broken_padded_exact(completion: str, answer: str) -> bool:
    """FAULT for teaching/testing: compares the raw completion with " " + answer, as if the reference had
    kept the space after "=" of its source line. Every correct answer fails; a wrong answer still fails
    (nothing is accepted unless the model writes a leading space, which the warm start never taught)."""
    return completion == f" {answer.strip()}"


@VERIFIERS.register("length_bonus")
def length_bonus(completion: str, answer: str) -> Score:
    """FAULT for teaching/testing: an exploitable reward. Passed when the completion STARTS with the answer;
    reward 1 plus 0.25 per extra character (up to 4), so trailing text pays while `exact` rejects it."""
    text, ans = completion.strip(), answer.strip()
    passed = text.startswith(ans)
    return Score((1.0 + 0.25 * min(4, len(text) - len(ans))) if passed else 0.0, passed)


def as_score(value) -> Score:
    if isinstance(value, Score):
        return value
    if isinstance(value, tuple):
        reward, passed = value
        return Score(float(reward), bool(passed))
    if isinstance(value, bool):
        return Score(float(value), value)
    return Score(float(value), float(value) > 0)


def resolve(name: str) -> Verifier:
    """A registered name, or "module:function" importable from the current environment."""
    if ":" in name:
        module, _, attr = name.partition(":")
        try:
            fn = getattr(importlib.import_module(module), attr)
        except (ImportError, AttributeError) as e:
            raise ValueError(f"verifier {name!r} cannot be loaded: {e}") from None
    else:
        if name not in VERIFIERS:
            raise ValueError(VERIFIERS.unknown(name))
        fn = VERIFIERS[name]
    return lambda completion, answer: as_score(fn(completion, answer))
