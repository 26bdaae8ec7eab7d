"""Babel extractor for the knowledge base's prose shown to people (`make i18n`, see babel.cfg).

The wizard's reasons and caveats live in knowledge/wizard.yaml, not in code, so `_()` cannot mark them. This
extractor yields each shown text exactly as the loader reads it; the page looks it up with `_(text)`.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import IO, Any

import yaml

#: (top-level list, field) pairs of knowledge/wizard.yaml whose text is shown to people.
SHOWN_FIELDS = (("rules", "reason"), ("caveats", "text"), ("support_status_effects", "explanation"))
#: (section, list, field) of knowledge/wizard.yaml's nested lists whose text is shown to people.
SHOWN_NESTED_FIELDS = (("compatibility_effects", "tool_calls", "explanation"),
                       ("compatibility_effects", "embeddings", "explanation"))


def extract_wizard_yaml(
    fileobj: IO[bytes], keywords: Any, comment_tags: Any, options: Any
) -> Iterator[tuple[int, str, str, list[str]]]:
    """Babel extraction method: (line number, function name, message, comments) per shown text."""
    data = yaml.safe_load(fileobj.read().decode("utf-8")) or {}
    for section, field in SHOWN_FIELDS:
        for entry in data.get(section, ()):
            text = entry.get(field)
            if isinstance(text, str) and text.strip():
                yield 0, "_", text, [f"{section}: {entry.get('id') or entry.get('status', '')}"]
    for section, listed, field in SHOWN_NESTED_FIELDS:
        for entry in (data.get(section) or {}).get(listed, ()):
            text = entry.get(field)
            if isinstance(text, str) and text.strip():
                yield 0, "_", text, [f"{section}.{listed}: {entry.get('verdict', '')}"]


def _texts_at(node: Any, path: list[str]) -> Iterator[str]:
    """Every string at a dotted path in YAML data; lists on the way are walked element by element, and a `*`
    step walks every value of a mapping (knowledge files keyed by engine id)."""
    if isinstance(node, list):
        for item in node:
            yield from _texts_at(item, path)
        return
    if not path:
        if isinstance(node, str) and node.strip():
            yield node
        return
    if isinstance(node, dict):
        if path[0] == "*":
            for value in node.values():
                yield from _texts_at(value, path[1:])
        else:
            yield from _texts_at(node.get(path[0]), path[1:])


def extract_shown_yaml(
    fileobj: IO[bytes], keywords: Any, comment_tags: Any, options: dict[str, str]
) -> Iterator[tuple[int, str, str, list[str]]]:
    """Babel extraction method for knowledge files whose prose is shown to people as it is.

    babel.cfg names the shown fields per file as dotted paths (`fields = captures.label captures.note`);
    the page looks each text up with `_(text)`.
    """
    data = yaml.safe_load(fileobj.read().decode("utf-8")) or {}
    for dotted in options.get("fields", "").split():
        for text in _texts_at(data, dotted.split(".")):
            yield 0, "_", text, [dotted]
