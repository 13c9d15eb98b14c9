"""Runs: every run under the roots, with status and a health badge; pick the ones to open."""

import pandas as pd
import streamlit as st

from collectors.sources import reader_problems
from dashboard import data, ui
from dashboard.diagnosis import i18n
from dashboard.text import escape_md, health_label, phase_text, update_cell

MAX_JUDGED = 50  # runs whose diagnosis the table computes; more would make the landing page slow

t = ui.t
st.title(t("page_runs"))
st.caption(escape_md(t("roots") + ", ".join(f"{r.label} = {r.path}" for r in data.roots())))
ui.resolve_selected()  # shows a refusal for a run in the URL that lies outside the roots

for problem in reader_problems():  # e.g. an optional dependency missing: its source's runs are not listed
    st.warning(escape_md(problem))

with st.spinner(t("loading_runs")):  # the first visit reads every run under the roots: say so, not a grey box
    table = data.all_runs()
if not len(table):
    st.info(t("no_runs_yet"))
    st.stop()

c1, c2, c3 = st.columns([2, 1, 1])
name_filter = c1.text_input(t("filter_name"), "")
status_filter = c2.multiselect(t("col_status"), sorted(table["status"].unique()), format_func=ui.status_word,
                               placeholder=t("choose_options"))
source_filter = c3.multiselect(t("col_source"), sorted(table["source"].unique()), placeholder=t("choose_options"))

shown = table
if name_filter:
    shown = shown[shown["name"].str.contains(name_filter, case=False, regex=False)]
if status_filter:
    shown = shown[shown["status"].isin(status_filter)]
if source_filter:
    shown = shown[shown["source"].isin(source_filter)]


def status_cell(status: str, phase) -> str:
    """'running · supervised warm start before the first step: step 300 of at most 2000 · ...' for a run before
    its first step (run.json's phase); the status word alone otherwise."""
    shown = phase_text(phase, ui.lang()) if status == "running" else None
    return ui.status_word(status) + (f" · {shown[0]}" if shown else "")


# the diagnosis' verdict, each run opened through its key as a URL would be (a refused one is never read)
with st.spinner(t("loading_health", n=min(len(shown), MAX_JUDGED))):
    judged = [data.health(k) if i < MAX_JUDGED else data.Health(None) for i, k in enumerate(shown["key"])]
view = shown.assign(health=[health_label(h, s, ui.lang()) for h, s in zip(judged, shown["status"], strict=True)],
                    last_update=[update_cell(u, lang=ui.lang()) for u in shown["last_update"]],
                    status=[status_cell(s, p) for s, p in zip(shown["status"], shown["phase"], strict=True)],
                    error=[i18n.path_text(e, ui.lang()) if isinstance(e, str) else "" for e in shown["error"]],
                    # a run in its warm start has no step yet: a blank cell, not "None"
                    last_step=pd.to_numeric(shown["last_step"], errors="coerce").astype("float64"))
st.dataframe(view[["name", "source", "status", "last_step", "last_update", "health", "key", "error"]],
             hide_index=True, width="stretch",
             column_config={"name": t("col_name"), "source": t("col_source"), "status": st.column_config.TextColumn(t("col_status"), width="medium"),
                            "last_step": st.column_config.NumberColumn(t("col_last_step"), format="%d"),
                            "last_update": st.column_config.TextColumn(t("col_last_update")),
                            "health": t("col_health"), "error": t("col_error"),
                            "key": st.column_config.TextColumn(t("col_key"), width="medium")})

picked = ui.pick_runs(t("open_runs"), multi=True, min_runs=1)
if picked:
    keys = [k for k, _ in picked]
    cols = st.columns(6)
    for col, page in zip(cols, ["checklist", "diagnosis", "samples", "config", "compare", "live"]):
        with col:
            ui.link(page, t(f"page_{page}"), keys)
