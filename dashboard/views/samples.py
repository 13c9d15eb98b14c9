"""Samples: one step's prompt groups with reward, pass, advantage, length, truncation. Model text is
untrusted and is shown only with st.code / st.dataframe, never as Markdown or HTML."""

import pandas as pd
import streamlit as st

from dashboard import coverage, data, samples_view, ui
from dashboard.text import escape_md

MAX_GROUPS = 30  # groups drawn in full; the summary table lists them all

st.title("Samples")
picked = ui.pick_runs("Run", multi=False)
if not picked:
    st.stop()
key, path = picked[0]
snap = ui.open_snapshot(key, path)
if snap is None:
    st.stop()
ui.run_header(key, snap)

steps = data.sample_steps(snap)
if not steps:
    st.info(escape_md(coverage.missing_message(snap.run.meta.source, "samples")))
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
step = c1.selectbox("Step", steps, index=steps.index(default_step))
flt = c2.selectbox("Show", keys, index=keys.index(default_filter),
                   format_func=lambda k: samples_view.FILTER_KEYS[k].label)
limit = c3.number_input("Top N (ranking filters)", 1, 500, samples_view.DEFAULT_LIMIT)

rows = samples_view.apply_filter(data.samples(snap, step, step), flt, int(limit))
summary = samples_view.group_summary(rows)
st.caption(f"{len(rows)} response(s) in {len(summary)} group(s) at step {step}")
if not len(rows):
    st.stop()
st.dataframe(summary, hide_index=True)


def _missing(value) -> bool:
    """None, NaN or pd.NA: the ways a null shows up in a row of a frame read from Parquet."""
    return value is None or (pd.api.types.is_scalar(value) and bool(pd.isna(value)))


def show_response(r) -> None:
    passed = r.get("passed")
    passed = "?" if _missing(passed) else ("pass" if passed else "fail")
    trunc = " · truncated" if r.get("truncated") in (True, 1) else ""
    st.text(f"sample {r['sample']} · reward {r['reward']:.4g} · {passed} · advantage {r.get('advantage', float('nan')):.4g}"
            f" · {r.get('num_tokens', '?')} tokens{trunc}")
    text = r.get("completion")
    st.code("(no text logged)" if _missing(text) else str(text), language="text", wrap_lines=True)


for n, ((s, g), group) in enumerate(rows.groupby(["step", "group"], sort=False)):
    if n >= MAX_GROUPS:
        st.caption(f"{len(summary) - MAX_GROUPS} more group(s) are listed in the table above.")
        break
    first = group.iloc[0]
    with st.container(border=True):
        st.text(f"step {s} · group {g} · prompt id {first.get('prompt_id')} · reward std "
                f"{first['group_reward_std']:.4g} · pass fraction {first['group_pass_frac']:.2f}")
        prompt = first.get("prompt")
        if not _missing(prompt):
            st.code(str(prompt), language="text", wrap_lines=True)
        for _, r in group.iterrows():
            show_response(r.to_dict())
