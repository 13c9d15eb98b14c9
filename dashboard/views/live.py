"""Live: a running run refreshing itself (a fragment re-run every few seconds that reads only new parts),
how long ago it last updated, a pause switch, and findings as they appear.

Only a run being written refreshes (dashboard/pace.py): one whose end is recorded is drawn once, and one gone quiet
without an end is looked at every pace.WAKE_S seconds by a fragment that draws nothing. The refresh reads the open
run only, never the roots (discovering a root of 63 runs took 7 s, and the page stayed greyed that long each
refresh, issue 39). The run picker lies outside the fragment; when the run's status changes (it stops, finishes,
goes stale), the fragment reruns the whole page so the picker's label and the refresh follow, keeping the selection
(it lives in the session and the URL); a run that appears is listed on the next visit or change of the page."""

import time

import streamlit as st

from collectors import RunError
from collectors.sources import missing_hint
from dashboard import charts, coverage, data, pace, ui
from dashboard.diagnosis import i18n
from dashboard.diagnosis.guard.guard import read_findings
from dashboard.text import SEVERITY_ICONS, STATUS_ICONS, ago, escape_md, guard_event_line

t = ui.t
lang = ui.lang()
st.title(t("page_live"))
picked = ui.pick_runs(t("run"), multi=False)
if not picked:
    st.stop()
key, path = picked[0]

try:
    opened = data.snapshot(path)  # the run as this page is drawn: whether it is being written
except RunError:
    opened = None  # the view below says why
status = opened.run.status if opened else None


def written_now(snap) -> bool:
    run = snap.run
    return pace.refreshing(run.status, run.last_update, time.time(), run.stale_after_s)


watched = opened is not None and written_now(opened)
paused, every = False, 2
if watched:  # the controls of a refresh, only where there is one
    c1, c2 = st.columns([1, 3])
    paused = c1.toggle(t("pause"), value=False)
    every = c2.select_slider(t("refresh_every"), [1, 2, 5, 10, 30], value=2)
elif opened is not None:
    st.caption(t("live_ended", status=ui.status_word(status)) if not pace.wakes(status) else
               t("live_quiet", ago=ago(opened.run.last_update, lang=lang), n=pace.WAKE_S))
refresh = watched and not paused

TOOK = f"live_took_{key}"  # seconds the last refresh of this run took, in this session
interval = pace.refresh_interval(every, st.session_state.get(TOOK))
if refresh and interval > every:
    c2.caption(t("refresh_backoff", n=interval, took=f"{st.session_state[TOOK]:.1f}"))


@st.fragment(run_every=pace.WAKE_S)
def wake() -> None:
    """Draws nothing (so nothing is ever greyed): reruns the page when the quiet run moved."""
    try:
        moved = data.snapshot(path).version != opened.version
    except RunError:
        moved = True  # the page says why
    if moved:
        st.rerun()


# Streamlit greys out (its "stale" look: opacity 0.33 from 0.5 s on) each element of a fragment until the rerun
# draws it again, to say an action is being answered. On a timer nothing was asked: the chart, redrawn last, was
# greyed for 0.5-1.5 s of every 2 s refresh, most of it the browser drawing the new figure (issue 39). Elements of
# the refresh keep their look; the status widget still shows that the page is working.
REFRESH_BOX = "live_refresh"
STEADY = (f"<style>.st-key-{REFRESH_BOX} [data-stale='true']{{opacity:1 !important;transition:none !important}}"
          "</style>")


@st.fragment(run_every=interval if refresh else None)
def live_view() -> None:
    start = time.monotonic()
    with st.container(key=REFRESH_BOX):
        live_body()
    st.session_state[TOOK] = took = time.monotonic() - start
    wanted = pace.refresh_interval(every, took)
    if refresh and (wanted > interval or (wanted < interval and 2 * wanted <= interval)):
        # the whole page: the fragment's interval is set where it is declared; back off at once, return only when
        # refreshes have become twice as fast, so a refresh time that wobbles does not rerun the page each time
        st.rerun()


def live_body() -> None:
    snap = ui.open_snapshot(key, path)
    if snap is None:
        return
    if snap.run.status != status or written_now(snap) != watched:
        st.rerun()  # the whole page, not a reload: the picker's label and the refresh follow the run
    ui.run_header(key, snap)  # inside the fragment so "updated ... ago" and read problems stay current
    run, frame = snap.run, snap.metrics
    last = int(frame["step"].iloc[-1]) if len(frame) else None
    # tiles as wide as their values, wrapping to a second row where four do not fit: four equal columns cut the
    # values ("finis...", "16.2...") in a window under ~1,100 px with the sidebar open
    tiles = st.container(horizontal=True, gap="medium")
    tiles.metric(t("tile_status"), f"{STATUS_ICONS.get(run.status, '')} {ui.status_word(run.status)}", width="content")
    # The open run is shared by every session, so count new rows against what this session last showed.
    seen_key = f"live_rows_{key}"
    new_rows = len(frame) - st.session_state.get(seen_key, len(frame))
    st.session_state[seen_key] = len(frame)
    tiles.metric(t("tile_last_step"), t("none") if last is None else str(last), delta=new_rows or None,
                 width="content")
    tiles.metric(t("tile_last_update"), ago(run.last_update, lang=lang), width="content")
    reward = frame["reward/mean"].iloc[-1] if "reward/mean" in frame and len(frame) else None
    tiles.metric(t("tile_reward"), t("none") if reward is None else f"{reward:.4g}", width="content")
    if hint := missing_hint(run.meta.source, "live"):  # a source that is only written now and then
        st.caption(escape_md(i18n.hint(run.meta.source, "live", hint, lang)))
    if run.status == "stale":
        st.warning(t("stale_warning"))
    if events := read_findings(run.path):  # what the guard found while the run trained (findings.jsonl)
        with st.expander(t("guard_events", n=len(events)), expanded=run.status == "stopped"):
            for e in events:
                st.markdown(guard_event_line(e, lang))
    diagnosis = ui.diagnosis_or_error(snap, live_path=path)  # the newest finished: the refresh never waits for one
    for f in diagnosis.findings if diagnosis else ():
        span = i18n.label("in_parens", lang, v=i18n.span(f.step_range, lang)) if f.step_range else ""
        st.markdown(f"{SEVERITY_ICONS.get(f.severity, '')} **{escape_md(f.title)}**{escape_md(span)}")
    shades = tuple(charts.Shade(tuple(f.metrics), tuple(f.step_range), f.severity, f.rule_id)
                   for f in (diagnosis.findings if diagnosis else ()) if f.step_range and f.metrics)
    drawn, missing = coverage.split_panels(frame, charts.CHECKLIST)
    if drawn:
        st.plotly_chart(data.live_figure(snap, path, tuple(drawn), shades, lang), key="live_chart")  # one per version
    if note := coverage.missing_panels_message(run.meta.source, missing, bool(len(frame)), lang):
        st.caption(escape_md(note))


if refresh:
    st.html(STEADY)
live_view()
if opened is not None and not watched and pace.wakes(status):
    wake()
