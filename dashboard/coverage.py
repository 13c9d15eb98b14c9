"""What a run holds and what it lacks, so pages say "not logged by this source, and how to get it"
instead of drawing empty charts. Pure: a run (or its parts) in, panels and sentences out; no streamlit.

Imported runs are often partial: TensorBoard has no samples, verl's logs no config, TRL no pass rate.
Each reader registers a hint for what its source lacks (`collectors.sources.missing_hint`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from collectors.sources import missing_hint
from dashboard.charts import Panel, panel_short
from dashboard.diagnosis import i18n


def missing_message(source: str, what: str, lang: str = "en") -> str:
    """One sentence for a run of `source` without `what` ("samples" or "config"), with the source's hint
    (in `lang` where the catalog has it)."""
    hint = missing_hint(source, what)
    hint = i18n.hint(source, what, hint, lang) if hint else i18n.label("missing_no_hint", lang)
    key = f"missing_{what}" if f"missing_{what}" in i18n.en.LABELS else "missing_other"
    return i18n.label(key, lang, source=source or i18n.label("unknown", lang), what=what, hint=hint)


def has_data(frame: pd.DataFrame, column: str) -> bool:
    """The column exists and holds at least one value (a column of nulls was never really logged)."""
    return column in frame and bool(np.any(pd.notna(frame[column].to_numpy())))


def panel_has_data(frame: pd.DataFrame, panel: Panel) -> bool:
    return any(has_data(frame, s.column) for s in panel.series)


def split_panels(frame: pd.DataFrame, panels: tuple[Panel, ...]) -> tuple[tuple[Panel, ...], tuple[Panel, ...]]:
    """(panels with any logged series, panels with none), each in checklist order."""
    drawn = tuple(p for p in panels if panel_has_data(frame, p))
    return drawn, tuple(p for p in panels if p not in drawn)


def missing_panels_message(source: str, missing: tuple[Panel, ...], any_steps: bool,
                           lang: str = "en") -> str | None:
    """The line under the charts naming the checklist charts this run cannot fill, or None."""
    if not missing or not any_steps:
        return None
    names = i18n.label("list_comma", lang).join(panel_short(p, lang) for p in missing)
    return i18n.label("missing_panels", lang, source=source or i18n.label("unknown", lang), names=names)
