"""SGLang's tool calling: --tool-call-parser names the parser, or `auto` detects it from the chat template.

Without a parser, python/sglang/srt/entrypoints/openai/serving_chat.py leaves calls in the text; `auto`
follows the ordered rules of python/sglang/srt/parser/template_detection.py (knowledge/tool_calling.yaml
lists the ones this catalog's templates can match). The rule is the one every launch-flag engine shares.
"""

from calculators.checks.tool_calls import flag_parser_rule

TOOL_CALL_RULE = flag_parser_rule
