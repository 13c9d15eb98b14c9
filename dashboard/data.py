"""The app's data layer: the only module with Streamlit caches. Pages ask here and draw.

Runs are opened once per server (st.cache_resource) and kept: every rerun calls `refresh()`, which reads
only the part files that are new, so a live run costs one part read per new flush, not a reread.
Discovery and diagnoses are cached as data (st.cache_data) keyed by what changes them.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import streamlit as st

from collectors import RunError, discover_runs, open_run
from collectors.discovery import link_refusal
from collectors.meta import STALE_AFTER_S
from collectors.run import RunInfo
from collectors.sources import infos_for, split_launch
from dashboard import paths
from dashboard.live_diagnosis import LatestDiagnosis

STALE_ENV = paths.STALE_ENV
RUN_COLUMNS = ["key", "name", "source", "status", "last_step", "last_update", "root", "path", "error", "phase"]


def roots() -> list[paths.Root]:
    return paths.roots_from_env()


def stale_after_s() -> float:
    try:
        return float(os.environ.get(STALE_ENV, STALE_AFTER_S))
    except ValueError:
        return STALE_AFTER_S


# Every cache is bounded in entries and, where its key is a run version (new on each refresh of a live run),
# in time: ten pages on a live run would otherwise keep every version's diagnosis and samples copy.
VERSION_TTL_S = 300


@st.cache_data(ttl=2.0, show_spinner=False, max_entries=16)
def runs_table(root_list: tuple[tuple[str, str], ...], stale_s: float, source: str | None = None) -> pd.DataFrame:
    """Every run under the roots (label, path), one row each, newest update first. With `source`, each root
    is one run read by that reader (its launches, one row each), nothing is discovered inside it.

    Nothing outside the roots is read to list a run (collectors.discovery); an entry that cannot be listed is
    a row saying why, never an exception."""
    rs = [paths.Root(label, Path(p)) for label, p in root_list]
    inside = [r.path for r in rs]
    rows = []
    for root in rs:
        for info in _forced_infos(root.path, stale_s, source, inside) if source else discover_runs(
                root.path, stale_after_s=stale_s, open_foreign=_kept_run, inside=inside):
            try:
                key, error = paths.run_key(rs, info.path), info.error
            except paths.PathRefused as e:  # not reached by discovery's own paths; a row all the same
                key, error = f"{root.label}/{Path(info.path).name}", str(e)
            rows.append({"key": key, "name": info.name, "source": info.source,
                         "status": info.status, "last_step": info.last_step, "last_update": info.last_update,
                         "root": root.label, "path": str(info.path), "error": error, "phase": info.phase})
    frame = pd.DataFrame(rows, columns=RUN_COLUMNS)
    return frame.sort_values("last_update", ascending=False, na_position="last", kind="stable").reset_index(drop=True)


def _forced_infos(path: Path, stale_s: float, source: str, inside: list[Path]) -> list[RunInfo]:
    try:
        if path.is_dir() and (why := link_refusal(path, inside, source)) is not None:
            return [RunInfo(path, path.name, source, "unknown", None, None, f"{why}; this run is not read")]
        return infos_for(path, stale_s, _kept_run, source=source) or []
    except RunError as e:  # an unknown reader name: one line that says so
        return [RunInfo(path, path.name, source, "unknown", None, None, str(e))]


def all_runs() -> pd.DataFrame:
    return runs_table(tuple((r.label, str(r.path)) for r in roots()), stale_after_s(), paths.forced_source())


def source_for(path: str) -> str | None:
    """The reader forced by grpo-dash --source on `path` (a root, or a launch or file the reader named in
    it), else None."""
    source = paths.forced_source()
    if source is None:
        return None
    base = Path(split_launch(path)[0]).resolve()
    return source if any(base == r.path or base.parent == r.path for r in roots()) else None


class LiveRun:
    """A Run kept open across reruns and sessions; refresh() is serialised by a lock."""

    def __init__(self, path: str) -> None:
        self.lock = threading.Lock()
        self.run = open_run(path, source_for(path))
        self.latest = LatestDiagnosis(self._diagnose)  # the Live page's (dashboard/live_diagnosis.py)
        self.figures: dict[tuple, LatestDiagnosis] = {}  # the Live page's figure, by (panels, language)
        if STALE_ENV in os.environ:  # else keep the reader's own guess (an online wandb run waits longer)
            self.run.stale_after_s = stale_after_s()

    def refresh(self) -> int:
        with self.lock:
            return self.run.refresh()

    def _diagnose(self):
        from dashboard.diagnosis import diagnose

        return diagnose(self.run)


@st.cache_resource(show_spinner=False, max_entries=64)
def _live(path: str) -> LiveRun:
    return LiveRun(path)


def _kept_run(path: Path):
    """The open run the pages use, refreshed: discovery reads a foreign run through it, not a second copy."""
    live = _live(str(path))
    live.refresh()
    return live.run


@dataclass(frozen=True)
class Snapshot:
    run: object  # collectors.Run
    metrics: pd.DataFrame  # do not mutate: shared with the run
    new_rows: int
    version: tuple  # changes whenever the metrics or the status change


def snapshot(path: str | Path) -> Snapshot:
    """The run at `path`, refreshed (new parts only). Raises RunError when it cannot be opened."""
    live = _live(str(path))
    new = live.refresh()
    run = live.run
    frame = run.metrics
    last = int(frame["step"].iloc[-1]) if len(frame) else None
    return Snapshot(run, frame, new, (str(path), len(frame), last, run.status, len(run.problems)))


@st.cache_data(show_spinner=False, max_entries=64, ttl=VERSION_TTL_S)
def _diagnosis(version: tuple, _run):
    from dashboard.diagnosis import diagnose

    return diagnose(_run)


class DiagnosisFailed(RuntimeError):
    """The engine raised on this run (a bug or an input it does not expect); the pages say so and go on."""


def diagnosis(snap: Snapshot):
    """The run's Diagnosis (findings most severe first, not_judged), or None when no engine is installed.

    Raises DiagnosisFailed, naming the run and the error, when the engine itself fails on the run.
    """
    try:
        import dashboard.diagnosis as engine
    except ImportError:
        return None
    if not hasattr(engine, "diagnose"):
        return None
    try:
        return _diagnosis(snap.version, snap.run)
    except Exception as e:
        raise DiagnosisFailed(f"the diagnosis failed on run {snap.run.name}: {type(e).__name__}: {e}") from e


def live_diagnosis(snap: Snapshot, path: str | Path):
    """The newest finished Diagnosis of the run at `path` (maybe of an earlier version than `snap`'s; a newer one
    is then computed in the background), or None when no engine is installed: what the Live page shows, so
    that its refresh never waits for a diagnosis. Raises DiagnosisFailed as `diagnosis` does."""
    try:
        import dashboard.diagnosis as engine
    except ImportError:
        return None
    if not hasattr(engine, "diagnose"):
        return None
    try:
        return _live(str(path)).latest.get(snap.version)[1]
    except Exception as e:
        raise DiagnosisFailed(f"the diagnosis failed on run {snap.run.name}: {type(e).__name__}: {e}") from e


# points per series on the Live page: a refresh redraws every chart, so fewer than the checklist's
LIVE_POINTS = 1000


# How long a Live page's refresh waits for the figure of the run's newest version before it draws the last one
# built: half of the 0.5 s after which Streamlit greys out an element not yet redrawn (its frontend's stale style,
# `opacity 1s ease-in 0.5s`), leaving the other half for the rest of the refresh (issue 39).
FIGURE_WAIT_S = 0.25
FIGURES_KEPT = 4  # (panels, language) pairs kept per run: a page or two in each language


def live_figure(snap: Snapshot, path: str | Path, panels: tuple, shades: tuple, lang: str):
    """The Live page's checklist figure of the run at `path`: the newest built, for every page showing it (ten pages
    on a live run each built the same figure: 39% of their refresh time once the diagnosis left it, issue 38). A
    newer version's figure is built beside the pages, the page waiting FIGURE_WAIT_S for it. Shared, not copied:
    `st.plotly_chart` copies a figure before drawing it, so no page changes this one."""
    from dashboard import charts

    live = _live(str(path))
    frame, nan_at = snap.metrics, snap.run.nan_at
    shade_key = tuple((s.metrics, s.step_range, s.severity, s.label) for s in shades)
    with live.lock:
        latest = live.figures.pop((panels, lang), None)
        if latest is None:
            latest = LatestDiagnosis(lambda: None)
        live.figures[(panels, lang)] = latest  # the newest used last: the first is the one to drop
        while len(live.figures) > FIGURES_KEPT:
            live.figures.pop(next(iter(live.figures)))
    build = lambda: charts.checklist_figure(frame, panels, "step", 0.0, shades, n_out=LIVE_POINTS, nan_at=nan_at,
                                            lang=lang)
    return latest.get((snap.version, shade_key), wait_s=FIGURE_WAIT_S, compute=build)[1]


@dataclass(frozen=True)
class Health:
    """What the Runs table says of a run: the diagnosis' verdict and its finding counts."""

    verdict: str | None  # "healthy", "not_learning", "unstable", "cant_judge"; None: not judged
    critical: int = 0
    warning: int = 0
    refused: bool = False  # its key is refused (a link out of the roots): never opened


def health(key: str) -> Health:
    """The verdict of the run named by `key`. The run is opened through its key, checked as a URL's is, so a
    row for a run that holds a link out of the roots opens nothing; one that cannot be read or judged is
    "not judged" (its row says why), never an exception."""
    try:
        path = paths.resolve_run(roots(), key)
    except paths.PathRefused:
        return Health(None, refused=True)
    try:
        d = diagnosis(snapshot(path))
    except Exception:  # noqa: BLE001 - RunError, DiagnosisFailed, a reader's bug: one cell, not the page's end
        return Health(None)
    if d is None:
        return Health(None)
    sev = [f.severity for f in d.findings]
    v = getattr(d, "verdict", None)
    return Health(None if v is None else v.kind, sev.count("critical"), sev.count("warning"))


@st.cache_data(show_spinner=False, max_entries=16, ttl=VERSION_TTL_S)
def _samples(version: tuple, step_min: int | None, step_max: int | None, _run) -> pd.DataFrame:
    return _run.samples(step_min=step_min, step_max=step_max)


def samples(snap: Snapshot, step_min: int | None = None, step_max: int | None = None) -> pd.DataFrame:
    return _samples(snap.version, step_min, step_max, snap.run)


@st.cache_data(show_spinner=False, max_entries=64, ttl=VERSION_TTL_S)
def _sample_steps(version: tuple, _run) -> list[int]:
    s = _run.samples()
    return sorted(int(x) for x in s["step"].unique()) if len(s) else []


def sample_steps(snap: Snapshot) -> list[int]:
    """Steps that have sample rows. Reads the samples' step column once per run version."""
    return _sample_steps(snap.version, snap.run)


def clear_caches() -> None:
    """For tests: forget cached data and open runs."""
    st.cache_data.clear()
    st.cache_resource.clear()
