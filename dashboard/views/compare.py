"""Compare: two or more runs overlaid on the checklist metrics, and the config keys that differ."""

import pandas as pd
import streamlit as st

from dashboard import charts, coverage, ui
from dashboard.diagnosis.rules import config_questions
from dashboard.text import escape_md

st.title("Compare")
picked = ui.pick_runs("Runs to compare", multi=True, min_runs=2)
if not picked:
    st.stop()
snaps = {key: s for key, path in picked if (s := ui.open_snapshot(key, path)) is not None}
if len(snaps) < 2:
    st.stop()

names = {}
for key, snap in snaps.items():
    label = snap.run.name if snap.run.name not in names.values() else f"{snap.run.name} ({key})"
    names[key] = label

c1, c2 = st.columns([1, 2])
x = c1.radio("x axis", ["step", "wall_time"], horizontal=True, format_func=lambda v: v.replace("_", " "))
smoothing = c2.slider("Smoothing (EMA weight; the raw series stays drawn)", 0.0, 0.99, 0.0, 0.01)
frames = {names[k]: s.metrics for k, s in snaps.items()}
# a chart is drawn when any of the runs logs it; one that none logs is named, not drawn empty
drawn = tuple(p for p in charts.CHECKLIST if any(coverage.panel_has_data(f, p) for f in frames.values()))
if drawn:
    st.plotly_chart(charts.compare_figure(frames, drawn, x, smoothing), key="compare")
if missing := tuple(p for p in charts.CHECKLIST if p not in drawn):
    st.caption(escape_md("None of these runs logs: " + ", ".join(p.short or p.title for p in missing)))

st.subheader("Config differences")
diff = config_questions.config_diff({names[k]: s.run.meta.config for k, s in snaps.items()})
if diff:
    st.dataframe(pd.DataFrame(diff), hide_index=True, width="stretch")
else:
    st.info("The configs are identical.")

st.subheader("The five questions, side by side")
answers = {names[k]: config_questions.answer_questions(s.run.meta.config, s.run.meta.source)
           for k, s in snaps.items()}
rows = [{"#": i + 1, "question": config_questions.QUESTIONS[i], **{n: a[i].answer for n, a in answers.items()}}
        for i in range(len(config_questions.QUESTIONS))]
st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch")
