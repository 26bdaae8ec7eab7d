"""Schema of knowledge/tool_calling.yaml: call formats, the catalog's formats, and each engine's parsers."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field, model_validator

from knowledge.common import Frozen, KnowledgeError, Sourced

Support = Literal["yes", "no", "needs-parser"]

#: The real chat templates catalog entries name (knowledge/chat_templates/SOURCES.md says where each was read).
TEMPLATES_DIR = Path(__file__).resolve().parent / "chat_templates"


class Markers(Frozen):
    """Literal substrings (and regular expressions) that identify something in a chat template's text."""

    markers_all: tuple[str, ...] = ()
    markers_any: tuple[str, ...] = ()
    not_markers: tuple[str, ...] = ()
    patterns_any: tuple[str, ...] = ()

    @model_validator(mode="after")
    def _something_to_match(self) -> Markers:
        if not (self.markers_all or self.markers_any or self.patterns_any):
            raise ValueError("give markers_all, markers_any or patterns_any")
        return self


class CallFormat(Markers, Sourced):
    """One tool-call syntax a model emits, and the template markers that reveal it.

    `id` is the slug links and JSON carry; `name` is what a person reads, as the cited source spells it.
    """

    id: str
    name: str
    shape: str


class CatalogToolFormat(Frozen):
    """Which call format a catalog chat model emits and which real template file stands for it."""

    model: str
    call_format: str  # a CallFormat id, "none" (the template has no tool syntax) or "unknown" (not read)
    template: str | None  # file under knowledge/chat_templates, None when not read
    template_of: str


class ToolParser(Frozen):
    """A parser an engine ships: its name as the engine spells it and the formats it reads."""

    name: str
    formats: tuple[str, ...] = Field(min_length=1)
    families: tuple[str, ...] = ()
    note: str | None = None


class AutoRule(Markers):
    """One rule of an engine's automatic parser choice from the chat template (first match wins)."""

    parser: str


class ToolChoiceSupport(Frozen):
    """Whether each OpenAI tool_choice mode is honoured: yes, no, or only once a parser is chosen."""

    auto: Support
    none: Support
    required: Support
    named: Support


class EngineToolCalling(Sourced):
    """How one engine picks a tool-call parser and what it honours."""

    selection: Literal["launch-flag", "chat-template", "model-package"]
    enable_flags: tuple[str, ...] = ()
    parser_flag: str | None = None
    auto_value: str | None = None
    template_flags: tuple[str, ...] = ()
    disable_flags: tuple[str, ...] = ()
    without_parser: str
    tool_choice: ToolChoiceSupport
    tool_choice_note: str | None = None
    parallel_tool_calls: str
    how: str | None = None
    check_command: str | None = None
    parsers: tuple[ToolParser, ...] = Field(min_length=1)
    auto_rules: tuple[AutoRule, ...] = ()
    auto_rules_note: str | None = None
    registered_names: tuple[str, ...] = ()
    see_also: tuple[str, ...] = ()


class ToolCallingFile(Frozen):
    """The whole of knowledge/tool_calling.yaml, cross-checked."""

    call_formats: tuple[CallFormat, ...]
    catalog_models: tuple[CatalogToolFormat, ...]
    engines: dict[str, EngineToolCalling]

    @model_validator(mode="after")
    def _formats_exist(self) -> ToolCallingFile:
        ids = {f.id for f in self.call_formats}
        for entry in self.catalog_models:
            if entry.call_format not in ids | {"none", "unknown"}:
                raise ValueError(f"catalog model {entry.model!r}: unknown call_format {entry.call_format!r}")
        for engine_id, engine in self.engines.items():
            for parser in engine.parsers:
                missing = set(parser.formats) - ids
                if missing:
                    raise ValueError(f"engine {engine_id!r} parser {parser.name!r}: unknown formats {sorted(missing)}")
                if engine.registered_names and parser.name not in engine.registered_names:
                    raise ValueError(f"engine {engine_id!r}: parser {parser.name!r} is not among registered_names")
        return self

    def format(self, format_id: str) -> CallFormat:
        """The call format with this id; KnowledgeError when there is none."""
        for call_format in self.call_formats:
            if call_format.id == format_id:
                return call_format
        raise KnowledgeError(f"tool_calling.yaml: no call format {format_id!r}")

    def catalog_entry(self, model_id: str) -> CatalogToolFormat | None:
        """The tool-call entry of a catalog model, or None when the catalog model has none."""
        return next((e for e in self.catalog_models if e.model == model_id), None)

