"""The wizard's tool-calling and embeddings answers, scored by the checks' verdicts for the team's model.

When the team names a catalog model, each engine's tool-call verdict (when tool calls are needed) or
embedding verdict (for an embeddings service) at the engine's defaults becomes a scoring contribution:
the points knowledge/wizard.yaml `compatibility_effects` gives that verdict, with the check's own reasons
and the flags that fix it in the explanation.
"""

from __future__ import annotations

from dataclasses import dataclass

from calculators.checks.embeddings import check_embeddings, embedding_model_from_catalog
from calculators.checks.tool_calls import check_tool_calls, tool_model_from_catalog
from calculators.i18n import _
from calculators.wizard.answers import WizardAnswers
from calculators.wizard.scoring import CaveatRule, ScoringRule


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
        sentence = _("{model}, tool calls: {explanation}")
    elif answers.use == "embeddings" and verdicts.embeddings:
        table, chosen, what = effects.embeddings, verdicts.embeddings, "embeddings"
        sentence = _("{model}, embeddings: {explanation}")
    else:
        return (), ()
    by_verdict = {effect.verdict: effect for effect in table}
    model = next((m.name for m in kb.models.models if m.id == answers.model_id), answers.model_id)
    rules, caveats = [], []
    for engine_id, (verdict, flags) in chosen.items():
        effect = by_verdict[verdict]
        # each flag (with its value) a code span: as plain prose "--enable-auto-tool-choice" broke at its hyphens
        fix = ": " + " ".join(f"`{flag}`" for flag in flags) if flags else ""
        rule_id = f"check-{what.replace(' ', '-')}-{engine_id}"
        # in the reader's language when built (the model by its name, not its slug); shown through _() as is
        text = sentence.format(model=model, explanation=_(effect.explanation)) + fix
        rests_on = (f"feature:{engine_id}/tool_calling",) if what == "tool calls" else (f"feature:{engine_id}/api",)
        if effect.points:
            rules.append(ScoringRule(rule_id, {}, {engine_id: effect.points}, text, rests_on))
        else:
            caveats.append(CaveatRule(rule_id, {}, (engine_id,), text, rests_on))
    return tuple(rules), tuple(caveats)
