"""What a chat template says about tool calling: does it render tools, render calls, and in which syntax.

The syntax is recognised by the literal markers knowledge/tool_calling.yaml lists per call format (the
strings each engine's parser looks for); the first format whose markers all appear wins, in the order
the knowledge file lists them (more specific formats first).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from calculators.errors import ServewiseInputError, json_problem
from calculators.i18n import _
from knowledge.tool_calling import CallFormat, Markers

#: The template reads the request's tool list (`tools` variable) / renders an assistant's calls.
_TOOLS_VARIABLE = re.compile(r"\btools\b")
_TOOL_CALLS_VARIABLE = re.compile(r"\btool_calls\b")


@dataclass(frozen=True)
class TemplateToolSupport:
    """Tool-calling facts read from one chat template's text."""

    renders_tools: bool  # the template reads the request's `tools`
    renders_tool_calls: bool  # the template writes an assistant message's `tool_calls` back into the prompt
    call_format: str | None  # id of the call format whose markers it contains; None when none matches
    characters: int


def markers_match(markers: Markers, text: str) -> bool:
    """True when `text` contains every `markers_all`, one of `markers_any` (when given), none of `not_markers`."""
    if markers.markers_all and not all(m in text for m in markers.markers_all):
        return False
    if markers.markers_any and not any(m in text for m in markers.markers_any):
        return False
    if markers.patterns_any and not any(re.search(p, text) for p in markers.patterns_any):
        return False
    return not any(m in text for m in markers.not_markers)


def analyse_template(text: str, formats: Sequence[CallFormat]) -> TemplateToolSupport:
    """Read a chat template's text: tools and tool-call rendering, and the first call format it matches."""
    renders_calls = bool(_TOOL_CALLS_VARIABLE.search(text))
    found = next((f.id for f in formats if markers_match(f, text)), None) if renders_calls else None
    return TemplateToolSupport(
        renders_tools=bool(_TOOLS_VARIABLE.search(text)),
        renders_tool_calls=renders_calls,
        call_format=found,
        characters=len(text),
    )


def chat_template_from_tokenizer_config(text: str, source: str = "tokenizer_config.json") -> str:
    """The default chat template in a tokenizer_config.json's text (a string, or the entry named 'default')."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ServewiseInputError(_("{source} is not valid JSON ({msg} at line {lineno})").format(
                                    source=source, msg=json_problem(exc.msg), lineno=exc.lineno)) from None
    if not isinstance(data, dict):
        raise ServewiseInputError(_("{source} holds no JSON object").format(source=source))
    template = data.get("chat_template")
    if isinstance(template, list):
        named = {e.get("name"): e.get("template") for e in template if isinstance(e, dict)}
        template = named.get("default") or next(iter(named.values()), None)
    if not isinstance(template, str) or not template.strip():
        raise ServewiseInputError(_("{source} has no chat_template (the model may keep it in "
                                    "chat_template.jinja)").format(source=source))
    return template


def read_template_file(path: str | Path) -> str:
    """A chat template from a file: tokenizer_config.json (its chat_template) or a .jinja text file."""
    file = Path(path)
    try:
        text = file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ServewiseInputError(_("{name} cannot be read as text ({exc})").format(name=file.name, exc=exc)) from None
    if file.suffix == ".json":
        return chat_template_from_tokenizer_config(text, file.name)
    if not text.strip():
        raise ServewiseInputError(_("{name} is empty").format(name=file.name))
    return text


def chat_template_from_text(text: str, source: str) -> str:
    """A pasted chat template, or the one inside a pasted tokenizer_config.json (a JSON object)."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        if not text.strip():
            raise ServewiseInputError(_("{source} is empty").format(source=source)) from None
        return text
    if isinstance(data, dict):
        return chat_template_from_tokenizer_config(text, source)
    raise ServewiseInputError(_("{source} is JSON but not a tokenizer_config.json object").format(source=source))
