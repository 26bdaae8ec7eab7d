"""Resolve the fact references wizard rules rest on (`engine:`, `knob:`, `feature:`, `compat:`, `os:`).

A reference that does not resolve means a rule cites a fact the knowledge base does not hold: the
loader refuses it, so a rule can never rest on a renamed knob or a deleted engine.
"""

from __future__ import annotations

from knowledge.common import KnowledgeError
from knowledge.wizard import ENGINE_IDS as WIZARD_ENGINE_IDS

FEATURE_FIELDS = (
    "http_api", "tool_calling", "structured_output", "metrics", "auth", "network", "prefix_caching", "multi_gpu",
    "multi_model", "api",
)  # fmt: skip


def resolve_reference(reference: str, engines: dict, formats) -> object:
    """Return the fact a reference points at; raise KnowledgeError saying what does not exist."""
    kind, _, target = reference.partition(":")
    engine_id, _, detail = target.partition("/")
    if kind == "compat":
        cell = formats.cell(engine_id, detail)
        if cell is None:
            raise KnowledgeError(f"reference {reference!r}: the formats matrix has no cell {engine_id}/{detail}")
        return cell
    engine = engines.get(engine_id)
    if engine is None:
        raise KnowledgeError(f"reference {reference!r}: no engine {engine_id!r} in engines.yaml")
    if kind == "engine" and not detail:
        return engine
    if kind == "os":
        item = next((i for i in engine.operating_systems.items if i.id == detail), None)
        if item is None:
            raise KnowledgeError(
                f"reference {reference!r}: engine {engine_id!r} records no operating system {detail!r}"
            )
        if item.source is None:  # the item was read at its list's source
            item = item.model_copy(update={"source": engine.operating_systems.source,
                                           "verified": engine.operating_systems.verified})
        return item
    if kind == "knob":
        try:
            return engine.knob(detail)
        except KeyError as exc:
            raise KnowledgeError(f"reference {reference!r}: {exc.args[0]}") from exc
    if kind == "feature" and detail in FEATURE_FIELDS:
        value = getattr(engine, "http_api" if detail == "api" else detail)
        if value is None:
            raise KnowledgeError(f"reference {reference!r}: engine {engine_id!r} records no {detail}")
        return value
    raise KnowledgeError(f"reference {reference!r} is not of the form engine:<id>, knob:<id>/<key>, "
                         f"feature:<id>/<{'|'.join(FEATURE_FIELDS)}>, compat:<id>/<column> or os:<id>/<os>")


def check_wizard_references(wizard, engines: tuple, formats) -> None:
    """Raise KnowledgeError (naming wizard.yaml and the rule) for the first reference that does not resolve."""
    by_id = {engine.id: engine for engine in engines}
    for entry in (*wizard.rules, *wizard.caveats):
        for reference in entry.rests_on:
            try:
                resolve_reference(reference, by_id, formats)
            except KnowledgeError as exc:
                raise KnowledgeError(f"wizard.yaml: entry {entry.id!r}, field 'rests_on': {exc}") from exc
        for name, spec in entry.says.items():
            _, _, pattern = spec.partition(" ")
            if "*" not in pattern:
                continue
            column = pattern.partition("/")[2]
            uncited = [f"compat:{e.id}/{column}" for e in engines if e.id in WIZARD_ENGINE_IDS
                       and formats.cell(e.id, column) is not None and f"compat:{e.id}/{column}" not in entry.rests_on]
            if uncited:
                raise KnowledgeError(f"wizard.yaml: entry {entry.id!r}, says.{name} lists every engine's cell: "
                                     f"add {uncited} to rests_on")
