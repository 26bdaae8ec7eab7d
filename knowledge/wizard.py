"""Schema of the wizard's scoring rules: servewise's judgements, each resting on cited engine facts.

A rule is not a fact: it weighs facts. So instead of its own source it lists `rests_on`, references
into the engine and format tables (`engine:vllm`, `knob:ollama/num_parallel`,
`compat:vllm/gguf`), which the loader checks resolve.

A reason or caveat text is a template: the judgement is prose, and every fact it states (a support
status, a default, a flag spelling, a version) is a named placeholder (`{num_parallel_default}`) that
`says` maps to a view of a cited fact (`default knob:ollama/num_parallel`), rendered from the knowledge
base when the text is shown (calculators/wizard/explain.py). Named placeholders let a translation
reorder them.
"""

from __future__ import annotations

from string import Formatter
from typing import Any

from pydantic import Field, field_validator, model_validator

from knowledge.common import Frozen

#: What a placeholder shows of the fact it names: `view reference`, e.g. `default knob:ollama/num_parallel`.
#: name (engine display name, or a knob's canonical spelling), short (a knob's shortest flag), env (its
#: first environment variable), default (its default value), status (a compat cell's status), statuses
#: (`compat:*/<column>`: every modelled engine's status for that column), note (an `os:` fact's note).
FACT_VIEWS = ("name", "short", "env", "default", "status", "statuses", "note")


def _check_template(text: str, says: dict[str, str], rests_on: tuple[str, ...]) -> None:
    """Raise ValueError when placeholders and `says` differ, or a placeholder cites a fact not in rests_on."""
    fields = {name for _, name, _, _ in Formatter().parse(text) if name is not None}
    if fields != set(says):
        raise ValueError(f"placeholders {sorted(fields)} but `says` names {sorted(says)}")
    for name, spec in says.items():
        view, _, reference = spec.partition(" ")
        if view not in FACT_VIEWS:
            raise ValueError(f"says.{name}: view {view!r} is not one of {list(FACT_VIEWS)}")
        cited = [reference] if "*" not in reference else [r for r in rests_on if _matches(r, reference)]
        missing = [r for r in cited if r not in rests_on] or ([] if cited else [reference])
        if missing:
            raise ValueError(f"says.{name}: {missing} must be listed in rests_on")


def _matches(reference: str, pattern: str) -> bool:
    kind, _, target = pattern.partition(":")
    _, _, column = target.partition("/")
    return reference.startswith(f"{kind}:") and reference.endswith(f"/{column}")

ENGINE_IDS = ("ollama", "llama-cpp", "vllm", "sglang", "mlx-lm")


class WizardRule(Frozen):
    """Points per engine when every clause of `when` matches the answers."""

    id: str = Field(pattern=r"^[a-z0-9-]+$")
    when: dict[str, Any]
    points: dict[str, int]
    reason: str = Field(min_length=20)
    rests_on: tuple[str, ...] = Field(min_length=1)
    says: dict[str, str] = Field(default_factory=dict, description="placeholder -> 'view reference'")

    @model_validator(mode="after")
    def _template_cites_its_facts(self) -> WizardRule:
        _check_template(self.reason, self.says, self.rests_on)
        return self

    @field_validator("points")
    @classmethod
    def _known_engines(cls, points: dict[str, int]) -> dict[str, int]:
        unknown = sorted(set(points) - set(ENGINE_IDS))
        if unknown:
            raise ValueError(f"unknown engine id(s) {unknown}; expected some of {list(ENGINE_IDS)}")
        return points


class WizardCaveat(Frozen):
    """A warning shown for some engines when `when` matches."""

    id: str = Field(pattern=r"^[a-z0-9-]+$")
    when: dict[str, Any]
    engines: tuple[str, ...] = Field(min_length=1)
    text: str = Field(min_length=20)
    rests_on: tuple[str, ...] = Field(min_length=1)
    says: dict[str, str] = Field(default_factory=dict, description="placeholder -> 'view reference'")

    @model_validator(mode="after")
    def _template_cites_its_facts(self) -> WizardCaveat:
        _check_template(self.text, self.says, self.rests_on)
        return self

    @field_validator("engines")
    @classmethod
    def _known_engines(cls, engines: tuple[str, ...]) -> tuple[str, ...]:
        unknown = sorted(set(engines) - set(ENGINE_IDS))
        if unknown:
            raise ValueError(f"unknown engine id(s) {unknown}")
        return engines


class SupportStatusEffect(Frozen):
    """How a support status (engines.yaml hardware/OS, formats matrix) affects an engine's ranking."""

    status: str
    points: int
    exclude: bool = False
    explanation: str


class CompatibilityEffect(Frozen):
    """Points a tool-call or embedding verdict (calculators/checks) gives an engine, and why."""

    verdict: str
    points: int
    explanation: str


class CompatibilityEffects(Frozen):
    """Points per verdict of the tool-call check and of the embedding check."""

    tool_calls: tuple[CompatibilityEffect, ...]
    embeddings: tuple[CompatibilityEffect, ...]


class WizardRules(Frozen):
    """Everything the wizard weighs, in one file: knowledge/wizard.yaml."""

    rules: tuple[WizardRule, ...]
    caveats: tuple[WizardCaveat, ...]
    support_status_effects: tuple[SupportStatusEffect, ...]
    compatibility_effects: CompatibilityEffects
