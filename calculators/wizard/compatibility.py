"""The wizard's tool-calling and embeddings answers, scored by the checks' verdicts for the team's model.

When the team names a catalog model, each engine's tool-call verdict (when tool calls are needed) or
embedding verdict (for an embeddings service) at the engine's defaults becomes a scoring contribution:
the points knowledge/wizard.yaml `compatibility_effects` gives that verdict, with the verdict's explanation and
the flags that fix it as data (CheckedVerdict); reports/compatibility.py writes the sentence a reader sees.
"""

from __future__ import annotations

from dataclasses import dataclass

from calculators.checks.embeddings import check_embeddings, embedding_model_from_catalog
from calculators.checks.tool_calls import check_tool_calls, tool_model_from_catalog
from calculators.wizard.answers import WizardAnswers
from calculators.wizard.scoring import CaveatRule, CheckedVerdict, ScoringRule


@dataclass(frozen=True)
class ModelVerdicts:
    """Each engine's tool-call and embedding verdict for one catalog model: (verdict, flags to add)."""

    tool_calls: dict[str, tuple[str, tuple[str, ...]]]
    embeddings: dict[str, tuple[str, tuple[str, ...]]]


def model_verdicts(model_id: str | None, engine_ids: tuple[str, ...], kb) -> ModelVerdicts | None:
    """The checks' verdicts for a catalog model on every engine at its defaults; None without a catalog model."""
    entry = next((m for m in kb.models.models if m.id == model_id), None)
    if entry is None:
        return None
    tools: dict[str, tuple[str, tuple[str, ...]]] = {}
    embeddings: dict[str, tuple[str, tuple[str, ...]]] = {}
    if entry.embedding is None:
        model = tool_model_from_catalog(entry.id, kb.tool_calling)
        for engine_id in engine_ids:
            check = check_tool_calls(model, engine_id, None, kb.tool_calling)
            tools[engine_id] = (check.verdict, check.flags_to_add)
    else:
        reference = embedding_model_from_catalog(entry)
        for engine_id in engine_ids:
            embedding_check = check_embeddings(reference, engine_id, None, kb.embedding_serving)
            embeddings[engine_id] = (embedding_check.verdict, embedding_check.flags_to_add)
    return ModelVerdicts(tools, embeddings)


def compatibility_rules(
    answers: WizardAnswers, verdicts: ModelVerdicts | None, kb
) -> tuple[tuple[ScoringRule, ...], tuple[CaveatRule, ...]]:
    """Scoring contributions (verdicts worth points) and caveats (verdicts worth none: flags to add, unknown)."""
    if verdicts is None:
        return (), ()
    effects = kb.wizard.compatibility_effects
    if answers.tool_calling and verdicts.tool_calls:
        table, chosen, what = effects.tool_calls, verdicts.tool_calls, "tool calls"
    elif answers.use == "embeddings" and verdicts.embeddings:
        table, chosen, what = effects.embeddings, verdicts.embeddings, "embeddings"
    else:
        return (), ()
    by_verdict = {effect.verdict: effect for effect in table}
    model = next((m.name for m in kb.models.models if m.id == answers.model_id), answers.model_id)
    rules, caveats = [], []
    for engine_id, (verdict, flags) in chosen.items():
        effect = by_verdict[verdict]
        rule_id = f"check-{what.replace(' ', '-')}-{engine_id}"
        # the model by its name, not its slug; reports/compatibility.checked_verdict_text words it where shown
        checked = CheckedVerdict(model or "", what, effect.explanation, tuple(flags))
        rests_on = (f"feature:{engine_id}/tool_calling",) if what == "tool calls" else (f"feature:{engine_id}/api",)
        if effect.points:
            rules.append(ScoringRule(rule_id, {}, {engine_id: effect.points}, effect.explanation, rests_on, checked))
        else:
            caveats.append(CaveatRule(rule_id, {}, (engine_id,), effect.explanation, rests_on, checked))
    return tuple(rules), tuple(caveats)
