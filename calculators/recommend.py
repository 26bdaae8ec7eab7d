"""Rank engines for a team's answers: hard constraints from engine facts first, then transparent scoring.

Nothing here names a winner. Exclusions come from what the knowledge base says each engine supports
(hardware, operating system, weight format); points come from the scoring rules in
knowledge/wizard.yaml, each of which cites the engine facts it rests on. The result carries every
contribution so a page can show the breakdown, plus the single answer changes that would change the
top choice.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from calculators.wizard_answers import WizardAnswers


def condition_matches(when: Mapping[str, Any], answers: WizardAnswers) -> bool:
    """True when every clause of `when` holds for `answers`.

    A clause value may be a scalar (equality), a list (membership), or a mapping with `min`/`max`
    (inclusive numeric bounds).
    """
    for field_name, expected in when.items():
        actual = getattr(answers, field_name)
        if isinstance(expected, Mapping):
            if actual is None:
                return False
            if "min" in expected and actual < expected["min"]:
                return False
            if "max" in expected and actual > expected["max"]:
                return False
        elif isinstance(expected, list | tuple):
            if actual not in expected:
                return False
        elif actual != expected:
            return False
    return True


@dataclass(frozen=True)
class ScoringRule:
    """Points per engine when a condition holds, with the reason in plain words and what it rests on."""

    id: str
    when: Mapping[str, Any]
    points: Mapping[str, int]
    reason: str
    rests_on: tuple[str, ...] = ()


@dataclass(frozen=True)
class CaveatRule:
    """A warning attached to some engines when a condition holds."""

    id: str
    when: Mapping[str, Any]
    engines: tuple[str, ...]
    text: str
    rests_on: tuple[str, ...] = ()


@dataclass(frozen=True)
class Exclusion:
    """Why an engine cannot serve these answers at all (a hard constraint)."""

    reason: str
    rests_on: tuple[str, ...] = ()


@dataclass(frozen=True)
class Contribution:
    """Points one rule gave one engine."""

    rule_id: str
    points: int
    reason: str
    rests_on: tuple[str, ...]


@dataclass(frozen=True)
class EngineVerdict:
    """One engine's place in the ranking with everything that put it there."""

    engine: str
    score: int
    exclusions: tuple[Exclusion, ...]
    contributions: tuple[Contribution, ...]
    caveats: tuple[CaveatRule, ...]

    @property
    def excluded(self) -> bool:
        """True when a hard constraint rules the engine out."""
        return bool(self.exclusions)


@dataclass(frozen=True)
class AnswerChange:
    """A single different answer that would put another engine on top."""

    field: str
    current: Any
    alternative: Any
    new_top: str


@dataclass(frozen=True)
class Recommendation:
    """Ranked engines (eligible first, by score) and what would change the answer."""

    answers: WizardAnswers
    ranking: tuple[EngineVerdict, ...]
    changes: tuple[AnswerChange, ...] = field(default_factory=tuple)

    @property
    def top(self) -> EngineVerdict | None:
        """The best eligible engine, or None when every engine is excluded."""
        eligible = [v for v in self.ranking if not v.excluded]
        return eligible[0] if eligible else None


def rank_engines(
    answers: WizardAnswers,
    engines: Sequence[str],
    rules: Iterable[ScoringRule],
    caveats: Iterable[CaveatRule],
    constraint_check: Callable[[WizardAnswers, str], Iterable[Exclusion]],
) -> tuple[EngineVerdict, ...]:
    """Score every engine: exclusions from `constraint_check(answers, engine)`, points from matching rules.

    Ties keep the order of `engines` (the knowledge base's order), so the ranking is deterministic.
    """
    rules = tuple(rules)
    caveats = tuple(caveats)
    matched = [rule for rule in rules if condition_matches(rule.when, answers)]
    matched_caveats = [c for c in caveats if condition_matches(c.when, answers)]
    verdicts = []
    for engine in engines:
        contributions = tuple(
            Contribution(rule.id, rule.points[engine], rule.reason, rule.rests_on)
            for rule in matched
            if rule.points.get(engine, 0) != 0
        )
        verdicts.append(
            EngineVerdict(
                engine=engine,
                score=sum(c.points for c in contributions),
                exclusions=tuple(constraint_check(answers, engine)),
                contributions=contributions,
                caveats=tuple(c for c in matched_caveats if engine in c.engines),
            )
        )
    order = {engine: index for index, engine in enumerate(engines)}
    return tuple(sorted(verdicts, key=lambda v: (v.excluded, -v.score, order[v.engine])))


#: Answer fields explored for "what would change this answer", with the alternatives tried.
SENSITIVITY_ALTERNATIVES: dict[str, tuple[Any, ...]] = {
    "use": ("occasional-local", "local-dev", "shared-api", "public-multitenant", "batch", "embeddings"),
    "hardware": ("nvidia", "amd", "intel", "apple", "cpu"),
    "os": ("linux", "macos", "windows"),
    "weight_format": ("any", "gguf", "safetensors", "awq", "gptq", "fp8", "mlx"),
    "concurrent_users": (1, 4, 16, 64, 256),
    "prompt_length": ("short", "long"),
    "shared_prefixes": (False, True),
    "tool_calling": (False, True),
    "slo_metrics": (False, True),
    "multi_model": (False, True),
    "lora": (False, True),
    "hosts": (1, 2),
    "ops_skill": ("low", "medium", "high"),
    "fits_one_card": ("yes", "no"),
}


def answer_changes(
    answers: WizardAnswers, top: str | None, rank: Callable[[WizardAnswers], str | None]
) -> tuple[AnswerChange, ...]:
    """Single-answer changes that would put a different engine on top (`rank(answers) -> top engine id`).

    Alternatives that make the answers contradictory are skipped: they are not real options.
    """
    changes = []
    for field_name, alternatives in SENSITIVITY_ALTERNATIVES.items():
        current = getattr(answers, field_name)
        for alternative in alternatives:
            if alternative == current:
                continue
            try:
                changed = answers.model_copy(update={field_name: alternative})
                changed = WizardAnswers.model_validate(changed.model_dump())
            except ValueError:
                continue
            new_top = rank(changed)
            if new_top is not None and new_top != top:
                changes.append(AnswerChange(field_name, current, alternative, new_top))
    return tuple(changes)
