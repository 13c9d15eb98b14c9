"""What `grpo-dash` hands to `streamlit run`: the app (`app.py`) behind `OriginGuard`, as an `st.App`, so that
no page but the server's own reaches it (dashboard/origin_guard.py says why Streamlit's own check is not
enough)."""

from pathlib import Path

import streamlit as st
from starlette.middleware import Middleware

from dashboard.origin_guard import OriginGuard

app = st.App(str(Path(__file__).resolve().parent / "app.py"), middleware=[Middleware(OriginGuard)])
