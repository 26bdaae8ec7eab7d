"""Which fitted parameter family an engine's kernels belong to: the engine adapter says (engines/<engine>/speed.py)."""

from __future__ import annotations


def speed_family(engine: str, version: str = "") -> str:
    """The fit family for an engine id (and the version a measurement was made with, when known).

    The adapter's `speed.family_for_version` decides for a version (an engine whose core changed keeps its old
    measurements apart); with no version, or no such rule, the adapter's `speed.family`; else the id itself.
    """
    from calculators.engines import ENGINES

    found = ENGINES.get(engine)
    if found is None or found.speed is None:
        return engine
    if version and found.speed.family_for_version is not None:
        return found.speed.family_for_version(version)
    return found.speed.family
