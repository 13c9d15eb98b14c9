"""Samples: one step's prompt groups with reward, pass, advantage, length, truncation. Model text is
untrusted and is shown only with st.code / st.dataframe, never as Markdown or HTML.

"Top N" applies to every filter: N groups for the group filters (all, zero-variance, all-fail, all-pass), N
responses for the others. A group of short one-line answers is listed one line a response in one block; a
group with a long or multi-line answer shows each response whole."""

import streamlit as st

from dashboard import coverage, data, samples_view, ui
from dashboard.text import escape_md

t = ui.t
st.title(t("page_samples"))
picked = ui.pick_runs(t("run"), multi=False)
if not picked:
    st.stop()
key, path = picked[0]
snap = ui.open_snapshot(key, path)
if snap is None:
    st.stop()
ui.run_header(key, snap)

steps = data.sample_steps(snap)
if not steps:
    st.info(escape_md(coverage.missing_message(snap.run.meta.source, "samples", ui.lang())))
    st.stop()

wanted = st.query_params.get("step")
try:
    wanted = int(wanted) if wanted is not None else steps[-1]
except ValueError:
    wanted = steps[-1]
default_step = min(steps, key=lambda s: abs(s - wanted))
keys = [f.key for f in samples_view.FILTERS]
default_filter = samples_view.filter_key(st.query_params.get("filter"))

c1, c2, c3 = st.columns([1, 2, 1])
step = c1.selectbox(t("step"), steps, index=steps.index(default_step), placeholder=t("choose_option"))
flt = c2.selectbox(t("show"), keys, index=keys.index(default_filter), format_func=lambda k: t(f"filter_{k}"),
                   placeholder=t("choose_option"))
limit = int(c3.number_input(t("top_n"), 1, 500, samples_view.DEFAULT_LIMIT))

rows = samples_view.apply_filter(data.samples(snap, step, step), flt, limit)
summary = samples_view.group_summary(rows)
shown = samples_view.first_n(rows, flt, limit)
shown_groups = len(samples_view.group_summary(shown))
st.caption(t("samples_caption", n=len(rows), g=len(summary), step=step)
           + (t("samples_shown", n=len(shown), g=shown_groups) if len(shown) < len(rows) else ""))
if not len(rows):
    st.stop()
st.dataframe(summary, hide_index=True, height=min(36 * (len(summary) + 1) + 2, 300),
             column_config={c: t(f"sum_{c}") for c in summary.columns if ui.has_label(f"sum_{c}")})

MISSING = samples_view._missing
PASS_WORDS = (t("pass"), t("fail"), "?")
COLUMNS = (*PASS_WORDS, t("col_reward"), t("col_passed"), t("col_advantage"), t("col_tokens"), t("col_completion"),
           t("no_text"))


def show_response(r) -> None:
    passed = r.get("passed")
    passed = "?" if MISSING(passed) else (PASS_WORDS[0] if passed else PASS_WORDS[1])
    trunc = t("truncated_mark") if r.get("truncated") in (True, 1) else ""
    st.text(t("response_line", sample=r["sample"], reward=f"{r['reward']:.4g}", passed=passed,
              adv=f"{r.get('advantage', float('nan')):.4g}", tokens=r.get("num_tokens", "?"), trunc=trunc))
    text = r.get("completion")
    st.code(t("no_text") if MISSING(text) else str(text), language="text", wrap_lines=True)


if samples_view.is_group_filter(flt):
    for (s, g), group in shown.groupby(["step", "group"], sort=False):
        first = group.iloc[0]
        with st.container(border=True):
            st.text(t("group_line", step=s, group=g, prompt=first.get("prompt_id"),
                      std=f"{first['group_reward_std']:.4g}", frac=f"{first['group_pass_frac']:.2f}"))
            prompt = first.get("prompt")
            if not MISSING(prompt):
                st.code(str(prompt), language="text", wrap_lines=True)
            lines = samples_view.compact_lines(group, COLUMNS)
            if lines is not None:
                st.code("\n".join(lines), language="text")
            else:
                for _, r in group.iterrows():
                    show_response(r.to_dict())
else:
    for _, r in shown.iterrows():
        with st.container(border=True):
            st.text(t("group_line_short", step=r["step"], group=r["group"], prompt=r.get("prompt_id")))
            show_response(r.to_dict())
