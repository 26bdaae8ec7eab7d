"""Go `log/slog` text lines (Ollama): `time=… level=INFO source=server.go:130 msg=offload key=value …`."""

from __future__ import annotations

import re

_PAIR = re.compile(r'(?:"([^"=]+)"|([A-Za-z_][\w.]*))=("(?:[^"\\]|\\.)*"?|\[[^\]]*\]?|\S*)')
_SIZE = re.compile(r"^(\d+(?:\.\d+)?)\s*(B|KiB|MiB|GiB|TiB|KB|MB|GB|TB)$")
_SIZES = {
    "B": 1,
    "KiB": 1024,
    "MiB": 1024**2,
    "GiB": 1024**3,
    "TiB": 1024**4,
    "KB": 1000,
    "MB": 1000**2,
    "GB": 1000**3,
    "TB": 1000**4,
}


def is_slog(text: str) -> bool:
    """True for a Go slog text-handler line."""
    if text.startswith("level="):  # a paste that dropped the time
        return " msg=" in text
    return text.startswith("time=") and " level=" in text and " msg=" in text


def pairs(text: str) -> dict[str, str]:
    """All key=value pairs of a slog line, quotes removed (a cut-off quoted value is kept as far as it goes)."""
    found: dict[str, str] = {}
    for quoted_key, bare_key, raw in _PAIR.findall(text):
        key = quoted_key or bare_key
        value = raw
        if value.startswith('"'):
            value = value[1:-1] if len(value) > 1 and value.endswith('"') else value[1:]
            value = value.replace('\\"', '"')
        found[key] = value
    return found


def size(value: str) -> tuple[str, str, int] | None:
    """'127.4 GiB' -> ('127.4', 'GiB', 2**30); None when it is not a size."""
    match = _SIZE.match(value.strip())
    if not match:
        return None
    return match.group(1), match.group(2), _SIZES[match.group(2)]


def size_list(value: str) -> list[tuple[str, str, int]]:
    """'[22.0 GiB 22.0 GiB]' -> one size per device."""
    tokens = value.strip().strip("[]").split()
    out = []
    # strict=False: a trailing token without its unit is dropped, as before
    for number, unit in zip(tokens[0::2], tokens[1::2], strict=False):
        parsed = size(f"{number} {unit}")
        if parsed:
            out.append(parsed)
    return out
