"""Wizard reasons and caveats rendered from the facts they cite, so a text cannot state a stale fact.

A text in knowledge/wizard.yaml is a template: prose for the judgement, a named placeholder for every
fact (status, default, flag, version), and `says` mapping each placeholder to a view of a cited fact.
The template is looked up in the reader's language first (`_()`), then filled, so a translation may
reorder the placeholders.
"""

from __future__ import annotations

from collections.abc import Mapping

from calculators.engines import ENGINE_IDS, display_name
from calculators.i18n import N_, _
from knowledge.references import resolve_reference

#: How a support status reads inside a sentence (the status words of engines.yaml and the formats matrix).
STATUS_PHRASES: dict[str, str] = {
    "native": N_("native"),
    "experimental": N_("experimental"),
    "via-plugin": N_("via a plugin"),
    "convert-first": N_("convert first"),
    "not-supported": N_("not supported"),
    "unknown": N_("unknown"),
}


def status_phrase(status: str) -> str:
    """A support status in the reader's words."""
    return _(STATUS_PHRASES[status])


def default_phrase(value: object) -> str:
    """A knob's default as a sentence shows it: switches on/off, unset, or the value itself."""
    if isinstance(value, bool):
        return _("on") if value else _("off")
    if value is None:
        return _("unset")
    return f"`{value}`" if isinstance(value, str) and value != "unknown" else str(value)


def _code(text: str) -> str:
    return f"`{text}`"


def _resolve(reference: str, kb):
    return resolve_reference(reference, {e.id: e for e in kb.engines}, kb.formats)


def _statuses(pattern: str, kb) -> str:
    """`compat:*/<column>`: every modelled engine's status for the column, in the registry's order."""
    column = pattern.partition("/")[2]
    parts = []
    for engine_id in ENGINE_IDS:
        cell = kb.formats.cell(engine_id, column)
        if cell is not None:
            parts.append(
                _("{engine}: {status}").format(engine=display_name(engine_id), status=status_phrase(cell.status))
            )
    return "; ".join(parts)


def fact_value(spec: str, kb) -> str:
    """One placeholder's text: `view reference` (see knowledge.wizard.FACT_VIEWS) read from the knowledge base."""
    view, _sep, reference = spec.partition(" ")
    if view == "statuses":
        return _statuses(reference, kb)
    fact = _resolve(reference, kb)
    if view == "name":
        return _code(fact.name) if reference.startswith("knob:") else display_name(fact.id)
    if view == "short":
        return _code(min(fact.flags, key=len))
    if view == "env":
        return _code(fact.env[0])
    if view == "default":
        return default_phrase(fact.default)
    if view == "status":
        return status_phrase(fact.status)
    if view == "note":
        return _(fact.note)  # the KB prose is in the catalog (babel.cfg)
    raise ValueError(f"unknown fact view {view!r} in {spec!r}")


def render_fact_text(template: str, says: Mapping[str, str], kb) -> str:
    """The template in the reader's language with every placeholder filled from the fact it names."""
    return _(template).format(**{name: fact_value(spec, kb) for name, spec in says.items()})
