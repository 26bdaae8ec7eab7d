"""servewise: choose and size an LLM inference engine. This file is the app's table of contents."""

import streamlit as st

st.set_page_config(page_title="servewise", page_icon=":material/dns:", layout="wide")

pages = [
    st.Page("pages/home.py", title="Home", icon=":material/home:", default=True),
    st.Page("pages/engines.py", title="Engines", icon=":material/compare_arrows:"),
    st.Page("pages/formats.py", title="Formats & compatibility", icon=":material/grid_on:"),
    st.Page("pages/memory.py", title="Memory & capacity", icon=":material/memory:"),
    st.Page("pages/wizard.py", title="Engine wizard", icon=":material/assistant:"),
    st.Page("pages/simulator.py", title="Concurrency & queueing", icon=":material/queue:"),
    st.Page("pages/planner.py", title="Capacity planner", icon=":material/price_check:"),
    st.Page("pages/speed.py", title="Speed & calibration", icon=":material/speed:"),
    st.Page("pages/operations.py", title="Operations", icon=":material/monitoring:"),
    st.Page("pages/compatibility.py", title="Tool calls & embeddings", icon=":material/handyman:"),
    st.Page(
        "pages/reconcile.py", title="Check against your engine", icon=":material/fact_check:", url_path="check_log"
    ),
]
st.navigation(pages).run()
