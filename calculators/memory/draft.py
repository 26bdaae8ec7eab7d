"""A speculative drafter given as a model (catalog entry or config.json), with its weights at the target's scheme."""

from __future__ import annotations

from calculators.engines.base import DraftModel
from calculators.memory.compare import model_weights
from calculators.model.architecture import ModelArchitecture
from knowledge.formats import FormatsSection


def draft_model(arch: ModelArchitecture, formats: FormatsSection, scheme_id: str | None, name: str) -> DraftModel:
    """The drafter checkpoint a launch command loads, its weight bytes estimated at `scheme_id` (the target's
    precision or quantization; None = unknown, e.g. when the target's weights came from a typed file size)."""
    weights = model_weights(formats, arch, scheme_id).bytes if scheme_id else None
    return DraftModel(arch=arch, weights_bytes=weights, name=name)
