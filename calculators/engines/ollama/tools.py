"""Ollama's tool calling: the model package decides (server/images.go, server/routes.go).

A model has the tools capability when its Go TEMPLATE uses .Tools, its built-in PARSER supports tools, or
its GGUF chat template contains "tools" or "tool_call" (chatTemplateHasToolSupport); a request with tools
to a model without it is refused. A model with only the GGUF's Jinja template runs in native mode, where the
bundled llama-server parses the calls from that template.
"""

from calculators.checks.launch_flags import CommandFlags
from calculators.checks.tool_calls import ToolCallCheck, ToolDraft

#: substrings server/images.go chatTemplateHasToolSupport looks for in a GGUF chat template
_TOOLS_CAPABILITY_MARKERS = ("tools", "tool_call")


def tool_call_rule(draft: ToolDraft, command: CommandFlags) -> ToolCallCheck:
    """Works when the model's template gives it the tools capability; a library package may differ."""
    engine, model = draft.engine, draft.model
    if model.template_text is None:
        draft.say("package-not-read", check=engine.check_command or "")
        return draft.done("unknown", parser_ready=False)
    if not any(marker in model.template_text for marker in _TOOLS_CAPABILITY_MARKERS):
        draft.say("package-no-tools-capability", model.source)
        return draft.done("will-not-parse", parser_ready=False)
    draft.parser = engine.parsers[0].name
    draft.say("package-tools-capability", call_format=model.call_format, check=engine.check_command or "")
    return draft.done("works", parser_ready=True)
