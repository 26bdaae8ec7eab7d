"""MLX LM's tool calling: a parser module inferred from the chat template (mlx_lm/tokenizer_utils.py).

tokenizer_config.json's tool_parser_type names it when present; otherwise the first template marker rule
that matches picks one of mlx_lm/tool_parsers (knowledge/tool_calling.yaml `auto_rules`), and a template
no rule matches gets none: calls stay in the text. mlx_lm.server does not read tool_choice.
"""

from calculators.checks.launch_flags import CommandFlags
from calculators.checks.tool_calls import ToolCallCheck, ToolDraft, auto_parser, parser_reads


def tool_call_rule(draft: ToolDraft, command: CommandFlags) -> ToolCallCheck:
    """Works when the parser inferred from the template reads the model's call format."""
    engine, model = draft.engine, draft.model
    if model.template_text is None:
        draft.say("template-not-read", model.source, template=model.template_of or model.label)
        return draft.done("unknown", parser_ready=False)
    draft.parser = auto_parser(engine, model.template_text)
    if draft.parser is None or not parser_reads(engine, draft.parser, model.call_format):
        draft.say("template-parser-not-inferred", call_format=model.call_format, parser=draft.parser or "")
        return draft.done("will-not-parse", parser_ready=False)
    draft.say("template-parser-inferred", parser=draft.parser, call_format=model.call_format)
    return draft.done("works", parser_ready=True)
