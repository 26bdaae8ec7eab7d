"""JSON for programs: every export and `--json` document is written here, with plain spaces in its texts.

A page's and a terminal's text join a figure and its unit with a no-break space (calculators/units.UNIT_SPACE)
so a line never ends between them; a program reading a JSON label or note ("KV cache: 26899 blocks of 16 tokens")
splits and matches on plain spaces, so the documents written for programs carry those. Numbers stay numbers.
"""

from __future__ import annotations

import json
from typing import Any

from calculators.units import UNIT_SPACE


def plain_spaces(value: Any) -> Any:
    """`value` (a JSON-like tree of dicts, lists, tuples and scalars) with every no-break space in its strings, keys
    included, written as a plain space."""
    if isinstance(value, str):
        return value.replace(UNIT_SPACE, " ")
    if isinstance(value, dict):
        return {plain_spaces(key): plain_spaces(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [plain_spaces(item) for item in value]
    return value


def json_document(value: Any, **dumps_options: Any) -> str:
    """`value` as JSON text (json.dumps with `dumps_options`), its strings with plain spaces (see `plain_spaces`)."""
    return json.dumps(plain_spaces(value), **dumps_options)
