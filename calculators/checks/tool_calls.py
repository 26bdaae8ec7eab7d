"""Will a model's tool calls parse on an engine started with a given command?

A call parses when the model emits a syntax (its chat template says which) that the parser the engine
picks can read. How an engine picks its parser is that engine's rule (`EngineAdapter.tool_call_rule`,
in engines/<engine>/tools.py); the rule every launch-flag engine shares is `flag_parser_rule` here.
Every name a rule uses comes from the engine's entry in knowledge/tool_calling.yaml. The result is
data: a verdict, the parser, the flags to add, and coded reasons with the source each one rests on.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from calculators.checks.chat_template import TemplateToolSupport, analyse_template, markers_match
from calculators.checks.launch_flags import CommandFlags, checks_per_engine
from calculators.checks.reason import Reason
from calculators.errors import ServewiseInputError
from calculators.i18n import _
from knowledge.tool_calling import TEMPLATES_DIR, EngineToolCalling, ToolCallingFile

Verdict = Literal["works", "needs-flags", "will-not-parse", "unknown"]

@dataclass(frozen=True)
class ToolModel:
    """What the check knows about a model: its call format and, when read, its chat template."""

    label: str
    call_format: str  # a call format id, "none" (no tool syntax in the template) or "unknown"
    template: TemplateToolSupport | None = None
    template_text: str | None = None
    template_of: str | None = None
    source: str = ""


@dataclass(frozen=True)
class ToolCallCheck:
    """The tool-call verdict for one model on one engine and launch command."""

    engine: str
    model: str
    verdict: Verdict
    call_format: str
    parser: str | None  # the parser the engine would use as launched (None: none chosen)
    recommended_parser: str | None  # a parser of this engine that reads the model's format
    flags_to_add: tuple[str, ...]
    flags_to_remove: tuple[str, ...]
    tool_choice: dict[str, bool]  # auto / none / required / named -> honoured as launched
    parallel_tool_calls: str
    reasons: tuple[Reason, ...]
    sources: tuple[str, ...]


def tool_model_from_template(text: str, kb: ToolCallingFile, label: str, source: str) -> ToolModel:
    """A model known only by its chat template text (tokenizer_config.json, GGUF or a .jinja file)."""
    support = analyse_template(text, kb.call_formats)
    call_format = support.call_format or ("none" if not support.renders_tool_calls else "unknown")
    return ToolModel(label, call_format, support, text, template_of=label, source=source)


def tool_model_from_catalog(model_id: str, kb: ToolCallingFile) -> ToolModel:
    """A catalog model: its call format from tool_calling.yaml and the real template file named there."""
    entry = kb.catalog_entry(model_id)
    if entry is None:
        return ToolModel(model_id, "unknown", source="knowledge/tool_calling.yaml (no entry for this model)")
    if entry.template is None:
        return ToolModel(
            model_id, entry.call_format, template_of=entry.template_of, source="knowledge/tool_calling.yaml"
        )
    path = TEMPLATES_DIR / entry.template
    text = path.read_text(encoding="utf-8")
    support = analyse_template(text, kb.call_formats)
    return ToolModel(
        model_id, entry.call_format, support, text, template_of=entry.template_of,
        source=f"knowledge/chat_templates/{entry.template}",  # knowledge/chat_templates/SOURCES.md cites each file
    )


def recommended_parser(engine: EngineToolCalling, call_format: str) -> str | None:
    """The first parser of this engine that reads `call_format`, as the knowledge file lists them."""
    return next((p.name for p in engine.parsers if call_format in p.formats), None)


def parser_reads(engine: EngineToolCalling, parser: str | None, call_format: str) -> bool:
    """True when the named parser of this engine reads `call_format`."""
    return any(p.name == parser and call_format in p.formats for p in engine.parsers)


def auto_parser(engine: EngineToolCalling, text: str) -> str | None:
    """What the engine's automatic choice picks from the template: the first auto rule that matches."""
    return next((rule.parser for rule in engine.auto_rules if markers_match(rule, text)), None)


def _tool_choice(engine: EngineToolCalling, parser_ready: bool) -> dict[str, bool]:
    """Which tool_choice modes are honoured once launched: 'needs-parser' ones only with a parser."""
    modes = engine.tool_choice.model_dump()
    return {mode: value == "yes" or (value == "needs-parser" and parser_ready) for mode, value in modes.items()}


@dataclass
class ToolDraft:
    """The check's working state while an engine's rule decides: reasons, flags, the parser chosen."""

    engine_id: str
    engine: EngineToolCalling
    model: ToolModel
    reasons: list[Reason] = field(default_factory=list)
    add: list[str] = field(default_factory=list)
    remove: list[str] = field(default_factory=list)
    parser: str | None = None

    def say(self, code: str, source: str | None = None, **values: str) -> None:
        self.reasons.append(Reason(code, source or self.engine.source, dict(values)))

    def done(self, verdict: Verdict, parser_ready: bool) -> ToolCallCheck:
        recommended = recommended_parser(self.engine, self.model.call_format)
        cited = [self.model.source, self.engine.source, *self.engine.see_also, *(r.source for r in self.reasons)]
        sources = tuple(dict.fromkeys(cited))
        return ToolCallCheck(
            engine=self.engine_id,
            model=self.model.label,
            verdict=verdict,
            call_format=self.model.call_format,
            parser=self.parser,
            recommended_parser=recommended,
            flags_to_add=tuple(self.add),
            flags_to_remove=tuple(self.remove),
            tool_choice=_tool_choice(self.engine, parser_ready),
            parallel_tool_calls=self.engine.parallel_tool_calls,
            reasons=tuple(self.reasons),
            sources=tuple(s for s in sources if s),
        )


def _model_gate(draft: ToolDraft) -> ToolCallCheck | None:
    """Verdicts that follow from the model alone: no tool syntax, or nothing known about it."""
    model = draft.model
    if model.call_format == "none":
        draft.say("template-no-tools", model.source, template=model.template_of or model.label)
        draft.add.extend(f"{flag} FILE" for flag in draft.engine.template_flags)
        return draft.done("will-not-parse", parser_ready=False)
    if model.call_format == "unknown":
        draft.say("format-unknown", model.source, template=model.template_of or model.label)
        return draft.done("unknown", parser_ready=False)
    if recommended_parser(draft.engine, model.call_format) is None:
        draft.say("no-parser-for-format", call_format=model.call_format)
        return draft.done("will-not-parse", parser_ready=False)
    return None


def flag_parser_rule(draft: ToolDraft, command: CommandFlags) -> ToolCallCheck:
    """Engines whose parser is named on the command line (vLLM, SGLang), optionally 'auto'."""
    engine, model = draft.engine, draft.model
    wanted = recommended_parser(engine, model.call_format)
    given = command.value(engine.parser_flag) if engine.parser_flag else None
    missing_enable = [flag for flag in engine.enable_flags if not command.has(flag)]
    if given is None or given is True:
        draft.say("parser-missing", flag=engine.parser_flag or "", parser=wanted or "")
        draft.add.extend([*engine.enable_flags, f"{engine.parser_flag} {wanted}"])
        return draft.done("needs-flags", parser_ready=False)
    if engine.auto_value is not None and given == engine.auto_value:
        if model.template_text is None:
            draft.say("auto-needs-template", value=str(given))
            return draft.done("unknown", parser_ready=False)
        given = auto_parser(engine, model.template_text)
        if given is None:
            draft.say("auto-not-detected", flag=engine.parser_flag or "", parser=wanted or "")
            draft.add.append(f"{engine.parser_flag} {wanted}")
            draft.remove.append(f"{engine.parser_flag} {engine.auto_value}")
            return draft.done("needs-flags", parser_ready=False)
        draft.say("auto-detected", parser=given)
    draft.parser = str(given)
    if engine.registered_names and draft.parser not in engine.registered_names:
        draft.say("parser-not-registered", parser=draft.parser)
        draft.remove.append(f"{engine.parser_flag} {draft.parser}")
        draft.add.append(f"{engine.parser_flag} {wanted}")
        return draft.done("will-not-parse", parser_ready=False)
    if not parser_reads(engine, draft.parser, model.call_format):
        draft.say("parser-wrong-format", parser=draft.parser, call_format=model.call_format, wanted=wanted or "")
        draft.remove.append(f"{engine.parser_flag} {draft.parser}")
        draft.add.append(f"{engine.parser_flag} {wanted}")
        return draft.done("will-not-parse", parser_ready=False)
    if missing_enable:
        draft.say("enable-flag-missing", flags=" ".join(missing_enable))
        draft.add.extend(missing_enable)
        return draft.done("needs-flags", parser_ready=False)
    draft.say("parser-reads-format", parser=draft.parser, call_format=model.call_format)
    return draft.done("works", parser_ready=True)


def check_tool_calls(
    model: ToolModel, engine_id: str, command: CommandFlags | None, kb: ToolCallingFile
) -> ToolCallCheck:
    """Verdict, parser and flags for `model`'s tool calls on `engine_id` launched with `command`.

    `command` None means the engine's defaults (a launch command with no tool flags).
    """
    engine = kb.engines.get(engine_id)
    if engine is None:
        raise ServewiseInputError(_("no tool-calling knowledge for engine {engine_id!r}").format(engine_id=engine_id))
    if command is not None and command.engine != engine_id:
        raise ServewiseInputError(_("the launch command starts {engine}, not {engine_id}").format(
                                    engine=command.engine, engine_id=engine_id))
    from calculators.engines import adapter  # the registry imports every engine's tools.py, which imports this

    rule = adapter(engine_id).tool_call_rule
    draft = ToolDraft(engine_id, engine, model)
    gated = _model_gate(draft)
    if gated is not None:
        return gated
    if rule is None:
        draft.say("engine-not-modelled")
        return draft.done("unknown", parser_ready=False)
    return rule(draft, command or CommandFlags(engine=engine_id, model=None))


def check_tool_calls_on_engines(
    model: ToolModel, engine_ids: Sequence[str], command_text: str, kb: ToolCallingFile
) -> list[ToolCallCheck]:
    """One verdict per engine; a non-empty `command_text` is that engine's launch command, the rest run defaults."""
    def one(engine_id: str, command: CommandFlags | None):
        return check_tool_calls(model, engine_id, command, kb)

    return checks_per_engine(engine_ids, command_text, one)
