"""Configs side by side (the Compare page): the keys whose values differ between runs, values as text."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def config_diff(configs: Mapping[str, Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Rows {key, <run>: value, ...} for every key whose value differs (or is missing) between runs."""
    keys = sorted(set().union(*[c.keys() for c in configs.values()])) if configs else []
    rows = []
    for k in keys:
        values = {name: c.get(k, "(absent)") for name, c in configs.items()}
        if len({repr(v) for v in values.values()}) > 1:
            rows.append({"key": k, **{name: display(v) for name, v in values.items()}})
    return rows


def display(v: Any) -> str:
    return v if isinstance(v, str) else repr(v)
