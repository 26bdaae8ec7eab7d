"""servewise: choose and size an LLM inference engine. This file is the app's table of contents."""

import streamlit as st

from calculators.i18n import DEFAULT_LANGUAGE, SUPPORTED_LANGUAGES, _, set_language, supported_language
from ui import deferred, url_widgets
from ui.markup import show_page_style

st.set_page_config(page_title="servewise", page_icon=":material/dns:", layout="wide")
url_widgets.keep_written_params()  # before any widget: a link write the browser may have missed is sent again

# The reader's language first: every title and message below is looked up in it. A link's `lang` wins, then
# the browser's preferred language, then English.
LANGUAGE_NAMES = {"en": "English", "es": "Español"}
browser_language = supported_language(st.context.locale) or supported_language(
    st.context.headers.get("Accept-Language")
)
preferred = SUPPORTED_LANGUAGES.index(browser_language or DEFAULT_LANGUAGE)
with st.sidebar:
    lang = url_widgets.segmented(
        "Language / Idioma", list(SUPPORTED_LANGUAGES), key="lang", labels=LANGUAGE_NAMES,
        default=SUPPORTED_LANGUAGES[preferred], selection_mode="single",
    )
set_language(lang or SUPPORTED_LANGUAGES[preferred])
with st.sidebar:
    show_page_style()  # code spans (flags, commands) never break at a hyphen

pages = [
    st.Page("pages/home.py", title=_("Home"), icon=":material/home:", default=True),
    st.Page("pages/engines.py", title=_("Engines"), icon=":material/compare_arrows:"),
    st.Page("pages/formats.py", title=_("Formats & compatibility"), icon=":material/grid_on:"),
    st.Page("pages/memory.py", title=_("Memory & capacity"), icon=":material/memory:"),
    st.Page("pages/wizard.py", title=_("Engine wizard"), icon=":material/assistant:"),
    st.Page("pages/simulator.py", title=_("Concurrency & queueing"), icon=":material/queue:"),
    st.Page("pages/planner.py", title=_("Capacity planner"), icon=":material/price_check:"),
    st.Page("pages/speed.py", title=_("Speed & calibration"), icon=":material/speed:"),
    st.Page("pages/operations.py", title=_("Operations"), icon=":material/monitoring:"),
    st.Page("pages/compatibility.py", title=_("Tool calls & embeddings"), icon=":material/handyman:"),
    st.Page(
        "pages/reconcile.py", title=_("Check against your engine"), icon=":material/fact_check:", url_path="check_log"
    ),
]
page = st.navigation(pages)
deferred.start_visit(page.url_path)  # a page's first run in this session draws its main result first
page.run()
