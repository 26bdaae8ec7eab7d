"""vLLM's tool calling: --tool-call-parser names the parser, --enable-auto-tool-choice turns it on.

Without both, vllm/renderers/online_renderer.py refuses tool_choice "auto" (and "required" or a named
tool without a parser); vllm/parser/parser_manager.py returns no tool parser unless auto tool choice
is enabled. The rule is the one every launch-flag engine shares.
"""

from calculators.checks.tool_calls import flag_parser_rule

TOOL_CALL_RULE = flag_parser_rule
