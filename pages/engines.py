"""Which engines run on my hardware, load my format and have the features I need, side by side with sources."""

import streamlit as st

from calculators.i18n import N_, _
from knowledge import load_knowledge
from knowledge.currency import engine_currency
from reports.engines_tables import (
    BACKEND_NAMES,
    FEATURES,
    HARDWARE_OPTIONS,
    OS_NAMES,
    OS_OPTIONS,
    comparison_groups,
    currency_table,
    format_options,
    knob_table,
    linked_sources,
    matches,
    points_markdown,
    sources_table,
)
from reports.names import namer
from reports.tables import frame_markdown
from ui import deferred, url_widgets
from ui.markup import show_wide_table

TIERS = ("primary", "all")
TIER_LABELS = {"primary": N_("main engines"), "all": N_("all")}


@st.cache_resource
def engines_kb():
    """The curated engine records (loaded once per process)."""
    return load_knowledge().engines


@st.cache_resource
def facts_currency():
    """How current each engine's facts are (knowledge/currency.py; computed once per process)."""
    return engine_currency(load_knowledge())


engines = engines_kb()
matrix = load_knowledge().formats

st.title(_("Engines"))
st.markdown(_(
    "Ollama, llama.cpp's llama-server, vLLM, SGLang and MLX LM compared on what they run on, what they "
    "load and what they expose. Every value was read at the engine's own source; the **Version read** row "
    "and the *Where each value comes from* table say which release or commit. This is a comparison of "
    "architecture and features, not of speed: nothing here is a measurement."
))

# Notes about unusable values in a shared link go at the top, though the widgets are drawn below.
show_url_notes = url_widgets.url_notes_slot()
filters = st.container(border=True)
with filters:
    left, right = st.columns(2)
    with left:
        hardware = url_widgets.multiselect(
            _("Hardware backend"), HARDWARE_OPTIONS, key="engines_backend", placeholder=_("any backend"),
            labels=lambda backend: _(BACKEND_NAMES[backend]),
        )
        systems = url_widgets.multiselect(_("Operating system"), OS_OPTIONS, key="engines_os", placeholder=_("any OS"),
                                          labels=lambda system: _(OS_NAMES[system]))
    with right:
        formats = url_widgets.multiselect(
            _("Loads this format or quantization"),
            format_options(engines, matrix),
            key="engines_format",
            placeholder=_("any format"),
            labels=namer(load_knowledge()),
        )
        features = url_widgets.multiselect(
            _("Has these features"),
            tuple(FEATURES),
            key="engines_feature",
            placeholder=_("any feature"),
            labels=lambda feature: _(FEATURES[feature][0]),
        )
    tier = url_widgets.segmented(_("Engines"), TIERS, key="engines_tier", default="primary",
                                  labels=lambda tier: _(TIER_LABELS[tier]))
    st.caption(_(
        "An engine matches when it runs every selected backend, OS and format natively, experimentally or "
        "through a plugin (convert first and unknown do not count) and has every selected feature, with or "
        "without a launch flag. Formats are read from the formats matrix on each selected backend, as on the "
        "Formats page."
    ))

pool = [e for e in engines if tier == "all" or e.tier == "primary"]
shown = [
    e for e in pool if matches(e, hardware=hardware, systems=systems, formats=formats, features=features, matrix=matrix)
]

if not shown:
    st.info(
        _("No engine matches every filter. Remove a filter to see the closest engines."),
        icon=":material/filter_alt_off:",
    )
else:
    st.subheader(_("{shown} of {pool} engines").format(shown=len(shown), pool=len(pool)))
    # A few related attributes per table, one row per engine (reports/engines_tables.COMPARISON_GROUPS): each table
    # fits a 1024 px window whatever the number of engines. Markdown tables: read, not sorted, and drawn without
    # the browser first loading the dataframe grid's scripts (every table on this page is Markdown: one dataframe
    # anywhere makes the browser fetch the grid's scripts before the wide-table box's). The box scrolls sideways
    # only in a window narrower than the tables were laid out for (issue 21: no column hidden).
    for title, table in comparison_groups(shown):
        st.markdown(f"**{title}**")
        show_wide_table(frame_markdown(table, literal=True), one_line_names=True)
    deferred.rest_follows(page_end=show_url_notes)
    with st.expander(_("Where each value comes from (source and version read)")):
        show_wide_table(frame_markdown(linked_sources(sources_table(shown)), literal=True))

st.subheader(_("How current each engine's facts are"))
st.caption(
    _(
        "Every fact whose source is an engine's own repository, compared with the newest version the knowledge "
        "base read for that engine: read at X; the KB's newest read is Y. Docs pages on a branch and other "
        "commits cannot be ordered and are counted apart."
    )
)
currency = currency_table(facts_currency(), {e.id: e.name for e in engines})
show_wide_table(frame_markdown(currency, literal=True))

st.header(_("Settings that shape memory and concurrency"))
st.markdown(_(
    "Each engine names its knobs differently and they are not interchangeable units: vLLM's "
    "`gpu_memory_utilization` and SGLang's `mem_fraction_static` are different fractions, and "
    "llama-server divides `--ctx-size` among its `--parallel` slots."
))
with_knobs = [e.id for e in engines if e.knobs]
engine_id = url_widgets.selectbox(_("Engine"), with_knobs, key="engines_knobs", labels=namer(load_knowledge()))
chosen = next(e for e in engines if e.id == engine_id)
# Nine columns, three of them prose: laid out wide and scrolled sideways, not squeezed to a word per line.
show_wide_table(frame_markdown(linked_sources(knob_table(chosen), _("source")), literal=True), min_width_px=2200)
st.subheader(_("Strengths and limits of {engine}").format(engine=chosen.name))
st.caption(_("In our words; the numbers refer to the ideas in servewise's product brief."))
st.markdown(points_markdown(chosen))

show_url_notes()
