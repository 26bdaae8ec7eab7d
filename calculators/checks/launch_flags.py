"""The flags of a launch command as written, for checks that look at flags the memory model does not use.

The memory model's parser (calculators.launch.command) maps known setting flags; tool-call and embedding
flags (--tool-call-parser, --pooler-config, --embeddings ...) are not settings, so this reads every
`--flag value` pair itself, with the engine detected the same way.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

from calculators.launch.command import detect_engine, split_command


@dataclass(frozen=True)
class CommandFlags:
    """Which engine a command starts, its positional model, and each flag's value (True for a bare switch)."""

    engine: str
    model: str | None
    flags: dict[str, str | bool] = field(default_factory=dict)
    env: dict[str, str] = field(default_factory=dict)

    def value(self, *names: str) -> str | bool | None:
        """The value of the first of `names` present (any spelling with _ or -), else None."""
        for name in names:
            key = _normalise(name)
            if key in self.flags:
                return self.flags[key]
        return None

    def has(self, *names: str) -> bool:
        """True when any of `names` appears on the command line."""
        return self.value(*names) is not None


def _normalise(flag: str) -> str:
    """Compare flags on one spelling: vLLM and SGLang accept --under_scores as well as --dashes."""
    return "--" + flag[2:].replace("_", "-") if flag.startswith("--") else flag


def read_command_flags(command: str, switches: Iterable[str] = ()) -> CommandFlags:
    """Split a launch command into engine, model and flags; `switches` name flags that never take a value.

    A flag followed by a word that is not itself a flag takes that word as its value unless it is a
    known switch. Raises LaunchCommandError (a ServewiseInputError) for an empty or unknown launcher.
    """
    env, tokens = split_command(command)
    engine, start = detect_engine(tokens)
    bare = {_normalise(s) for s in switches}
    flags: dict[str, str | bool] = {}
    model: str | None = None
    args = tokens[start:]
    index = 0
    while index < len(args):
        word = args[index]
        index += 1
        if not word.startswith("-") or word == "-":
            model = model or word
            continue
        name, has_inline, inline = word.partition("=")
        name = _normalise(name)
        if has_inline:
            flags[name] = inline
        elif name not in bare and index < len(args) and (not args[index].startswith("-") or _numeric(args[index])):
            flags[name] = args[index]
            index += 1
        else:
            flags[name] = True
    return CommandFlags(engine=engine, model=model, flags=flags, env=env)


def _numeric(word: str) -> bool:
    """True for values such as -1 that start with a dash but are numbers."""
    try:
        float(word)
    except ValueError:
        return False
    return True


T = TypeVar("T")


def checks_per_engine(
    engine_ids: Sequence[str], command_text: str, check: Callable[[str, CommandFlags | None], T]
) -> list[T]:
    """`check(engine_id, command)` for each engine; a non-empty `command_text` goes to the engine it starts
    (added when not listed), every other engine runs with its defaults (command None)."""
    command = read_command_flags(command_text) if command_text.strip() else None
    ids = list(engine_ids)
    if command is not None and command.engine not in ids:
        ids.append(command.engine)
    return [check(engine_id, command if command and command.engine == engine_id else None) for engine_id in ids]
