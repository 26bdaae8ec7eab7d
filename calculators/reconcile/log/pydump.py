"""Read `key=value, …` and `{'key': value, …}` dumps that Python engines print at start-up."""

from __future__ import annotations

import re

_ASSIGN = re.compile(r"(?:^|[\s,(])([A-Za-z_]\w*)=('(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"|[^,()\[\]{}\s]+)")
_DICT = re.compile(r"'([A-Za-z_]\w*)':\s*('(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"|[^,{}\[\]()]+)")


def scalar(raw: str) -> int | float | bool | str | None:
    """A printed Python scalar: 'None' -> None, 'True' -> True, '0.9' -> 0.9, "'auto'" -> 'auto'."""
    text = raw.strip().rstrip(".")
    if not text or text == "None":
        return None
    if text in ("True", "true"):
        return True
    if text in ("False", "false"):
        return False
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        return text[1:-1]
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            continue
    if text.startswith("torch."):
        return text.removeprefix("torch.")
    return text


def assignments(text: str) -> dict[str, int | float | bool | str | None]:
    """Top-level-looking `name=value` pairs of a config dump (values inside nested calls are included too)."""
    return {key: scalar(value) for key, value in _ASSIGN.findall(text)}


def dict_items(text: str) -> dict[str, int | float | bool | str | None]:
    """`'name': value` pairs of a printed dict."""
    return {key: scalar(value) for key, value in _DICT.findall(text)}
