"""A W&B chart exported as CSV from the web UI (a line plot's menu, "Export panel" then CSV): what people share
when they cannot share the project.

The layout: the x axis first (`Step`, wandb's own `_step`, unless the chart plots against another key such as
`train/global_step`), then for each run in the chart and each of its metrics a column `<run> - <metric>`, and
beside it `<run> - <metric>__MIN` and `<run> - <metric>__MAX` (the lowest and highest value of the points a
downsampled chart merged into one; the plain column is the value drawn). A cell is empty where that run logged
nothing at that x. One file holds one chart; a folder of such files (one per chart of the same runs) is read
as one run per run name, its charts' metrics side by side.

Targets: such a file, or a folder holding them; each run name is a launch (`TARGET#<run name>`).
"""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path

import numpy as np
import pandas as pd

from collectors.meta import RunError, RunMeta
from collectors.readers.folders import MAX_FILES, by_file_state, head_of
from collectors.readers.text.whole_files import WholeFilesRun, files_of
from collectors.run import Problem
from collectors.sources import launch_target, no_parts, register_source, split_launch

SUFFIX = ".csv"
_HEAD = 1 << 16
_COLUMN = re.compile(r"^(?P<run>.+?) - (?P<key>.+?)(?P<agg>__MIN|__MAX)?$")


def chart_columns(header: list[str]) -> dict[str, dict[str, str]] | None:
    """{run name: {metric key: column}} of a chart export's header (x axis first), or None when the header is no
    chart export: every column after the first is `<run> - <key>` with or without __MIN/__MAX, and at least one
    key has its __MIN or __MAX companion (what tells the export from any CSV with " - " in a name)."""
    if len(header) < 2 or not header[0].strip():
        return None
    runs: dict[str, dict[str, str]] = {}
    companions = 0
    for col in header[1:]:
        m = _COLUMN.match(col)
        if m is None:
            return None
        if m["agg"]:
            companions += 1
        else:
            runs.setdefault(m["run"], {})[m["key"]] = col
    return runs if runs and companions else None


def _header(path: str) -> list[str] | None:
    head = head_of(path, (SUFFIX,), _HEAD)
    if not head:
        return None
    line = head.split(b"\n", 1)[0].decode("utf-8-sig", "replace").rstrip("\r")
    try:
        return next(csv.reader([line]))
    except (csv.Error, StopIteration):
        return None


def _is_chart(path: str) -> bool:
    header = _header(path)
    return header is not None and chart_columns(header) is not None


is_chart = by_file_state(_is_chart)


def chart_files(target: str) -> list[Path]:
    """The chart exports a target names: the file itself, or the first MAX_FILES of a folder's, by name."""
    return files_of(target, SUFFIX, is_chart, MAX_FILES)


def launch_id(run: str) -> str:
    """A run name as a launch id: a `/` or `#` would split the target, so each becomes `_`."""
    return run.replace("/", "_").replace("#", "_")


def detect(target: str) -> bool:
    return bool(chart_files(target))


def list_launches(target: str) -> list[str]:
    runs: dict[str, None] = {}
    for f in chart_files(target):
        runs.update(dict.fromkeys(chart_columns(_header(str(f)) or []) or {}))
    return [launch_target(target, launch_id(r)) for r in runs]


class ChartCsvRun(WholeFilesRun):
    """One run of one or more chart exports (a chart export is a few thousand rows: read whole)."""

    changed = "a chart export changed; read again"

    def __init__(self, target: str) -> None:
        base, launch = split_launch(target)
        files = chart_files(base)
        if not files:
            raise RunError(f"{base}: no W&B chart export here (a CSV whose columns read '<run> - <metric>', "
                           "'<run> - <metric>__MIN', '<run> - <metric>__MAX')")
        names = {launch_id(r): r for f in files for r in chart_columns(_header(str(f)) or []) or {}}
        if launch is None and len(names) == 1:
            launch = next(iter(names))
        if launch not in names:
            raise RunError(f"{base}: no run {launch!r} in this chart export; runs: {', '.join(sorted(names))}")
        self.run_name = names[launch]
        super().__init__(base, RunMeta(run_id=launch, name=self.run_name, source="wandb-csv"), files)
        self.meta.info["launch"] = launch
        self._start()

    def _frame(self, path: Path) -> pd.DataFrame | None:
        """Step and this run's metric columns (named by their keys) of one export; None when it has none. A row
        whose cells do not match the header is named and left out; the rest of the chart is read."""
        try:
            text = path.read_text(encoding="utf-8-sig", errors="replace")
        except OSError as e:
            self._note(Problem(path.name, f"cannot be read ({e.strerror or 'I/O error'}); left out"))
            return None
        try:
            rows = list(csv.reader(io.StringIO(text, newline="")))
        except csv.Error as e:  # a NUL byte, a field past the csv module's size limit
            self._note(Problem(path.name, f"not CSV as the chart export writes it ({e}); left out"))
            return None
        keys = (chart_columns(rows[0]) or {}).get(self.run_name) if rows else None
        if not keys:
            return None
        width = len(rows[0])
        bad = [i + 1 for i, r in enumerate(rows[1:], start=1) if len(r) != width and any(c.strip() for c in r)]
        if bad:
            shown = ", ".join(map(str, bad[:3])) + (f" and {len(bad) - 3} more" if len(bad) > 3 else "")
            self._note(Problem(path.name, f"line {shown}: not {width} cells as the header has; left out"))
        body = [r for r in rows[1:] if len(r) == width]
        frame = pd.DataFrame(body, columns=rows[0], dtype=object)
        x = rows[0][0]
        steps = pd.to_numeric(frame[x].replace("", np.nan), errors="coerce") if len(frame) else pd.Series(dtype=float)
        whole = steps.dropna()
        if len(whole) and not np.all(whole == np.round(whole)):
            self._note(Problem(path.name, f"the x axis is {x!r}, not a step (fractional values); export the chart "
                                          "with Step (or the trainer's global step) as its x axis; left out"))
            return None
        if x != "Step":
            self.meta.info["step_axis"] = x
        out = pd.DataFrame({"step": steps})
        for key, col in keys.items():
            out[key] = frame[col].replace("", np.nan)
        # a row where this run logged none of the chart's metrics is another run's x, not a step of this one
        return out.dropna(subset=["step"]).dropna(subset=list(keys), how="all")


register_source("wandb-csv", detect=detect, priority=5, launches=list_launches, parts=no_parts, hints={
    "samples": "a chart export holds the charted metrics only, no responses; the run's folder (wandb/run-*) or "
               "collectors.trl.GrpoScopeCallback keeps them.",
    "config": "a chart export holds no config; open the run's folder (wandb/run-*, its config.yaml) instead, or "
              "put the config beside the CSV as config*.yaml.",
})(ChartCsvRun)
