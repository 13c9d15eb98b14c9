"""Config: the notes' five questions of section 6 answered from the run's config, then the full config."""

import pandas as pd
import streamlit as st

from dashboard import coverage, ui
from dashboard.diagnosis import i18n
from dashboard.diagnosis.rules import config_questions
from dashboard.text import escape_md

st.title("Config")
picked = ui.pick_runs("Run", multi=False)
if not picked:
    st.stop()
key, path = picked[0]
snap = ui.open_snapshot(key, path)
if snap is None:
    st.stop()
ui.run_header(key, snap)
meta = snap.run.meta
if not meta.config:
    st.info(escape_md(coverage.missing_message(meta.source, "config")))
    st.caption("Without a config the five questions of section 6 cannot be answered from this run.")
    st.stop()

lang = ui.lang()
st.subheader(i18n.label("five_questions", lang))
answers = [i18n.localise_answer(a, lang) for a in config_questions.answer_questions(meta.config, meta.source)]
st.dataframe(pd.DataFrame([{"#": a.number, i18n.label("question", lang): a.question,
                            i18n.label("answer", lang): a.answer,
                            i18n.label("config_keys", lang): ", ".join(a.keys)} for a in answers]),
             hide_index=True, width="stretch")
focus = st.query_params.get("key")

st.subheader("Full config")
flat = pd.DataFrame({"key": list(meta.config), "value": [config_questions.display(v) for v in meta.config.values()]})
if focus:
    flat = pd.concat([flat[flat["key"] == focus], flat[flat["key"] != focus]], ignore_index=True)
    st.caption("Linked key first: " + escape_md(focus))
st.dataframe(flat, hide_index=True, width="stretch")

if meta.info or meta.notes:
    with st.expander("Run info and notes"):
        st.code("\n".join([f"{k} = {v}" for k, v in meta.info.items()] + list(meta.notes)), language="text")
