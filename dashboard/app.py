"""The grposcope dashboard. Run with `grpo-dash [ROOT ...]` (or `streamlit run dashboard/app.py`).

Every page is a file in views/ that asks data.py and draws with charts.py; this file only lays out the
navigation and keeps the selected runs in the URL.
"""

import streamlit as st

from dashboard import ui

st.set_page_config(page_title="grposcope", page_icon="🔬", layout="wide")

PAGES = [
    st.Page("views/runs.py", title="Runs", icon="📋", url_path="runs", default=True),
    st.Page("views/checklist.py", title="Checklist", icon="📈", url_path="checklist"),
    st.Page("views/diagnosis.py", title="Diagnosis", icon="🩺", url_path="diagnosis"),
    st.Page("views/samples.py", title="Samples", icon="🔎", url_path="samples"),
    st.Page("views/config.py", title="Config", icon="⚙️", url_path="config"),
    st.Page("views/compare.py", title="Compare", icon="🆚", url_path="compare"),
    st.Page("views/live.py", title="Live", icon="📡", url_path="live"),
]

page = st.navigation(PAGES)
ui.sync_selection()
ui.language_switch()
page.run()
