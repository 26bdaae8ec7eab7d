"""A tiny page exercising every URL-bound widget wrapper (used by tests/ui/test_url_widgets.py)."""

import streamlit as st

from ui import url_widgets

choice = url_widgets.selectbox("choice", ["a", "b"], key="t_choice")
count = url_widgets.number("count", key="t_count", min_value=1, max_value=10, value=3)
flag = url_widgets.toggle("flag", key="t_flag")
picked = url_widgets.multiselect("picked", ["p", "q"], key="t_picked")
url_widgets.show_url_notes()
st.text(f"values: {choice} {count} {flag} {picked}")
