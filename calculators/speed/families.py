"""Which fitted parameter family an engine's kernels belong to (engines that wrap another share its fit).

Until the engine adapters carry this (issue 12 layout), the mapping lives here and nowhere else.
"""

from __future__ import annotations

#: Ollama runs llama.cpp's kernels, so it shares llama.cpp's fitted efficiencies.
_FAMILY = {"ollama": "llama-cpp"}


def speed_family(engine: str) -> str:
    """The fit family for an engine id (itself unless it wraps another engine's kernels)."""
    return _FAMILY.get(engine, engine)
