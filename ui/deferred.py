"""The rest of a page drawn after its main result is on screen: a visit's first run stops there, a second run follows.

Opening a shared link, the browser builds every element a page sends before it paints any of it (one React
render on a 2-core machine), so the long sections below a page's main result (tables, tabs, expanders of
facts) delayed the result itself. A page calls `rest_follows()` right after its main result: on the first run
of a page visit that ends the run there, leaving a one-line note and a fragment that reruns the whole app once the
browser has that much on screen (`FOLLOW_UP_S` after it received it) and has sent a value for every widget drawn with
one (ui/background.note_until); every other run, that follow-up and any rerun a widget change causes included, passes
straight through and draws the whole page.

A visit is declared by app.py (`start_visit`, before it runs the page): it owns the navigation, and the first run
of each page in a browser session is the one a shared link opens. A page run on its own (AppTest, or
`streamlit run pages/x.py`) has no visit declared and is always drawn whole.
"""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from calculators.i18n import _
from ui.background import note_until
from ui.run_control import end_run

#: Seconds between the browser receiving a visit's first run and asking for the rest (a timer in the browser).
#: Not sooner: the result's own element scripts (a widget's or raw HTML's chunk) are still being fetched from this
#: same server then, and a rerun served and drawn at that moment delayed the result it was meant to hurry (engines
#: link, paired runs at load 9-14: 0.05 s -> 1.21x slower than drawing everything at once; 0.5 s -> 0.73x).
FOLLOW_UP_S = 0.5
#: Key of the note's container (its CSS class is `st-key-<key>`: browser tests wait until it is gone).
NOTE_KEY = "sw_rest_follows"
_VISITED_KEY = "_sw_pages_visited"  # the pages this session has run at least once
_FIRST_RUN_KEY = "_sw_first_run_of_visit"  # True while the current run is a visit's first run


def start_visit(page_id: str) -> None:
    """Declare that this script run is about to run page `page_id` (app.py, before `page.run()`)."""
    visited: set[str] = st.session_state.setdefault(_VISITED_KEY, set())
    st.session_state[_FIRST_RUN_KEY] = page_id not in visited
    visited.add(page_id)


def is_first_run_of_visit() -> bool:
    """True while this run is the first run of a page visit that app.py declared (its rest follows)."""
    return bool(st.session_state.get(_FIRST_RUN_KEY, False))


def rest_follows(page_end: Callable[[], None] | None = None) -> None:
    """Right after a page's main result: on a visit's first run, stop here and have the browser ask for the rest.

    `page_end` is what the page draws at its very end into a placeholder above (notes about a link's values): it
    is drawn before stopping too, so the first run shows them. The note drawn in place of the rest sits below the
    result, so nothing above it moves when the rest arrives.
    """
    if not is_first_run_of_visit():
        return
    if page_end is not None:
        page_end()

    # Drawn inline during the first run (the flag is still set); on the timer's first tick the flag has been
    # cleared below, and the whole app is rerun, which draws the whole page.
    note_until(lambda: not is_first_run_of_visit(), _("The rest of this page is on its way…"), FOLLOW_UP_S,
               key=NOTE_KEY)
    st.session_state[_FIRST_RUN_KEY] = False
    end_run()
