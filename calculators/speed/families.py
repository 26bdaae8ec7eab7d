"""Which fitted parameter family an engine's kernels belong to: the engine adapter says (engines/<engine>/speed.py)."""

from __future__ import annotations


def speed_family(engine: str) -> str:
    """The fit family for an engine id: its adapter's `speed.family`, else the id itself (unregistered engines)."""
    from calculators.engines import ENGINES

    found = ENGINES.get(engine)
    return found.speed.family if found is not None and found.speed is not None else engine
