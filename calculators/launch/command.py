"""Read an engine launch command exactly as a user types it and map it onto setting keys.

The flag vocabulary (names, aliases, environment variables, which flags take a value) comes from the
knowledge base; this module only tokenises and matches. Values stay strings here: each engine's
Settings model converts and validates them, so type errors are reported in that engine's terms.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field

from calculators.errors import LaunchCommandError
from calculators.i18n import N_, _

ENV_ASSIGNMENT = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)=(.*)$", re.DOTALL)
#: shlex's reasons (Python's own English, CPython Lib/shlex.py) in our words, so a reader in any language gets one.
SHLEX_REASONS = {
    "No closing quotation": N_("a quotation mark is opened and never closed"),
    "No escaped character": N_("it ends with a backslash that escapes nothing"),
}


@dataclass(frozen=True)
class FlagSpec:
    """How one setting can be written on a command line or in the environment."""

    key: str
    flags: tuple[str, ...] = ()
    env: str | None = None
    takes_value: bool = True
    negation_flags: tuple[str, ...] = ()  # e.g. --no-kv-unified, --no-enable-prefix-caching
    switch_value: str = "true"  # what a bare boolean switch means (e.g. --swa-full -> "true")


@dataclass(frozen=True)
class EngineCommandSyntax:
    """An engine's recognisable command prefixes and its flags."""

    engine: str
    flag_specs: tuple[FlagSpec, ...]
    #: positional argument that names the model (vLLM `serve MODEL`), if the engine takes one
    positional_model: bool = False


@dataclass
class ParsedLaunchCommand:
    """The settings a launch command expresses, keyed by the shared setting keys (values as typed)."""

    engine: str
    settings: dict[str, str] = field(default_factory=dict)
    model: str | None = None
    unknown_flags: list[str] = field(default_factory=list)
    ignored_env: list[str] = field(default_factory=list)  # environment variables not engine settings
    notes: list[str] = field(default_factory=list)


def _program_words(tokens: list[str]) -> list[str]:
    """The words that say which program runs: basename of argv0, plus `-m module` / subcommand."""
    words = [tokens[0].rsplit("/", 1)[-1].lower()] if tokens else []
    if words and words[0].startswith("python") and len(tokens) >= 3 and tokens[1] == "-m":
        words.append(tokens[2].lower())
    elif len(tokens) >= 2:
        words.append(tokens[1].lower())
    return words


def detect_engine(tokens: list[str]) -> tuple[str, int]:
    """Which engine a tokenised command starts, and the index where its own arguments begin."""
    from calculators.engines import ENGINES

    words = _program_words(tokens)
    if not words:
        raise LaunchCommandError(_("the launch command is empty"))
    program = words[0]
    second = words[1] if len(words) > 1 else ""
    for engine in ENGINES.values():
        start = engine.command_start(program, second)
        if start is not None:
            return engine.id, start
    if program.startswith("python"):
        raise LaunchCommandError(_("'python -m {second}' is not a launcher servewise knows").format(second=second))
    examples = [engine.launch_example for engine in ENGINES.values()]
    raise LaunchCommandError(
        _("'{tokens}' is not a launcher servewise knows; start with {examples} or {examples_2}").format(
          tokens=tokens[0], examples=', '.join(examples[:-1]), examples_2=examples[-1])
    )


def _normalise_flag(flag: str) -> str:
    """vLLM and SGLang accept --under_scores as well as --dashes; compare on the dashed form."""
    if flag.startswith("--"):
        return "--" + flag[2:].replace("_", "-")
    return flag


def split_command(command: str) -> tuple[dict[str, str], list[str]]:
    """Tokenise a shell command line; return leading VAR=value assignments and the remaining words."""
    text = command.replace("\\\n", " ").strip()
    try:
        tokens = shlex.split(text, comments=True)
    except ValueError as exc:
        reason = _(SHLEX_REASONS[str(exc)]) if str(exc) in SHLEX_REASONS else str(exc)
        raise LaunchCommandError(_("the launch command cannot be split into words: {exc}").format(exc=reason)) from exc
    env: dict[str, str] = {}
    while tokens and (tokens[0] in ("env", "sudo", "exec") or ENV_ASSIGNMENT.match(tokens[0])):
        word = tokens.pop(0)
        match = ENV_ASSIGNMENT.match(word)
        if match:
            env[match.group(1)] = match.group(2)
    if not tokens:
        raise LaunchCommandError(_("the launch command names no program to run"))
    return env, tokens


def parse_launch_command(command: str, syntaxes: dict[str, EngineCommandSyntax]) -> ParsedLaunchCommand:
    """Parse a launch command into setting keys for the engine it starts (values as typed).

    Unknown flags are collected, never silently dropped; a flag that needs a value and has none, or
    an unknown launcher, raises LaunchCommandError.
    """
    env, tokens = split_command(command)
    engine, start = detect_engine(tokens)
    syntax = syntaxes.get(engine)
    if syntax is None:
        raise LaunchCommandError(_("no flag vocabulary is known for engine '{engine}'").format(engine=engine))
    by_flag = {_normalise_flag(f): spec for spec in syntax.flag_specs for f in spec.flags}
    negations = {_normalise_flag(f): spec for spec in syntax.flag_specs for f in spec.negation_flags}
    by_env = {spec.env: spec for spec in syntax.flag_specs if spec.env}
    parsed = ParsedLaunchCommand(engine=engine)

    for name, value in env.items():
        spec = by_env.get(name)
        if spec:
            parsed.settings[spec.key] = value
        else:
            parsed.ignored_env.append(name)

    args = tokens[start:]
    index = 0
    while index < len(args):
        word = args[index]
        index += 1
        if not word.startswith("-") or word == "-":
            if syntax.positional_model and parsed.model is None:
                parsed.model = word
            else:
                parsed.unknown_flags.append(word)
            continue
        flag, has_inline, inline_value = word.partition("=")
        flag = _normalise_flag(flag)
        if flag in negations and not has_inline:
            parsed.settings[negations[flag].key] = "false"
            continue
        spec = by_flag.get(flag)
        if spec is None:
            parsed.unknown_flags.append(word)
            # skip the unknown flag's value, if it visibly has one, so it is not read as a model name
            if not has_inline and index < len(args) and not args[index].startswith("-"):
                parsed.unknown_flags.append(args[index])
                index += 1
            continue
        if has_inline:
            parsed.settings[spec.key] = inline_value
        elif not spec.takes_value:
            parsed.settings[spec.key] = spec.switch_value
        elif index < len(args) and (not args[index].startswith("-") or _looks_numeric(args[index])):
            parsed.settings[spec.key] = args[index]
            index += 1
        else:
            raise LaunchCommandError(_("{word} needs a value").format(word=word))
    if spec_model := parsed.settings.pop("model", None):
        parsed.model = spec_model
    return parsed


def _looks_numeric(word: str) -> bool:
    """True for values such as -1 that start with a dash but are numbers, not flags."""
    try:
        float(word)
    except ValueError:
        return False
    return True
