"""SwanLab text media as samples: the validation generations verl's swanlab logger writes.

Read in swanlab 0.10.3 (swanlab/proto/swanlab/metric/data/v1, sdk/internal/run/transforms/text,
sdk/internal/pkg/adapter): a media record (Record field 14) is a MediaRecord (key 1, step 2, type 3: a ColumnType,
4 text and 6 echarts, timestamp 4, value 5), its value a MediaValue whose items (1) are MediaItems (filename 1,
sha256 2, size 3, caption 4, payload 5). The content is the payload when the run kept none on disk, else the file
`media/<text|echarts>/<filename>` in the run folder (`002-<sha256[:8]>.txt`, `.json` for echarts).

verl's ValidationGenerationsLogger (verl/utils/tracking.py) logs `val/generations` at each validation in one of two
shapes, by version: one swanlab.Text per sample, `input: ...\\n\\n---\\n\\noutput: ...\\n\\n---\\n\\nscore: ...`
(older ones indent each line), or one swanlab.echarts.Table with headers step, input, output, score, which swanlab
keeps as JSON `{"_swanLab": "table", "colDefs": [...], "rowData": [{"step":..,"input":..,...}]}`. Either gives
(input, output, score) records per step; any other text is not a sample.
"""

from __future__ import annotations

import json
import math
import re
import textwrap
from pathlib import Path

MEDIA = 14  # Record's oneof field
TEXT, ECHARTS = 4, 6  # swanlab.metric.column.v1.ColumnType
MEDIUM = {TEXT: "text", ECHARTS: "echarts"}  # the folder under media/ (adapter.medium)
# verl's text: sections split by a line holding only `---`, each `name: value` (lines possibly indented)
_SECTION = re.compile(r"^\s*-{3}\s*$", re.MULTILINE)
_FIELD = re.compile(r"^\s*(input|output|score):[ \t]?(.*)\Z", re.DOTALL)
# the most of one media file read: verl's generations are a few KB per sample; a file past this is no sample
MAX_MEDIA_BYTES = 16 << 20

Record = tuple[str, str | None, float]  # (input, output, score)


def media_items(msg: dict[int, list]) -> tuple[str, int, int, list[tuple[str, bytes | None]]]:
    """A MediaRecord's (key, step, type, [(filename, payload or None), ...]); ValueError when it is none."""
    from collectors.readers.protowire import fields

    key, step, kind = msg.get(1, [b""])[-1], msg.get(2, [0])[-1], msg.get(3, [0])[-1]
    if not isinstance(key, bytes) or not key or not isinstance(step, int) or not isinstance(kind, int):
        raise ValueError("a media record without a key")
    if step >= 1 << 63:
        step -= 1 << 64
    items = []
    value = msg.get(5, [b""])[-1]
    for raw in fields(value).get(1, []) if isinstance(value, bytes) else []:
        item = fields(raw) if isinstance(raw, bytes) else {}
        name = item.get(1, [b""])[-1]
        payload = item.get(5, [None])[-1]
        items.append((name.decode("utf-8", "replace") if isinstance(name, bytes) else "",
                      payload if isinstance(payload, bytes) else None))
    return key.decode("utf-8", "replace"), step, kind, items


def item_content(folder: Path, kind: int, name: str, payload: bytes | None) -> str | None:
    """The item's text: its payload, else `media/<medium>/<name>` of the run folder; None when absent, unreadable,
    larger than MAX_MEDIA_BYTES, or named as no plain file name (a path climbing out of the folder)."""
    if payload is not None:
        return payload.decode("utf-8", "replace")
    if kind not in MEDIUM or not name or Path(name).name != name or name in (".", ".."):
        return None
    path = folder / "media" / MEDIUM[kind] / name
    try:
        with path.open("rb") as fh:
            data = fh.read(MAX_MEDIA_BYTES + 1)
    except OSError:
        return None
    return data.decode("utf-8", "replace") if len(data) <= MAX_MEDIA_BYTES else None


def text_record(text: str) -> Record | None:
    """verl's `input: ... --- output: ... --- score: ...` as (input, output, score); None for other text."""
    got: dict[str, str] = {}
    for section in _SECTION.split(text):
        if m := _FIELD.match(section.strip("\n")):
            got[m[1]] = _dedent(m[2])
    if "input" not in got or "output" not in got:
        return None
    return got["input"], got["output"], _score(got.get("score"))


def table_records(text: str) -> list[tuple[int | None, Record]]:
    """swanlab's echarts table JSON as [(step or None, (input, output, score)), ...]; [] for other JSON."""
    try:
        doc = json.loads(text)
    except (ValueError, RecursionError):
        return []
    rows = doc.get("rowData") if isinstance(doc, dict) and doc.get("_swanLab") == "table" else None
    out = []
    for row in rows if isinstance(rows, list) else []:
        if isinstance(row, dict) and "input" in row and "output" in row:
            step = row.get("step")
            step = step if isinstance(step, int) and not isinstance(step, bool) else None
            out.append((step, (str(row["input"]), None if row["output"] is None else str(row["output"]),
                               _score(row.get("score")))))
    return out


def _score(value: object) -> float:
    """A logged score as a float (NaN when missing or no number, as an unscored sample)."""
    try:
        score = float(value.strip() if isinstance(value, str) else value)  # type: ignore[arg-type]
    except (TypeError, ValueError, OverflowError):
        return math.nan
    return score


def _dedent(text: str) -> str:
    """A section's value without the indentation verl's older f-string gave every line, nor trailing blanks."""
    first, _, rest = text.rstrip().partition("\n")
    return (first.strip() + "\n" + textwrap.dedent(rest)).strip()
