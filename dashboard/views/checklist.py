"""Checklist: the notes' section 8 charts of one run on a shared x axis, findings shaded."""

import streamlit as st

from dashboard import charts, coverage, ui
from dashboard.text import escape_md

t = ui.t
lang = ui.lang()
st.title(t("page_checklist"))
picked = ui.pick_runs(t("run"), multi=False)
if not picked:
    st.stop()
key, path = picked[0]
snap = ui.open_snapshot(key, path)
if snap is None:
    st.stop()
ui.run_header(key, snap)

c1, c2, c3 = st.columns([1, 2, 1])
x = c1.radio(t("x_axis"), ["step", "wall_time"], horizontal=True, format_func=lambda v: t(f"axis_{v}"))
smoothing = c2.slider(t("smoothing"), 0.0, 0.99, 0.0, 0.01)
shade = c3.toggle(t("shade_findings"), value=True)

diagnosis = ui.diagnosis_or_error(snap) if shade else None
shades = tuple(charts.Shade(tuple(f.metrics), tuple(f.step_range), f.severity, f.rule_id)
               for f in (diagnosis.findings if diagnosis else ()) if f.step_range and f.metrics)

if not len(snap.metrics):
    st.info(t("no_steps_yet"))
    st.stop()
# charts of metrics this source never logs are named under the charts, not drawn empty
drawn, missing = coverage.split_panels(snap.metrics, charts.CHECKLIST)
source = snap.run.meta.source

focus = st.query_params.get("metric")
if focus:
    panels = tuple(p for p in charts.panels_for_metric(focus) if p in drawn)
    if panels:
        st.markdown(f"**{t('focused_on')}** " + escape_md(focus))
        st.plotly_chart(charts.checklist_figure(snap.metrics, panels, x, smoothing, shades,
                                                nan_at=snap.run.nan_at, lang=lang), key="focus")
    elif charts.panels_for_metric(focus):
        st.info(escape_md(t("focus_not_logged", metric=focus, source=source)))
    else:
        st.info(escape_md(t("focus_not_on_checklist", metric=focus)))

if drawn:
    st.plotly_chart(charts.checklist_figure(snap.metrics, drawn, x, smoothing, shades, nan_at=snap.run.nan_at,
                                            lang=lang), key="checklist")
else:
    st.info(escape_md(t("no_checklist_metrics", source=source,
                        columns=", ".join(c for c in snap.metrics.columns if c != "step"))))
if note := coverage.missing_panels_message(source, missing, bool(len(snap.metrics)), lang):
    st.caption(escape_md(note))
