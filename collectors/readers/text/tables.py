"""Parsed blocks of rows as frames: pyarrow tables (JSONL and CSV blocks) and Python dicts (a JSON list, the
line-by-line fallback), nested objects flattened to `a.b`, with where a NaN was logged kept apart from a null.
Used by the generic rows reader and verl's JSONL dumps."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from collectors.readers.text import responses


def arrow_columns(table: pa.Table) -> tuple[pd.DataFrame, dict[str, np.ndarray]]:
    """A parsed block -> (frame of flat columns, {column: logged-NaN mask}); structs flattened to `a.b`."""
    while any(pa.types.is_struct(t) for t in table.schema.types):
        table = table.flatten()
    nans = {}
    for name, col in zip(table.column_names, table.columns, strict=True):
        if pa.types.is_floating(col.type):
            mask = pc.fill_null(pc.is_nan(col), False).to_numpy(zero_copy_only=False)
            if mask.any():
                nans[name] = mask
    names, cols = [], []
    for name, col in zip(table.column_names, table.columns, strict=True):
        t = col.type
        if pa.types.is_list(t) or pa.types.is_large_list(t):
            if responses.is_reward_name(name):  # each response's reward: responses.expand reads the groups
                names.append(name)
                cols.append(pd.Series(col.to_pylist(), dtype=object))
            continue  # else a histogram or a list of token ids: no step metric
        names.append(name)
        if pa.types.is_floating(t) or pa.types.is_integer(t) or pa.types.is_boolean(t) or pa.types.is_null(t):
            # straight to a float array (a null is NaN; the NaN masks above tell them apart)
            cols.append(pc.cast(col, pa.float64()).to_numpy(zero_copy_only=False) if not pa.types.is_null(t)
                        else np.full(len(col), np.nan))
        else:
            cols.append(col.to_pandas())
    if len(set(names)) == len(names):
        return pd.DataFrame(dict(zip(names, cols, strict=True)), copy=False), nans
    # `{"a": {"b": 1}, "a.b": 2}` flattens to two columns `a.b`: both kept here, TextRun._emit makes them one
    frame = pd.DataFrame(dict(enumerate(cols)), copy=False)
    frame.columns = names
    return frame, nans


def records(rows: list[dict[str, Any]]) -> tuple[pd.DataFrame, dict[str, np.ndarray]]:
    """Python dicts -> (frame, {column: logged-NaN mask}); nested dicts flattened with `.` as pyarrow does.

    The NaN masks are taken before the frame exists: in a float column a NaN and a null (None) look alike.
    """
    if any(isinstance(v, dict) for r in rows[:50] for v in r.values()):
        frame = pd.json_normalize(rows, sep=".")
    else:
        frame = pd.DataFrame.from_records(rows)
    nans = {}
    for col in frame.columns:
        if frame[col].dtype.kind == "f" and frame[col].isna().any():
            mask = _nan_mask(rows, col, len(frame))
            if mask.any():
                nans[col] = mask
    return frame, nans


def _nan_mask(rows: list[dict[str, Any]], col: str, n: int) -> np.ndarray:
    path = col.split(".") if col not in rows[0] and "." in col else [col]
    out = np.zeros(n, dtype=bool)
    for i, r in enumerate(rows):
        v: Any = r
        for part in path:
            v = v.get(part) if isinstance(v, dict) else None
        out[i] = isinstance(v, float) and math.isnan(v)
    return out
