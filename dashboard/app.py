"""The grposcope dashboard. Run with `grpo-dash [ROOT ...]` (or `streamlit run dashboard/app.py`).

Every page is a file in views/ that asks data.py and draws with charts.py; this file only lays out the
navigation and keeps the selected runs in the URL. Page titles are in the chosen language.
"""

import streamlit as st

from dashboard import ui

st.set_page_config(page_title="grposcope", page_icon="🔬", layout="wide")
ui.language_switch()  # before the titles below: a switch just flipped names them in its language
t = ui.t

PAGES = [
    st.Page("views/runs.py", title=t("page_runs"), icon="📋", url_path="start", default=True),
    st.Page("views/checklist.py", title=t("page_checklist"), icon="📈", url_path="checklist"),
    st.Page("views/diagnosis.py", title=t("page_diagnosis"), icon="🩺", url_path="diagnosis"),
    st.Page("views/samples.py", title=t("page_samples"), icon="🔎", url_path="samples"),
    st.Page("views/config.py", title=t("page_config"), icon="⚙️", url_path="config"),
    st.Page("views/compare.py", title=t("page_compare"), icon="🆚", url_path="compare"),
    st.Page("views/live.py", title=t("page_live"), icon="📡", url_path="live"),
    # the Runs page is the landing page at / (a default page is not served at its own path); a link or a bookmark
    # to /runs opens it there too, not "Page not found"
    st.Page("views/runs.py", title=t("page_runs"), icon="📋", url_path="runs", visibility="hidden"),
]

page = st.navigation(PAGES)
ui.sync_selection()
page.run()
