"""One step of a check's argument: a stable code that reports/ turns into a sentence, its values, its source."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Reason:
    """One step of the argument: a stable code (rendered in reports/), its values, and its source."""

    code: str
    source: str
    values: dict[str, str] = field(default_factory=dict)
