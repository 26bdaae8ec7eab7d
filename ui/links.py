"""Links between pages that degrade gracefully when a page runs outside app.py's navigation."""

from __future__ import annotations

import streamlit as st
from streamlit.errors import StreamlitPageNotFoundError


def page_link(path: str, *, label: str, icon: str | None = None, query_params: dict[str, str] | None = None) -> bool:
    """Draw a link to another page of the app; return False (drawing nothing) if app.py does not register it.

    A page run on its own (tests, or a page not yet in the navigation) has no other pages to link to.
    """
    try:
        st.page_link(path, label=label, icon=icon, query_params=query_params)
    except StreamlitPageNotFoundError:
        return False
    return True
