"""Diagnosis: the findings, most severe first, with evidence, the checks to make, and links to them."""

import pandas as pd
import streamlit as st

from dashboard import charts, coverage, data, ui
from dashboard.text import SEVERITY_ICONS, escape_md

st.title("Diagnosis")
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
    st.error(str(e))
    st.stop()
if diagnosis is None:
    st.warning("The diagnosis engine (dashboard.diagnosis) is not available in this installation.")
    st.stop()
# The verdict first, one line; "can't judge yet" (no rows, too few points) is never shown as "no findings".
VERDICT_BOX = {"healthy": st.success, "not_learning": st.error, "unstable": st.error, "cant_judge": st.info}
verdict = diagnosis.verdict
VERDICT_BOX[verdict.kind](f"**Verdict: {escape_md(verdict.label)}**: {escape_md(verdict.reason)}")
if not diagnosis.findings and verdict.kind != "cant_judge":
    st.success("No findings: no rule fired on this run.")


has_samples = bool(data.sample_steps(snap))


def show_check(number: int, check) -> None:
    st.markdown(f"{number}. **{escape_md(check.what)}**: {escape_md(check.how)}")
    if check.link is not None and check.link.page == "samples" and not has_samples:
        # a link to an empty page helps nobody: say why the check cannot be read here, and how to get it
        st.caption(escape_md(coverage.missing_message(snap.run.meta.source, "samples")))
    elif check.link is not None:
        params = dict(check.link.params)
        # say where the link goes ("open samples: filter all_fail"), not just which page
        where = ", ".join(f"{k} {v}" for k, v in params.items())
        ui.link(check.link.page, f"open {check.link.page}" + (f": {where}" if where else ""), key, params)


for i, f in enumerate(diagnosis.findings):
    with st.container(border=True):
        span = f"steps {f.step_range[0]}-{f.step_range[1]}" if f.step_range else "whole run"
        st.markdown(f"### {SEVERITY_ICONS.get(f.severity, '')} {escape_md(f.title)}")
        st.caption(escape_md(f"{f.severity} · {f.rule_id} · symptom: {f.symptom} · {span}"))
        for j, ev in enumerate(f.evidence):
            st.markdown("Evidence: " + escape_md(ev.text))
            if ev.metric in snap.metrics:  # config and samples evidence has no series to draw
                st.plotly_chart(charts.evidence_figure(snap.metrics, ev.metric, ev.threshold, f.step_range,
                                                       f.severity), key=f"ev_{i}_{j}")
        st.markdown("**Check first**")
        for n, check in enumerate(f.checks, start=1):
            show_check(n, check)
        if f.examples:
            st.markdown("**Examples from the samples** (model output, shown as plain text)")
            st.dataframe(pd.DataFrame(list(f.examples)).astype(str), hide_index=True, key=f"ex_{i}")

if diagnosis.not_judged:
    with st.expander(f"{len(diagnosis.not_judged)} rule(s) could not judge this run"):
        st.dataframe(pd.DataFrame([{"rule": n.rule_id, "reason": n.reason} for n in diagnosis.not_judged]),
                     hide_index=True)
