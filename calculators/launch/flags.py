"""Flag spellings of an engine's settings, read from knowledge/engines.yaml (never typed by hand here).

`FlagSpelling` turns setting values into command-line words or environment variables: the first flag a
knob lists is the one written, its first environment variable likewise, and a knob that takes no value
is a switch written bare when true.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum


def flag_value(value: object) -> str:
    """A setting value as a command line or environment variable spells it (booleans as 1/0)."""
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, Enum):
        return str(value.value)
    return str(value)


@dataclass(frozen=True)
class FlagSpelling:
    """How one engine spells its setting keys: flag per key, environment variable per key, switch keys."""

    flags: Mapping[str, str]
    env: Mapping[str, str]
    switches: frozenset[str]

    def words(self, values: Mapping[str, object], skip: frozenset[str] = frozenset()) -> list[str]:
        """The flags (and values) that express `values`; keys without a flag or in `skip` are left out."""
        words: list[str] = []
        for key, value in values.items():
            flag = self.flags.get(key)
            if flag is None or value is None or key in skip:
                continue
            if key in self.switches:
                if value:
                    words.append(flag)
                continue
            words += [flag, flag_value(value)]
        return words

    def environment(self, values: Mapping[str, object]) -> dict[str, str]:
        """The environment variables that express `values` (unset and empty values left out)."""
        return {self.env[k]: flag_value(v) for k, v in values.items() if k in self.env and v not in ("", 0)}


def flag_spelling(kb, engine_id: str, program: str | None = None) -> FlagSpelling:
    """The knowledge base's spellings for `engine_id`'s knobs (only those `program` reads, when given)."""
    engine = next(e for e in kb.engines if e.id == engine_id)
    knobs = [k for k in engine.knobs if program is None or program in k.programs]
    return FlagSpelling(
        flags={k.key: k.flags[0] for k in knobs if k.flags},
        env={k.key: k.env[0] for k in knobs if k.env},
        switches=frozenset(k.key for k in knobs if not k.takes_value),
    )
