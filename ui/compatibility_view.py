"""Sections of the tool-call and embedding checks (verdict tables, one expander of reasons per engine) and the
memoised ingestion-next-to-chat simulation."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd
import streamlit as st

from calculators.checks.embeddings import EmbeddingCheck
from calculators.checks.tool_calls import ToolCallCheck
from calculators.engines import display_name
from calculators.i18n import _
from calculators.simulator.engines import default_policy
from calculators.simulator.ingestion import IngestionBursts, IngestionTradeoff, catalog_cost, ingestion_tradeoff
from calculators.simulator.workload import LengthDistribution, WorkloadSpec
from knowledge.loader import load_knowledge
from knowledge.sources import source_url
from reports.compatibility import (
    call_format_text,
    embedding_reason_text,
    parser_text,
    tool_reason_text,
    verdict_label,
)
from reports.numbers import number
from reports.speed_text import basis_line
from reports.tables import flag_pieces, literal_markdown, literal_with_flags
from ui.state_cache import per_input_state

_ICONS = {
    "works": ":material/check_circle:", "will-match": ":material/check_circle:",
    "needs-flags": ":material/build:", "will-not-parse": ":material/cancel:", "will-not-match": ":material/cancel:",
    "unknown": ":material/help:", "not-served": ":material/block:",
}


def tool_checks_table(checks: Sequence[ToolCallCheck]) -> pd.DataFrame:
    """One row per engine: verdict, call format, parser and flags to add/remove (tool_choice: `tool_choice_line`)."""
    rows = []
    for c in checks:
        rows.append({
            _("Engine"): display_name(c.engine),
            _("Verdict"): verdict_label(c.verdict),
            _("Call format"): call_format_text(c.call_format),
            _("Parser"): parser_text(c.parser) or (f"({parser_text(c.recommended_parser)})"
                                                    if c.recommended_parser and not _sets_parser(c) else "-"),
            # one column for both: with a column each the table ran ~90 px past the page at 1024 px
            _("Flags to add or remove"): "; ".join(
                [*([_("add: {flags}").format(flags=flag_pieces(c.flags_to_add))] if c.flags_to_add else []),
                 *([_("remove: {flags}").format(flags=flag_pieces(c.flags_to_remove))] if c.flags_to_remove else [])],
            ) or "-",
        })
    return pd.DataFrame(rows)


def _sets_parser(check: ToolCallCheck) -> bool:
    """True when a flag to add names the recommended parser (`--tool-call-parser llama3_json`): the Parser column
    then leaves it to that cell. Said twice, "(llama3_json)" and the flag with its value as one unbreakable code
    span, the verdicts ran 4 px past the page at 1024 px in Spanish."""
    return any(piece.rsplit(" ", 1)[-1] == check.recommended_parser for piece in check.flags_to_add)


def tool_choice_line(checks: Sequence[ToolCallCheck]) -> str:
    """The tool_choice modes each engine honours, in one sentence (the API's own values, quoted).

    Said under the verdicts rather than as their last column: with the flags drawn whole (never broken at a
    hyphen) a fifth column took the table 41 px (English) and 58 px (Spanish) past the page at 1024 px.
    """
    parts = []
    for c in checks:
        modes = [f'"{mode}"' for mode, honoured in c.tool_choice.items() if honoured]
        parts.append(f"{display_name(c.engine)} {', '.join(modes) or '-'}")
    return _("tool_choice honoured: {engines}").format(engines="; ".join(parts))


def embedding_checks_table(checks: Sequence[EmbeddingCheck]) -> pd.DataFrame:
    """One row per engine: the engine's pooling, normalisation, dimension and input limit next to the verdict."""
    rows = []
    index = _("index")
    for c in checks:
        rows.append({
            _("Engine"): display_name(c.engine),
            _("Verdict"): verdict_label(c.verdict),
            _("Pooling"): f"{c.pooling or '-'} ({index}: {c.reference_pooling or '?'})",
            _("L2-normalised"): _yes_no(c.normalised) + f" ({index}: {_yes_no(c.reference_normalised)})",
            _("Dimension"): f"{c.output_dimension or '-'} ({index}: {c.reference_dimension or '?'})",
            _("Input limit (tokens)"): "-" if c.max_input_tokens is None else number(c.max_input_tokens),
            _("Longer inputs"): c.over_length,
            _("Flags to add"): flag_pieces(c.flags_to_add) or "-",
        })
    return pd.DataFrame(rows)


def _yes_no(value: bool | None) -> str:
    return "?" if value is None else (_("yes") if value else _("no"))


def _sources_line(sources: Sequence[str]) -> str:
    links = []
    for source in sources:
        url = source_url(source) if ":" in source and not source.startswith("knowledge/") else None
        label = literal_markdown(source.rsplit("/", 1)[-1])
        if source.startswith("knowledge/chat_templates/"):
            label += " " + _("(where it was read: SOURCES.md in that folder)")
        links.append(f"[{label}]({url})" if url else label)
    return " · ".join(links)


def show_tool_reasons(checks: Sequence[ToolCallCheck]) -> None:
    """Per engine: the reasons in order, the exact flags, and the sources they rest on."""
    for c in checks:
        with st.expander(f"{display_name(c.engine)}: {verdict_label(c.verdict)}", icon=_ICONS.get(c.verdict)):
            st.markdown("\n".join(f"- {literal_with_flags(tool_reason_text(r.code, r.values))}" for r in c.reasons))
            if c.flags_to_add:
                st.code(" ".join(c.flags_to_add), language="bash")
            st.caption(_("Parallel tool calls: {text}").format(text=_(c.parallel_tool_calls)))
            st.caption(_("Sources: {links}").format(links=_sources_line(c.sources)))


def show_embedding_reasons(checks: Sequence[EmbeddingCheck]) -> None:
    """Per engine: the reasons in order, the exact flags, and the sources they rest on."""
    for c in checks:
        with st.expander(f"{display_name(c.engine)}: {verdict_label(c.verdict)}", icon=_ICONS.get(c.verdict)):
            st.markdown("\n".join(f"- {literal_with_flags(embedding_reason_text(r.code, r.values))}"
                                   for r in c.reasons))
            if c.flags_to_add:
                st.code(" ".join(c.flags_to_add), language="bash")
            st.caption(_("Sources: {links}").format(links=_sources_line(c.sources)))


# Two 600-request simulations per state (a few hundred milliseconds): memoised per input state and language
# (ui.state_cache); the result is never mutated, so sessions share it.
@per_input_state(max_entries=16, copy=False)
def ingestion_run(model_id: str, gpu_id: str, engine: str, rate: float, docs: int, doc_tokens: int,
                  every_s: float) -> tuple[str, IngestionTradeoff]:
    """The memory model's basis text and the shared-versus-separate simulation for one ingestion state."""
    basis = catalog_cost(load_knowledge(), model_id, gpu_id, engine)
    workload = WorkloadSpec.checked(
        n_requests=600, rate_per_s=rate, seed=1,
        prompt=LengthDistribution(kind="lognormal", median=800, sigma=0.6),
        output=LengthDistribution(kind="lognormal", median=250, sigma=0.6),
    )
    bursts = IngestionBursts.checked(n_bursts=2, documents_per_burst=docs, every_s=every_s, first_burst_s=20.0,
                                     burst_spread_s=2.0, prompt=LengthDistribution(value=doc_tokens))
    return f"{basis.basis}. {basis_line(basis.speed_basis)}", ingestion_tradeoff(
        workload, bursts, default_policy(engine), basis.cost, basis.kv_capacity_tokens)
