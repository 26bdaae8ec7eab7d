"""llama-server's tool calling: the Jinja chat template is the parser (common/chat.cpp).

--jinja is on by default (common/common.h); --no-jinja makes the server refuse requests with tools
(tools/server/server-common.cpp). A template that renders an assistant message's tool_calls gets a
parser built from it (a dedicated handler or the differential autoparser); one that never renders them
leaves calls in the content (common/chat-auto-parser-generator.cpp, common/jinja/caps.cpp).
"""

from calculators.checks.launch_flags import CommandFlags
from calculators.checks.tool_calls import ToolCallCheck, ToolDraft


def tool_call_rule(draft: ToolDraft, command: CommandFlags) -> ToolCallCheck:
    """Works when the Jinja engine is on and the template renders tool calls; the template is the parser."""
    engine, model = draft.engine, draft.model
    disabled = [flag for flag in engine.disable_flags if command.has(flag)]
    if disabled:
        draft.say("template-engine-disabled", flags=" ".join(disabled))
        draft.remove.extend(disabled)
        return draft.done("needs-flags", parser_ready=False)
    if model.template is None:
        draft.say("template-not-read", model.source, template=model.template_of or model.label)
        return draft.done("unknown", parser_ready=False)
    if not model.template.renders_tool_calls:
        draft.say("template-no-calls", model.source)
        return draft.done("will-not-parse", parser_ready=False)
    draft.parser = engine.parsers[0].name
    draft.say("template-renders-calls", call_format=model.call_format)
    return draft.done("works", parser_ready=True)
