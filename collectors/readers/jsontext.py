"""JSON text from logs and event files, read so that what is wrong with it is said in words.

`json.loads` has three ways to fail that are not a JSONDecodeError, and one to succeed with a text nothing
downstream can hold:
- an integer of more than 4,300 digits (`sys.get_int_max_str_digits`) is a ValueError ("Exceeds the limit");
- nesting deeper than the interpreter recurses is a RecursionError;
- bytes that are not UTF-8 are a UnicodeDecodeError;
- a lone surrogate escape (`"\\ud800"`, valid JSON) becomes a str that cannot be encoded as UTF-8: pyarrow,
  pandas' string columns and every file writer then fail on it.

`loads` reads an integer past the limit as a signed infinity (for metrics: "numbers beyond float are kept as
signed infinity"), or as `TOO_LONG` for a config (`config_values` then skips the key holding it), turns the
other failures into `JsonProblem` with a message in words, and replaces each lone surrogate by U+FFFD,
counting them. `config_values` reads a config document: the keys whose value cannot be kept (too long a
number, nested deeper than MAX_CONFIG_DEPTH) are skipped, each named in a note.
"""

from __future__ import annotations

import json
import math
import re
import sys
from collections.abc import Callable
from typing import Any

# the longest integer text int() converts (0: no limit, as before Python 3.11)
MAX_DIGITS = getattr(sys, "get_int_max_str_digits", lambda: 0)() or 4300
MAX_CONFIG_DEPTH = 32  # deeper than any trainer's config; flattening past it only makes keys of a page long
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")  # a surrogate escape, paired or not (pairs are checked after)
_LONE = re.compile("[\ud800-\udfff]")  # after decoding, a surrogate left in a str is a lone one


class JsonProblem(ValueError):
    """A JSON text that cannot be read; str(e) says why in words (no Python exception text)."""


class _TooLong:
    """Where a config held an integer of more than MAX_DIGITS digits."""

    def __init__(self, digits: int) -> None:
        self.digits = digits

    def __repr__(self) -> str:
        return f"<integer of {self.digits:,} digits>"


def _infinite(text: str) -> float:
    return -math.inf if text.startswith("-") else math.inf


def _int_as(too_long: Callable[[str], Any]) -> Callable[[str], Any]:
    def parse_int(text: str) -> Any:
        return int(text) if len(text) <= MAX_DIGITS else too_long(text)

    return parse_int


_PARSE_INT_INF = _int_as(_infinite)
_PARSE_INT_MARK = _int_as(lambda text: _TooLong(len(text.lstrip("-"))))


def words(e: BaseException) -> str:
    """What a failure of json.loads says about the text, in words: "not valid JSON (Expecting value at
    character 1)", "nested deeper than about 1,000 levels", "bytes that are not UTF-8 (byte 12)", ..."""
    if isinstance(e, RecursionError):
        return f"nested deeper than about {sys.getrecursionlimit():,} levels"
    if isinstance(e, UnicodeDecodeError):
        return f"bytes that are not UTF-8 (byte {e.start + 1:,})"
    if isinstance(e, json.JSONDecodeError):
        where = f"line {e.lineno}, column {e.colno}" if e.lineno > 1 else f"character {e.pos + 1:,}"
        at = " " if e.msg.endswith(" at") else " at "  # "Unterminated string starting at"
        return f"not valid JSON ({e.msg}{at}{where})"
    if isinstance(e, ValueError) and "digits" in str(e):  # a number text too long for int() that the hook missed
        return f"a number of more than {MAX_DIGITS:,} digits"
    return "not valid JSON"


def loads(text: str | bytes, too_long: str = "infinity") -> tuple[Any, int]:
    """(the parsed value, how many lone surrogates were replaced by U+FFFD); JsonProblem when it is no JSON.

    too_long: what an integer of more than MAX_DIGITS digits becomes: "infinity" (signed; a metric) or
    "mark" (a `_TooLong`, which `config_values` skips with a note)."""
    try:
        if isinstance(text, bytes):
            text = text.decode("utf-8")
        value = json.loads(text, parse_int=_PARSE_INT_INF if too_long == "infinity" else _PARSE_INT_MARK)
    except (ValueError, RecursionError) as e:  # JSONDecodeError and UnicodeDecodeError are ValueErrors
        raise JsonProblem(words(e)) from None
    if not _SURROGATE_ESCAPE.search(text):
        return value, 0
    return replace_surrogates(value)


def has_surrogate_escape(text: str) -> bool:
    """Whether JSON text holds a surrogate escape (`\\ud800`; paired or not: a pair is one character)."""
    return _SURROGATE_ESCAPE.search(text) is not None


def replace_surrogates(value: Any) -> tuple[Any, int]:
    """`value` with each lone surrogate in a str (a key or a text, at any depth) as U+FFFD; and how many."""
    count = 0

    def fix(s: str) -> str:
        nonlocal count
        new, n = _LONE.subn("\ufffd", s)
        count += n
        return new

    if isinstance(value, str):
        return fix(value), count
    if not isinstance(value, (dict, list)):
        return value, 0
    root = [value]
    stack: list[tuple[Any, Any]] = [(root, 0)]  # (container, key or index of the node to fix), no recursion
    while stack:
        parent, at = stack.pop()
        node = parent[at]
        if isinstance(node, str):
            parent[at] = fix(node)
        elif isinstance(node, list):
            stack += [(node, i) for i, v in enumerate(node) if isinstance(v, (str, list, dict))]
        elif isinstance(node, dict):
            if any(_LONE.search(k) for k in node):
                node = parent[at] = {fix(k): v for k, v in node.items()}
            stack += [(node, k) for k, v in node.items() if isinstance(v, (str, list, dict))]
    return root[0], count


def depth(value: Any, limit: int) -> int:
    """How deep `value` nests (a scalar: 0), counted no further than limit + 1; no recursion."""
    deepest, stack = 0, [(value, 0)]
    while stack:
        node, d = stack.pop()
        if isinstance(node, (dict, list)):
            d += 1
            deepest = max(deepest, d)
            if d > limit:
                return d
            stack += [(v, d) for v in (node.values() if isinstance(node, dict) else node)]
    return deepest


def _too_long(value: Any) -> _TooLong | None:
    """The first integer too long to keep inside `value` (a config value of bounded depth), or None."""
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, _TooLong):
            return node
        if isinstance(node, dict):
            stack += node.values()
        elif isinstance(node, list):
            stack += node
    return None


def shown(key: str, limit: int = 80) -> str:
    """A key as a note names it: quoted, cut to `limit` characters."""
    return repr(key if len(key) <= limit else key[: limit - 3] + "...")


def config_values(config: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """A parsed config (from `loads(..., too_long="mark")`) without the keys whose value cannot be kept, and a
    note for each: "config key 'a.b': a number of 5,000 digits (more than 4,300); skipped". A value nested deeper
    than MAX_CONFIG_DEPTH goes whole; a too long number is looked for down the objects holding it, so its
    siblings stay."""
    notes: list[str] = []

    def clean(node: dict[str, Any], prefix: str) -> dict[str, Any]:
        out = {}
        for k, v in node.items():
            name = f"{prefix}{k}"
            if depth(v, MAX_CONFIG_DEPTH) > MAX_CONFIG_DEPTH:
                notes.append(f"config key {shown(name)}: nested more than {MAX_CONFIG_DEPTH} levels deep; skipped")
            elif (bad := _too_long(v)) is None:
                out[k] = v
            elif isinstance(v, dict):  # bounded: only values no deeper than MAX_CONFIG_DEPTH get here
                out[k] = clean(v, f"{name}.")
            else:
                notes.append(f"config key {shown(name)}: a number of {bad.digits:,} digits (more than {MAX_DIGITS:,}); "
                             "skipped")
        return out

    return clean(config, ""), notes


def read_config(text: str | bytes) -> tuple[dict[str, Any] | None, list[str]]:
    """A config given as one JSON document (TensorBoard's `args` text): (its keys that can be kept, notes),
    or (None, [why]) when it is no JSON object at all."""
    try:
        value, replaced = loads(text, too_long="mark")
    except JsonProblem as e:
        return None, [str(e)]
    if not isinstance(value, dict):
        return None, [f"a JSON {type(value).__name__}, not an object of settings"]
    config, notes = config_values(value)
    if replaced:
        notes.append(f"{replaced} lone surrogate(s) (text no UTF-8 can hold) replaced by U+FFFD")
    return config, notes


ARROW_DEPTH = 1000  # past this a line goes to `json` line by line, which skips it by number (as it does past ~1,000)


def too_deep_for_arrow(block: bytes, limit: int = ARROW_DEPTH) -> bool:
    """Whether a line of a JSON-lines block may nest deeper than `limit`. pyarrow's JSON reader overflows its
    stack on nesting of some 20,000 levels and the process dies (a segmentation fault: nothing to catch), so
    such a block must never reach it. Cheap on ordinary logs: a count of brackets, then only lines long enough
    to hold `limit` of them are looked at."""
    if block.count(b"[") + block.count(b"{") <= limit:
        return False
    for line in block.split(b"\n"):
        if len(line) > limit and line.count(b"[") + line.count(b"{") > limit and _bracket_depth(line) > limit:
            return True
    return False


def _bracket_depth(line: bytes) -> int:
    """The deepest nesting of brackets in `line` (brackets inside strings counted too: an over-estimate)."""
    import numpy as np

    step = np.zeros(256, dtype=np.int8)
    step[[ord("["), ord("{")]] = 1
    step[[ord("]"), ord("}")]] = -1
    return int(np.cumsum(step[np.frombuffer(line, dtype=np.uint8)], dtype=np.int32).max(initial=0))
