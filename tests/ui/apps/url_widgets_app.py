"""A tiny page exercising every URL-bound widget wrapper (used by tests/ui/test_url_widgets.py and the browser test)."""

import streamlit as st

from ui import url_widgets

NAMES = {"h100-sxm-80gb": "NVIDIA H100 SXM5 80 GB", "mlx-lm": "MLX LM", "vllm": "vLLM"}


def read() -> tuple:
    """Every widget of the page, drawn (or, under url_widgets.values_only, only looked at)."""
    return (
        url_widgets.selectbox("choice", ["a", "b"], key="t_choice"),
        url_widgets.number("count", key="t_count", min_value=1, max_value=10, value=3),
        url_widgets.toggle("flag", key="t_flag"),
        url_widgets.multiselect("picked", ["p", "q"], key="t_picked"),
        url_widgets.selectbox("named", list(NAMES), key="t_named", labels=NAMES),
        url_widgets.multiselect("several", list(NAMES), key="t_several", labels=NAMES),
    )


with url_widgets.values_only():  # what a page drawing its result before its inputs reads
    peeked = read()
choice, count, flag, picked, named, several = values = read()
url_widgets.show_url_notes()
st.text(f"values: {choice} {count} {flag} {picked}")
st.text(f"named: {named} {several}")
st.text(f"looked-at values were the widgets' own: {peeked == values}")
