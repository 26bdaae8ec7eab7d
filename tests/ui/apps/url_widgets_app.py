"""A tiny page exercising every URL-bound widget wrapper (used by tests/ui/test_url_widgets.py and the browser test)."""

import streamlit as st

from ui import url_widgets

NAMES = {"h100-sxm-80gb": "NVIDIA H100 SXM5 80 GB", "mlx-lm": "MLX LM", "vllm": "vLLM"}

choice = url_widgets.selectbox("choice", ["a", "b"], key="t_choice")
count = url_widgets.number("count", key="t_count", min_value=1, max_value=10, value=3)
flag = url_widgets.toggle("flag", key="t_flag")
picked = url_widgets.multiselect("picked", ["p", "q"], key="t_picked")
named = url_widgets.selectbox("named", list(NAMES), key="t_named", labels=NAMES)
several = url_widgets.multiselect("several", list(NAMES), key="t_several", labels=NAMES)
url_widgets.show_url_notes()
st.text(f"values: {choice} {count} {flag} {picked}")
st.text(f"named: {named} {several}")
