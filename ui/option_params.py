"""Notes for shared links whose option values a page cannot use (Streamlit drops them silently)."""

from __future__ import annotations

from collections.abc import Sequence

import streamlit as st


def note_unusable_option_param(key: str, options: Sequence[str], label: str) -> None:
    """Before a bound selectbox is drawn: if the URL holds a value not among `options`, say so visibly.

    Streamlit ignores an invalid bound value and shows the default; this keeps that fallback from being
    silent. Call it just before creating the widget with the same `key` and options.
    """
    raw = st.query_params.get(key)
    if raw is None or raw == "" or raw in options:
        return
    st.info(
        f"The link asked for {label} `{raw}`, which servewise does not know; showing `{options[0]}` instead. "
        f"Known values: {', '.join(f'`{o}`' for o in options)}.",
        icon=":material/link_off:",
    )
