"""Does servewise's memory model match what your engine printed at start-up?"""

import streamlit as st

from calculators.i18n import _
from knowledge.loader import load_knowledge
from ui import url_widgets
from ui.reconcile_section import render_reconcile_section

st.title(_("Check against your engine"))
st.write(_(
    "Every engine prints its own memory accounting when it starts. Paste that log: servewise reads the model, "
    "the settings and every printed figure, runs its memory model on the same inputs and marks each figure "
    "**exact** (servewise's number rounds to the printed one), **explained** (a named rule accounts for the "
    "difference) or **unexplained**."
))
render_reconcile_section(load_knowledge(), key_prefix="log", heading=False)
url_widgets.show_url_notes()  # after the section: its bound widgets record a bad link value when they are drawn
