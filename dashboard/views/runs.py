"""Runs: every run under the roots, with status and a health badge; pick the ones to open."""

import streamlit as st

from collectors.sources import reader_problems
from dashboard import data, ui
from dashboard.text import escape_md, fmt_time, health_label

MAX_JUDGED = 50  # runs whose diagnosis the table computes; more would make the landing page slow

st.title("Runs")
st.caption(escape_md("Roots: " + ", ".join(f"{r.label} = {r.path}" for r in data.roots())))
ui.resolve_selected()  # shows a refusal for a run in the URL that lies outside the roots

for problem in reader_problems():  # e.g. an optional dependency missing: its source's runs are not listed
    st.warning(escape_md(problem))

table = data.all_runs()
if not len(table):
    st.info("No runs found yet. Start one with `grpo-train --out runs/NAME`, or launch with a folder of runs.")
    st.stop()

c1, c2, c3 = st.columns([2, 1, 1])
name_filter = c1.text_input("Filter by name", "")
status_filter = c2.multiselect("Status", sorted(table["status"].unique()))
source_filter = c3.multiselect("Source", sorted(table["source"].unique()))

shown = table
if name_filter:
    shown = shown[shown["name"].str.contains(name_filter, case=False, regex=False)]
if status_filter:
    shown = shown[shown["status"].isin(status_filter)]
if source_filter:
    shown = shown[shown["source"].isin(source_filter)]

counts = [data.health(p) if i < MAX_JUDGED else (None, None) for i, p in enumerate(shown["path"])]
view = shown.assign(health=[health_label(c, w, st_) for (c, w), st_ in zip(counts, shown["status"], strict=True)],
                    last_update=[fmt_time(t) for t in shown["last_update"]])
st.dataframe(view[["name", "source", "status", "last_step", "last_update", "health", "key", "error"]],
             hide_index=True, width="stretch",
             column_config={"last_step": st.column_config.NumberColumn("last step", format="%d"),
                            "last_update": st.column_config.TextColumn("last update"),
                            "key": st.column_config.TextColumn("run key (URL)")})

picked = ui.pick_runs("Open runs", multi=True, min_runs=1)
if picked:
    keys = [k for k, _ in picked]
    cols = st.columns(6)
    for col, (page, label) in zip(cols, [("checklist", "Checklist"), ("diagnosis", "Diagnosis"),
                                         ("samples", "Samples"), ("config", "Config"), ("compare", "Compare"),
                                         ("live", "Live")]):
        with col:
            ui.link(page, label, keys)
