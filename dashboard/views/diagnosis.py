"""Diagnosis: the findings, most severe first, with evidence, the checks to make, and links to them; the
whole of it as a report to download (Markdown, or HTML with the charts inline)."""

import pandas as pd
import streamlit as st

from dashboard import charts, coverage, data, report, samples_view, ui
from dashboard.diagnosis import i18n
from dashboard.diagnosis.i18n import evidence_text, has_label, label, localise, reason_text
from dashboard.text import SEVERITY_ICONS, escape_md

lang = ui.lang()
t = ui.t
st.title(label("diagnosis", lang))
picked = ui.pick_runs(t("run"), multi=False)
if not picked:
    st.stop()
key, path = picked[0]
snap = ui.open_snapshot(key, path)
if snap is None:
    st.stop()
ui.run_header(key, snap)

try:
    english = data.diagnosis(snap)
except data.DiagnosisFailed as e:
    st.error(escape_md(e))
    st.stop()
if english is None:
    st.warning(t("engine_missing"))
    st.stop()
diagnosis = localise(english, lang)
sep = label("sep", lang)
# The verdict first, one line; "can't judge yet" (no rows, too few points) is never shown as "no findings".
VERDICT_BOX = {"healthy": st.success, "not_learning": st.error, "unstable": st.error, "cant_judge": st.info}
verdict = diagnosis.verdict
VERDICT_BOX[verdict.kind](f"**{label('verdict_page', lang)}{sep}{escape_md(verdict.label)}**{sep}"
                          f"{escape_md(verdict.reason)}")
if not diagnosis.findings and verdict.kind != "cant_judge":
    st.success(label("no_findings_page", lang))


@st.fragment
def downloads() -> None:
    """The report, built when asked (the HTML one draws every chart): Markdown or HTML, in this language."""
    row = st.container(horizontal=True)  # buttons as wide as their labels: columns cut "Report (HTML, ch..."
    name = report.file_stem(snap.run.name)
    items = [report.Item(key, english, snap.run)]
    row.download_button(t("download_md"), lambda: report.markdown(items, lang),
                       file_name=f"{name}.{lang}.md", mime="text/markdown", icon="📄", on_click="ignore")
    row.download_button(t("download_html"), lambda: report.html(items, lang),
                       file_name=f"{name}.{lang}.html", mime="text/html", icon="🌐", on_click="ignore")


downloads()
has_samples = bool(data.sample_steps(snap))


def link_label(page: str, params: dict) -> str:
    """Where a check's link goes ("open samples: filter all_fail"), in the chosen language."""
    def value(k, v):
        return t(f"filter_{samples_view.filter_key(v)}") if k == "filter" and lang != "en" else v

    where = t("list_comma").join(t(f"param_{k}", v=value(k, v)) if has_label(f"param_{k}") else f"{k} {v}"
                                 for k, v in params.items())
    return label("open_page", lang, page=t(f"link_page_{page}")) + (f"{sep}{where}" if where else "")


def show_check(number: int, check) -> None:
    st.markdown(f"{number}. **{escape_md(check.what)}**{sep}{escape_md(check.how)}")
    if check.link is not None and check.link.page == "samples" and not has_samples:
        # a link to an empty page helps nobody: say why the check cannot be read here, and how to get it
        st.caption(escape_md(coverage.missing_message(snap.run.meta.source, "samples", lang)))
    elif check.link is not None:
        params = dict(check.link.params)
        ui.link(check.link.page, link_label(check.link.page, params), key, params)


for i, f in enumerate(diagnosis.findings):
    with st.container(border=True):
        span = i18n.span(f.step_range, lang)
        st.markdown(f"### {SEVERITY_ICONS.get(f.severity, '')} {escape_md(f.title)}")
        st.caption(escape_md(f"{label(f.severity, lang)} · {f.rule_id} · {label('symptom', lang)}{sep}{f.symptom} · "
                             f"{span}"))
        for j, ev in enumerate(f.evidence):
            st.markdown(label("evidence_page", lang) + sep + escape_md(evidence_text(ev.text, lang)))
            # the metric it names on an axis holding its values; none for config, samples or the step itself
            fig = charts.evidence_figure(snap.metrics, ev.metric, ev.threshold, f.step_range, f.severity,
                                         statistic=ev.statistic, lang=lang)
            if fig is not None:
                st.plotly_chart(fig, key=f"ev_{i}_{j}")
        st.markdown(f"**{label('check_first_page', lang)}**")
        for n, check in enumerate(f.checks, start=1):
            show_check(n, check)
        if f.examples:
            st.markdown(label("examples_heading", lang))
            st.dataframe(pd.DataFrame(list(f.examples)).astype(str), hide_index=True, key=f"ex_{i}")

if diagnosis.not_judged:
    with st.expander(label("could_not_judge_n", lang, n=len(diagnosis.not_judged))):
        st.dataframe(pd.DataFrame([{label("rule", lang): n.rule_id, label("reason", lang): reason_text(n.reason, lang)}
                                   for n in diagnosis.not_judged]), hide_index=True)
