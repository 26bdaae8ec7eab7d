"""Which weight schemes an engine loads, read from the compatibility matrix (knowledge/formats.yaml)."""

from __future__ import annotations

from dataclasses import dataclass

from calculators.i18n import _
from knowledge.formats import CompatStatus, FormatsSection

#: Order of preference when a scheme's family and its containers have different statuses (worst wins).
_RANK = [CompatStatus.NATIVE, CompatStatus.EXPERIMENTAL, CompatStatus.VIA_PLUGIN, CompatStatus.CONVERT_FIRST,
         CompatStatus.UNKNOWN, CompatStatus.NOT_SUPPORTED]


@dataclass(frozen=True)
class Acceptance:
    """An engine's status for one weight scheme, with the matrix cells it rests on."""

    status: CompatStatus
    reason: str
    sources: tuple[str, ...]


def engine_accepts(formats: FormatsSection, engine: str, scheme_id: str) -> Acceptance:
    """The engine's status for `scheme_id` (a quantization or GGUF file mix): the worse of its family's
    cell and the best of its containers' cells."""
    mix = formats.file_mix(scheme_id)
    quant = formats.quantization(mix.main_type if mix else scheme_id)
    if quant is None:
        return Acceptance(CompatStatus.UNKNOWN, _("weight scheme {scheme_id!r} is not in the knowledge base").format(
                                                  scheme_id=scheme_id), ())
    family = formats.cell(engine, quant.family)
    containers = [c for c in (formats.cell(engine, fmt) for fmt in quant.containers) if c is not None]
    best_container = min(containers, key=lambda c: _RANK.index(c.status), default=None)
    cells = [c for c in (family, best_container) if c is not None]
    if not cells:
        return Acceptance(CompatStatus.UNKNOWN, _("no matrix cell for {engine} and {scheme_id}").format(
                                                  engine=engine, scheme_id=scheme_id), ())
    worst = max(cells, key=lambda c: _RANK.index(c.status))
    name = mix.name if mix else quant.name
    return Acceptance(worst.status, _("{name}: {value} ({note})").format(
                                      name=name,
                                      value=worst.status.value,
                                      note=worst.note), tuple(c.source for c in cells))
