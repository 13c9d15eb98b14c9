"""Diagnosis: the findings, most severe first, with evidence, the checks to make, and links to them."""

import pandas as pd
import streamlit as st

from dashboard import charts, coverage, data, ui
from dashboard.diagnosis.i18n import label, localise
from dashboard.text import SEVERITY_ICONS, escape_md

lang = ui.lang()
st.title(label("diagnosis", lang))
picked = ui.pick_runs("Run", multi=False)
if not picked:
    st.stop()
key, path = picked[0]
snap = ui.open_snapshot(key, path)
if snap is None:
    st.stop()
ui.run_header(key, snap)

try:
    diagnosis = data.diagnosis(snap)
except data.DiagnosisFailed as e:
    st.error(escape_md(e))
    st.stop()
if diagnosis is None:
    st.warning("The diagnosis engine (dashboard.diagnosis) is not available in this installation.")
    st.stop()
diagnosis = localise(diagnosis, lang)
sep = label("sep", lang)
# The verdict first, one line; "can't judge yet" (no rows, too few points) is never shown as "no findings".
VERDICT_BOX = {"healthy": st.success, "not_learning": st.error, "unstable": st.error, "cant_judge": st.info}
verdict = diagnosis.verdict
VERDICT_BOX[verdict.kind](f"**{label('verdict_page', lang)}{sep}{escape_md(verdict.label)}**{sep}"
                          f"{escape_md(verdict.reason)}")
if not diagnosis.findings and verdict.kind != "cant_judge":
    st.success(label("no_findings_page", lang))


has_samples = bool(data.sample_steps(snap))


def show_check(number: int, check) -> None:
    st.markdown(f"{number}. **{escape_md(check.what)}**{sep}{escape_md(check.how)}")
    if check.link is not None and check.link.page == "samples" and not has_samples:
        # a link to an empty page helps nobody: say why the check cannot be read here, and how to get it
        st.caption(escape_md(coverage.missing_message(snap.run.meta.source, "samples")))
    elif check.link is not None:
        params = dict(check.link.params)
        # say where the link goes ("open samples: filter all_fail"), not just which page
        where = ", ".join(f"{k} {v}" for k, v in params.items())
        ui.link(check.link.page, label("open_page", lang, page=check.link.page) + (f"{sep}{where}" if where else ""),
                key, params)


for i, f in enumerate(diagnosis.findings):
    with st.container(border=True):
        span = label("steps_range", lang, a=f.step_range[0], b=f.step_range[1]) if f.step_range else label(
            "whole_run", lang)
        st.markdown(f"### {SEVERITY_ICONS.get(f.severity, '')} {escape_md(f.title)}")
        st.caption(escape_md(f"{label(f.severity, lang)} · {f.rule_id} · {label('symptom', lang)}{sep}{f.symptom} · "
                             f"{span}"))
        for j, ev in enumerate(f.evidence):
            st.markdown(label("evidence_page", lang) + sep + escape_md(ev.text))
            if ev.metric in snap.metrics:  # config and samples evidence has no series to draw
                st.plotly_chart(charts.evidence_figure(snap.metrics, ev.metric, ev.threshold, f.step_range,
                                                       f.severity), key=f"ev_{i}_{j}")
        st.markdown(f"**{label('check_first_page', lang)}**")
        for n, check in enumerate(f.checks, start=1):
            show_check(n, check)
        if f.examples:
            st.markdown(label("examples_heading", lang))
            st.dataframe(pd.DataFrame(list(f.examples)).astype(str), hide_index=True, key=f"ex_{i}")

if diagnosis.not_judged:
    with st.expander(label("could_not_judge_n", lang, n=len(diagnosis.not_judged))):
        st.dataframe(pd.DataFrame([{label("rule", lang): n.rule_id, label("reason", lang): n.reason}
                                   for n in diagnosis.not_judged]), hide_index=True)
