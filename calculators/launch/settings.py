"""Turn an engine launch command into that engine's validated Settings, using the knowledge base's flags.

`calculators.launch.command` tokenises and matches spellings; this module supplies the vocabulary
(engines.yaml knobs) and converts the matched strings into the engine's Settings model, so a bad value is
reported against the flag the user typed.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pydantic import BaseModel, ValidationError

from calculators.engines import ENGINES
from calculators.errors import LaunchCommandError, validation_problem
from calculators.i18n import _
from calculators.launch.command import EngineCommandSyntax, FlagSpec, parse_launch_command


@dataclass
class LaunchSettings:
    """An engine's settings as a launch command expresses them, and what the command said beyond them."""

    engine: str
    settings: BaseModel
    model: str | None
    unknown_flags: list[str] = field(default_factory=list)
    ignored_keys: list[str] = field(default_factory=list)  # known knobs that do not affect memory
    ignored_env: list[str] = field(default_factory=list)


def command_syntaxes(kb) -> dict[str, EngineCommandSyntax]:
    """Flag vocabulary per engine, built from every knob's flags, negations and environment variables."""
    syntaxes = {}
    for engine in kb.engines:
        spec = ENGINES.get(engine.id)
        switch_values = spec.switch_values if spec else {}
        specs = tuple(
            FlagSpec(
                key=knob.key,
                flags=knob.flags,
                env=knob.env[0] if knob.env else None,
                takes_value=knob.takes_value,
                negation_flags=knob.negative_flags,
                switch_value=switch_values.get(knob.key, "true"),
            )
            for knob in engine.knobs
        )
        extra_env = tuple(
            FlagSpec(key=knob.key, env=env) for knob in engine.knobs for env in knob.env[1:]
        )
        syntaxes[engine.id] = EngineCommandSyntax(
            engine.id, specs + extra_env, positional_model=bool(spec and spec.positional_model)
        )
    return syntaxes


def _flag_for(key: str, syntax: EngineCommandSyntax) -> str:
    spec = next((s for s in syntax.flag_specs if s.key == key), None)
    if spec is None:
        return key
    return (spec.flags[-1] if spec.flags else spec.env) or key


def settings_from_command(command: str, kb) -> LaunchSettings:
    """Parse `command` and validate its values into the engine's Settings model.

    Raises LaunchCommandError with the flag's own spelling when a value does not fit its knob.
    """
    syntaxes = command_syntaxes(kb)
    parsed = parse_launch_command(command, syntaxes)
    module = ENGINES.get(parsed.engine)
    if module is None:
        raise LaunchCommandError(_("servewise has no memory model for engine '{engine}'").format(engine=parsed.engine))
    fields = module.settings_type.model_fields
    values = {key: value for key, value in parsed.settings.items() if key in fields}
    ignored = sorted(key for key in parsed.settings if key not in fields)
    try:
        settings = module.settings_type.model_validate(values)
    except ValidationError as exc:
        problems = []
        for error in exc.errors():
            key = str(error["loc"][0]) if error["loc"] else "?"
            shown = values.get(key, "")
            problems.append(_("{flag_for} {shown!r}: {msg}").format(
                              flag_for=_flag_for(key, syntaxes[parsed.engine]), shown=shown,
                              msg=validation_problem(error)))
        raise LaunchCommandError("; ".join(problems)) from exc
    return LaunchSettings(
        engine=parsed.engine,
        settings=settings,
        model=parsed.model,
        unknown_flags=parsed.unknown_flags,
        ignored_keys=ignored,
        ignored_env=parsed.ignored_env,
    )
