"""Write an engine's Settings back as the launch command that realises them (flags as each engine spells them).

The workload keys are written always, every other key when it differs from the engine's default, each as
knowledge/engines.yaml spells it (`calculators.launch.flags`); the engine's folder says how its command
starts. Returns the words of the command; quoting and line breaks are the page's job.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pydantic import BaseModel

from calculators.engines import adapter
from knowledge.loader import load_knowledge


@dataclass(frozen=True)
class LaunchCommand:
    """A command line as words, plus environment variables and remarks that go with it."""

    engine: str
    env: dict[str, str]
    words: list[str]
    remarks: list[str] = field(default_factory=list)


def _changed(settings: BaseModel, always: tuple[str, ...]) -> dict[str, object]:
    """Keys to write: the `always` keys, then any other key whose value differs from the field default."""
    out = {}
    for key, info in type(settings).model_fields.items():
        value = getattr(settings, key)
        if value is not None and (key in always or value != info.default):
            out[key] = value
    return out


def render_launch_command(
    engine: str, settings: BaseModel, model_ref: str, always: tuple[str, ...] | None = None, kb=None
) -> LaunchCommand:
    """The command (and environment) that starts `engine` with `settings` for model `model_ref`.

    `always`: keys written even at their default (the engine's workload keys unless given). Flags are
    spelled as knowledge/engines.yaml spells them (`kb`, loaded once per process when not given).
    """
    spec = adapter(engine)
    if spec.render_command is None:
        raise ValueError(f"no launch command for engine '{engine}'")
    values = _changed(settings, spec.workload_keys if always is None else always)
    env, words, remarks = spec.render_command(values, model_ref, kb or load_knowledge())
    return LaunchCommand(engine, env, words, remarks)
