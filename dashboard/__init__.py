"""grposcope dashboard: the Streamlit app (app.py, views/) over plain modules that do not import streamlit.

charts.py, downsample.py, paths.py and samples_view.py are pure; data.py is the only
module that caches; the diagnosis engine (and the configuration questions) live in dashboard/diagnosis/
"""
