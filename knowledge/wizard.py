"""Schema of the wizard's scoring rules: servewise's judgements, each resting on cited engine facts.

A rule is not a fact: it weighs facts. So instead of its own source it lists `rests_on`, references
into the engine and format tables (`engine:vllm`, `knob:ollama/num_parallel`,
`compat:vllm/gguf`), which the loader checks resolve.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field, field_validator

from knowledge.common import Frozen

ENGINE_IDS = ("ollama", "llama-cpp", "vllm", "sglang", "mlx-lm")


class WizardRule(Frozen):
    """Points per engine when every clause of `when` matches the answers."""

    id: str = Field(pattern=r"^[a-z0-9-]+$")
    when: dict[str, Any]
    points: dict[str, int]
    reason: str = Field(min_length=20)
    rests_on: tuple[str, ...] = Field(min_length=1)

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
