"""Compare: two or more runs overlaid on the checklist metrics, and the config keys that differ."""

import pandas as pd
import streamlit as st

from dashboard import charts, coverage, ui
from dashboard.diagnosis import i18n
from dashboard.diagnosis.rules import config_questions
from dashboard.text import escape_md

t = ui.t
lang = ui.lang()
st.title(t("page_compare"))
picked = ui.pick_runs(t("runs_to_compare"), multi=True, min_runs=2)
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
x = c1.radio(t("x_axis"), ["step", "wall_time"], horizontal=True, format_func=lambda v: t(f"axis_{v}"))
smoothing = c2.slider(t("smoothing"), 0.0, 0.99, 0.0, 0.01)
frames = {names[k]: s.metrics for k, s in snaps.items()}
# a chart is drawn when any of the runs logs it; one that none logs is named, not drawn empty
drawn = tuple(p for p in charts.CHECKLIST if any(coverage.panel_has_data(f, p) for f in frames.values()))
if drawn:
    st.plotly_chart(charts.compare_figure(frames, drawn, x, smoothing, lang=lang), key="compare")
if missing := tuple(p for p in charts.CHECKLIST if p not in drawn):
    st.caption(escape_md(t("none_logs", names=t("list_comma").join(charts.panel_short(p, lang) for p in missing))))

st.subheader(t("config_differences"))
diff = config_questions.config_diff({names[k]: s.run.meta.config for k, s in snaps.items()})
if diff:
    table = pd.DataFrame(diff).rename(columns={"key": t("col_key_name")}).replace("(absent)", t("absent"))
    st.dataframe(table, hide_index=True, width="stretch")
else:
    st.info(t("configs_identical"))

st.subheader(t("questions_side_by_side"))
answers = {names[k]: [i18n.localise_answer(a, lang)
                      for a in config_questions.answer_questions(s.run.meta.config, s.run.meta.source, s.metrics)]
           for k, s in snaps.items()}
first = next(iter(answers.values()))
# st.table renders Markdown in its cells and headers: run names and answers (the runs' config values) escaped
rows = [{i18n.label("question", lang): escape_md(first[i].question),
         **{escape_md(n): escape_md(a[i].answer) for n, a in answers.items()}}
        for i in range(len(config_questions.QUESTIONS))]
st.table(pd.DataFrame(rows, index=pd.Index(range(1, len(rows) + 1), name="#")))
