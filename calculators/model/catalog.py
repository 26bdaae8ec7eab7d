"""Architecture of a catalog model, built from its stored config.json fields by the same code as a user's file."""

from __future__ import annotations

import difflib
from dataclasses import replace

from calculators.errors import ServewiseInputError
from calculators.i18n import _
from calculators.model.architecture import ModelArchitecture
from calculators.model.hf_config import architecture_from_config
from knowledge.loader import KnowledgeBase, load_knowledge


def architecture_from_catalog(model_id: str, kb: KnowledgeBase | None = None) -> ModelArchitecture:
    """The `ModelArchitecture` of catalog model `model_id` (a slug such as `llama-3.1-8b`).

    An unknown id raises ServewiseInputError naming the closest ids.
    """
    catalog = (kb or load_knowledge()).models
    entry = catalog.get(model_id)
    if entry is None:
        close = difflib.get_close_matches(model_id, catalog.ids, n=3, cutoff=0.4)
        hint = ("; " + _("did you mean {close}?").format(close=", ".join(close)) if close
                else "; " + _("known ids: {ids}").format(ids=", ".join(catalog.ids)))
        raise ServewiseInputError(_("'{model_id}' is not a catalog model id{hint}").format(
                                    model_id=model_id, hint=hint))
    arch = architecture_from_config(
        entry.config,
        name=entry.name,
        source=f"catalog:{entry.id}",
        is_embedding_model=entry.embedding is not None,
    )
    return replace(arch, notes=arch.notes + ((_(entry.notes),) if entry.notes else ()))


def catalog_id_for_repo(kb: KnowledgeBase, repo: str | None) -> str | None:
    """The catalog model served from hub repo `repo` (its own repo or one with the same architecture), if any."""
    if not repo:
        return None
    wanted = repo.lower()
    for model in kb.models.models:
        if wanted == model.hf_repo.lower() or wanted in (r.lower() for r in model.same_architecture_as):
            return model.id
    return None
