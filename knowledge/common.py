"""Building blocks every knowledge-base entry uses: frozen models, sources, unknown values."""

from __future__ import annotations

import datetime as dt
from typing import Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field

T = TypeVar("T")

#: How the YAML says "we looked and could not establish this value". Never guess instead.
UNKNOWN = "unknown"
Unknown = Literal["unknown"]


class KnowledgeError(ValueError):
    """A knowledge-base file is missing, malformed or inconsistent; the message names file, entry and field."""


class Frozen(BaseModel):
    """Immutable, strict base for every curated record: unknown keys are errors, not silently dropped."""

    model_config = ConfigDict(frozen=True, extra="forbid")


class Verified(Frozen):
    """Which release or commit a fact was read from, and on which day."""

    version: str = Field(min_length=1, description="engine/library version, tag or commit the fact was read at")
    date: dt.date = Field(description="day the fact was read at its source")


class Source(Frozen):
    """Where a fact was read: a URL, or a repository path such as `ollama/ollama:envconfig/config.go`."""

    source: str = Field(min_length=3)
    verified: Verified


class Sourced(Frozen):
    """Mixin for records that are facts in their own right and so name their own source."""

    source: str = Field(min_length=3, description="URL or repository path the fact was read from")
    verified: Verified
