"""Notes for shared links whose URL values a page could not use (Streamlit drops them silently)."""

from __future__ import annotations

import streamlit as st


def note_unusable_int_param(key: str, minimum: int, maximum: int) -> None:
    """Before a bound integer widget is drawn: if the URL holds a value it will reject, say so visibly.

    Streamlit ignores an invalid bound value and falls back to the default; this keeps that fallback
    from being silent. Call it just before creating the widget with the same `key` and bounds.
    """
    raw = st.query_params.get(key)
    if raw is None or raw == "":
        return
    try:
        value = int(raw)
    except ValueError:
        value = None
    if value is None or not minimum <= value <= maximum:
        st.info(
            f"The link set `{key}` to `{raw}`, which is not a whole number from {minimum} to {maximum}; "
            "the default is shown instead.",
            icon=":material/link_off:",
        )
