"""Config: the notes' five questions of section 6 answered from the run's config, then the full config.
The answers are a table that wraps its text (a data grid cut both columns mid-sentence)."""

import pandas as pd
import streamlit as st

from dashboard import coverage, ui
from dashboard.diagnosis import i18n
from dashboard.diagnosis.rules import config_questions
from dashboard.text import escape_md

t = ui.t
lang = ui.lang()
st.title(t("page_config"))
picked = ui.pick_runs(t("run"), multi=False)
if not picked:
    st.stop()
key, path = picked[0]
snap = ui.open_snapshot(key, path)
if snap is None:
    st.stop()
ui.run_header(key, snap)
meta = snap.run.meta
if not meta.config:
    st.info(escape_md(coverage.missing_message(meta.source, "config", lang)))
    st.caption(t("no_config_no_questions"))
    st.stop()

st.subheader(i18n.label("five_questions", lang))
answers = [i18n.localise_answer(a, lang) for a in config_questions.answer_questions(meta.config, meta.source, snap.metrics)]
# st.table renders Markdown in its cells: every cell escaped (an answer quotes the run's own config values)
st.table(pd.DataFrame([{i18n.label("question", lang): escape_md(a.question), i18n.label("answer", lang): escape_md(a.answer),
                        i18n.label("config_keys", lang): escape_md(", ".join(a.keys))} for a in answers],
                      index=pd.Index([a.number for a in answers])))  # unnamed: st.table renders a name as Markdown, and "#" is a heading
focus = st.query_params.get("key")

st.subheader(t("full_config"))
flat = pd.DataFrame({t("col_key_name"): list(meta.config),
                     t("col_value"): [config_questions.display(v) for v in meta.config.values()]})
if focus:
    first = flat[t("col_key_name")] == focus
    flat = pd.concat([flat[first], flat[~first]], ignore_index=True)
    st.caption(t("linked_key_first") + escape_md(focus))
st.dataframe(flat, hide_index=True, width="stretch")

if meta.info or meta.notes:
    with st.expander(t("run_info")):
        st.code("\n".join([f"{k} = {v}" for k, v in meta.info.items()] + list(meta.notes)), language="text")
