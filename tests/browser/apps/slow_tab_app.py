"""A page whose rerun after its second tab opens stays busy until the browser's next action reaches the server.

That is a slow server on demand (as under 20 concurrent sessions), without a clock: tests/browser/test_url_races.py
types a number while this run is still going, as a user on a loaded server would.
"""

import time

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx
from streamlit.runtime.scriptrunner_utils.script_requests import ScriptRequestType

from ui import url_widgets

url_widgets.keep_written_params()
first, second = url_widgets.tabs(["1 · First", "2 · Second"], key="step")
with first:
    st.write("first tab")
with second:
    count = url_widgets.number("Count", key="count", min_value=0, max_value=100, value=1, step=1)
opened_here = st.session_state.get("step_tab") == "2 · Second" and "ran_before" in st.session_state  # not by link
st.session_state["ran_before"] = True
if opened_here and not st.session_state.get("held_once"):
    st.session_state["held_once"] = True
    ctx = get_script_run_ctx()
    requests = ctx.script_requests if ctx is not None else None
    while requests is not None and requests._state == ScriptRequestType.CONTINUE:  # no newer action yet
        time.sleep(0.02)
    st.write("stopped here for the newer run")  # a yield point: Streamlit ends this run here
st.text(f"count: {count}")
