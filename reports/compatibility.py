"""Tool-call and embedding checks as text: one sentence per reason code, Markdown tables and JSON data."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from calculators.checks.embeddings import EmbeddingCheck
from calculators.checks.tool_calls import ToolCallCheck
from calculators.engines import display_name
from calculators.i18n import N_, _, translated_word
from calculators.wizard.scoring import CheckedVerdict
from knowledge.loader import load_knowledge
from reports.json_text import json_document
from reports.tables import flag_pieces, literal_with_flags

#: Reason code -> sentence with {placeholders} filled from the reason's values (English source text).
_TOOL_REASONS = {
    "template-no-tools": N_(
        "The chat template ({template}) has no tool syntax: the model was not given "
        "tools to call."
    ),
    "format-unknown": N_("The chat template was not read ({template}); which call syntax the model emits is unknown."),
    "no-parser-for-format": N_("No parser of this engine at the pinned version reads the {call_format} call syntax."),
    "parser-missing": N_("No tool-call parser is chosen; add {flag}\u00a0{parser}."),
    "auto-needs-template": N_("'{value}' detects the parser from the chat template, which was not read."),
    "auto-not-detected": N_(
        "Automatic detection finds no parser for this template; name it with {flag}\u00a0{parser}."
    ),
    "auto-detected": N_("Automatic detection picks the {parser} parser from the template."),
    "parser-not-registered": N_(
        "The parser '{parser}' is not registered at the pinned version; the server will "
        "not start."
    ),
    "parser-wrong-format": N_("The {parser} parser does not read {call_format} calls; use {wanted}."),
    "enable-flag-missing": N_("The parser is named but {flags} is missing, so tool_choice 'auto' is refused."),
    "parser-reads-format": N_("The {parser} parser reads the model's {call_format} calls."),
    "template-engine-disabled": N_("{flags} turns the Jinja template engine off; requests with tools are refused."),
    "template-not-read": N_("This engine parses through the chat template, which was not read ({template})."),
    "template-parser-not-inferred": N_(
        "No tool parser is inferred from this template, so {call_format} calls stay in "
        "the text."
    ),
    "template-parser-inferred": N_("The {parser} parser is inferred from the template and reads {call_format} calls."),
    "template-no-calls": N_("The template never renders an assistant's tool calls; calls come back as plain text."),
    "template-renders-calls": N_(
        "The template renders tool calls, so the engine builds a {call_format} parser "
        "from it."
    ),
    "package-not-read": N_("The model package decides; check its tools capability with {check}."),
    "package-no-tools-capability": N_("The template does not mention tools: requests with tools are refused."),
    "engine-not-modelled": N_("servewise does not model this engine's tool calling."),
    "package-tools-capability": N_(
        "The template mentions tools (tools capability) and {call_format} calls are parsed; a library package may ship "
        "its own template instead: {check} shows its capabilities."
    ),
}

_EMBEDDING_REASONS = {
    "not-served": N_("This engine serves no embeddings endpoint ({how})."),
    "runner-flag-missing": N_("Embeddings need {flag} on the command line."),
    "pooling-unknown": N_("Pooling cannot be compared (reference {reference}, engine {served})."),
    "pooling-differs": N_("The engine pools with {served}; the index used {reference}."),
    "pooling-matches": N_("Pooling matches ({pooling})."),
    "pooling-mapped": N_("The engine reads the {reference} pooling setting as {served}: {note}"),
    "pooling-from-conversion": N_(
        "The GGUF converter writes the {pooling} pooling of the sentence-transformers "
        "files."
    ),
    "normalisation-unknown": N_("Whether the reference normalises is unknown (no modules.json was read)."),
    "normalisation-differs": N_("The engine's vectors are {served_text}; the index's are {reference_text}."),
    "normalisation-matches": N_("Normalisation matches."),
    "dimension-unknown": N_("The output dimension cannot be compared."),
    "dimension-differs": N_("The engine returns {served}-dimensional vectors; the index holds {reference} ({dense})."),
    "dimension-matches": N_("Both give {dimension}-dimensional vectors."),
    "over-length-rejected": N_("Inputs over {limit}\u00a0tokens are rejected, where sentence-transformers truncates."),
    "over-length-truncated": N_("Over-long inputs are truncated: {how}"),
    "batch-too-small": N_("One input must fit one batch of {limit}\u00a0tokens; the model takes {needed}. {note}"),
    "matryoshka-needs-config": N_(
        "The model supports Matryoshka dimensions {range}, but requests for fewer dimensions are refused unless "
        "the config says so ({flag})."
    ),
}


def _fill(template: str, values: dict[str, str]) -> str:
    # a value quoting the knowledge base's prose (how an engine truncates, what it serves) has its Spanish in the
    # catalog; names, flags and numbers have none and stay as they are
    values = {key: _(value) if isinstance(value, str) and value else value for key, value in values.items()}
    try:
        return _(template).format(**values)
    except (KeyError, IndexError):
        return _(template)


def tool_reason_text(code: str, values: dict[str, str]) -> str:
    """The sentence for one tool-call reason in the reader's language (a call format by its name, not its id)."""
    if "call_format" in values:
        values = {**values, "call_format": call_format_text(values["call_format"])}
    return _fill(_TOOL_REASONS.get(code, code), values)


def embedding_reason_text(code: str, values: dict[str, str]) -> str:
    """The sentence for one embedding reason in the reader's language."""
    filled = dict(values)
    for key in ("served", "reference"):
        if values.get(key) in ("True", "False"):
            filled[f"{key}_text"] = _("L2-normalised") if values[key] == "True" else _("not normalised")
    return _fill(_EMBEDDING_REASONS.get(code, code), filled)


def verdict_label(verdict: str) -> str:
    """A verdict slug as words."""
    labels = {
        "works": _("works"), "needs-flags": _("needs flags"), "will-not-parse": _("will not parse"),
        "unknown": _("unknown"), "will-match": _("vectors will match"), "will-not-match": _("vectors will not match"),
        "not-served": _("no embeddings endpoint"),
    }
    return labels.get(verdict, verdict)


#: Parsers that are not a parser name an engine takes on its command line but the chat template itself (engines
#: that build their parser from the template): what a person reads for them. Real parser names stay verbatim.
_TEMPLATE_PARSERS = {
    "jinja-template": N_("built from the Jinja chat template"),
    "gguf-chat-template": N_("built from the GGUF's chat template"),
}


def call_format_text(call_format: str) -> str:
    """A call format id as a person reads it: the format's name in knowledge/tool_calling.yaml ("Llama 3 JSON" for
    `llama3-json`, in the reader's language), or 'none' / 'unknown' in words; an id the file lacks stays as it is."""
    if call_format == "none":
        return _("none (the template has no tool syntax)")
    if call_format == "unknown":
        return _("unknown")
    names = {entry.id: entry.name for entry in load_knowledge().tool_calling.call_formats}
    return _(names[call_format]) if call_format in names else call_format


def parser_text(parser: str | None) -> str | None:
    """A parser as a person reads it: an engine's own parser name verbatim, a template-built parser in words."""
    if parser is None:
        return None
    return translated_word(_TEMPLATE_PARSERS, parser)


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def tool_checks_markdown(checks: Sequence[ToolCallCheck]) -> str:
    """One row per engine: verdict, parser, flags to add and the first reason."""
    header = [
        "| " + " | ".join((_("engine"), _("verdict"), _("parser"), _("flags to add"), _("why"))) + " |",
        "|---|---|---|---|---|",
    ]
    rows = [
        "| "
        + " | ".join(
            _cell(x)
            for x in (
                display_name(c.engine),
                verdict_label(c.verdict),
                parser_text(c.parser or c.recommended_parser) or "-",
                literal_with_flags(flag_pieces(c.flags_to_add)) or "-",
                " ".join(tool_reason_text(r.code, r.values) for r in c.reasons),
            )
        )
        + " |"
        for c in checks
    ]
    return "\n".join(header + rows)


def embedding_checks_markdown(checks: Sequence[EmbeddingCheck]) -> str:
    """One row per engine: verdict, pooling, normalisation, dimension, input limit and flags to add."""
    header = [
        "| " + " | ".join((_("engine"), _("verdict"), _("pooling"), _("normalised"), _("dimension"),
                           _("input limit (tokens)"), _("flags to add"))) + " |",
        "|---|---|---|---|---|---|---|",
    ]
    rows = []
    for c in checks:
        norm = "-" if c.normalised is None else (_("yes") if c.normalised else _("no"))
        cells = (
            display_name(c.engine), verdict_label(c.verdict), c.pooling or "-", norm,
            "-" if c.output_dimension is None else str(c.output_dimension),
            "-" if c.max_input_tokens is None else str(c.max_input_tokens),
            literal_with_flags(flag_pieces(c.flags_to_add)) or "-",
        )
        rows.append("| " + " | ".join(_cell(x) for x in cells) + " |")
    return "\n".join(header + rows)


def checks_json(checks: Sequence[ToolCallCheck | EmbeddingCheck]) -> str:
    """The checks as JSON data (every field, reasons with their codes, values and sources)."""
    return json_document([dataclasses.asdict(c) for c in checks], indent=2, ensure_ascii=False)


def checked_verdict_text(checked: CheckedVerdict) -> str:
    """A wizard rule built from a compatibility verdict, in the reader's language (Markdown): the model, what was
    checked, the verdict's explanation, then each flag that fixes it as a code span holding its value
    ("Llama 3.1 8B, tool calls: ...: `--enable-auto-tool-choice` `--tool-call-parser llama3_json`"): as plain prose
    "--enable-auto-tool-choice" broke at its hyphens."""
    sentence = (_("{model}, tool calls: {explanation}") if checked.checked == "tool calls"
                else _("{model}, embeddings: {explanation}"))
    fix = ": " + " ".join(f"`{flag}`" for flag in checked.flags) if checked.flags else ""
    return sentence.format(model=checked.model, explanation=_(checked.explanation)) + fix
