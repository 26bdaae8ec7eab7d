"""Defaults by engine release: the value a setting had in the version a start-up log states.

The facts are in knowledge/version_defaults.yaml; this module only finds the range a version falls in.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from knowledge.log_help import DefaultRange, VersionDefault, load_version_defaults

_SEMVER = re.compile(r"v?(\d+)\.(\d+)(?:\.(\d+))?")
_BUILD = re.compile(r"\bb?(\d{3,6})\b")


def release_key(text: str | None, scheme: str) -> tuple[int, ...] | None:
    """A comparable key for a printed version: '0.12.7' -> (0, 12, 7); 'b4202 (9f912511)' -> (4202,)."""
    if not text:
        return None
    if scheme == "semver":
        match = _SEMVER.search(text)
        return (int(match.group(1)), int(match.group(2)), int(match.group(3) or 0)) if match else None
    match = _BUILD.search(text)
    return (int(match.group(1)),) if match else None


@dataclass(frozen=True)
class AppliedDefault:
    """A setting the log did not print, taken at the default of the version it states."""

    setting: str
    value: int | float | bool | str
    version: str
    fact: DefaultRange
    meaning: str


def default_for(engine: str, setting: str, version: str | None) -> tuple[DefaultRange, str] | None:
    """(the KB range holding `version`, what the setting means) or None when the KB records none for it."""
    for entry in load_version_defaults():
        if entry.engine != engine or entry.setting != setting:
            continue
        found = _range_for(entry, version)
        if found is not None:
            return found, entry.meaning
    return None


def _range_for(entry: VersionDefault, version: str | None) -> DefaultRange | None:
    key = release_key(version, entry.scheme)
    if key is None:
        return None
    for item in entry.ranges:
        low = release_key(item.since, entry.scheme) if item.since else None
        high = release_key(item.through, entry.scheme) if item.through else None
        if (low is None or key >= low) and (high is None or key <= high):
            return item
    return None


def version_defaults(engine: str, version: str | None, printed: set[str]) -> list[AppliedDefault]:
    """Every setting of `engine` the KB has a version default for, that the log did not print (`printed`)."""
    applied: list[AppliedDefault] = []
    if version is None:
        return applied
    for entry in load_version_defaults():
        if entry.engine != engine or entry.setting in printed:
            continue
        found = _range_for(entry, version)
        if found is not None:
            applied.append(AppliedDefault(entry.setting, found.value, version, found, entry.meaning))
    return applied
