"""Schema of the model catalog (models.yaml): each model's config.json architecture fields, verbatim.

The `config` mapping holds real config.json keys and values, so the catalog and a user's own
config.json go through the same builder (`calculators.model.hf_config.architecture_from_config`).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, model_validator

from knowledge.common import Frozen, Sourced, Unknown, Verified

ModelId = str


class StatedParameters(Frozen):
    """The parameter count the model's publisher (or a cited port) states, with its precision.

    `precision` is the unit the figure was given in (1 for an exact count, 10**9 for "70B",
    10**7 for "1.23B"); the catalog check allows half of it as rounding.
    """

    total: int = Field(gt=0, description="stated total parameters (elements)")
    total_precision: int = Field(ge=1, description="unit the stated total was rounded to")
    active: int | None = Field(default=None, gt=0, description="stated parameters used per token (MoE)")
    active_precision: int | None = Field(default=None, ge=1)
    active_basis: Literal["all", "without_input_embedding", "without_embedding_and_head"] = Field(
        default="all",
        description="what the publisher's active figure counts: everything, or without the input embedding "
        "lookup (gpt-oss), or without embedding and output head (Qwen's 'non-embedding' convention)",
    )
    counts_vision_tower: bool = Field(
        default=False, description="the stated total includes a vision encoder servewise does not count"
    )
    source: str = Field(min_length=3)
    verified: Verified


class EmbeddingInfo(Frozen):
    """How an embedding model turns hidden states into one vector (must match an existing index)."""

    pooling: Literal["cls", "mean", "last_token"]
    output_dimension: int = Field(gt=0)
    normalized: bool | Unknown
    adjustable_dimensions: str | None = Field(default=None, description="e.g. Matryoshka range '32-1024'")
    max_input_tokens: int | Unknown
    source: str = Field(min_length=3)
    verified: Verified


class CatalogModel(Sourced):
    """One curated model: identity, licence, stated size and its exact config.json architecture fields.

    `source`/`verified` say where the `config` values were read.
    """

    id: ModelId = Field(pattern=r"^[a-z0-9][a-z0-9.-]*[a-z0-9]$", description="stable slug used in URLs and the CLI")
    name: str = Field(min_length=2)
    hf_repo: str = Field(pattern=r"^[\w.-]+/[\w.-]+$")
    license: str = Field(min_length=2)
    license_source: str = Field(min_length=3, description="where the licence was read")
    native_context_tokens: int = Field(gt=0, description="trained context as the config states it")
    params: StatedParameters
    embedding: EmbeddingInfo | None = None
    same_architecture_as: tuple[str, ...] = Field(default=(), description="other repos sharing this exact geometry")
    notes: str = ""
    rope_scaling: dict[str, Any] | Unknown | None = Field(
        default="unknown",
        description="config.json's rope_scaling (or rope_parameters) verbatim; None = the file has none; "
        "'unknown' = the file was not read",
    )
    rope_scaling_source: str | None = Field(
        default=None, min_length=3, description="where rope_scaling was read when it is not the entry's `source`"
    )
    config: dict[str, Any]

    @model_validator(mode="after")
    def _config_names_its_family(self) -> CatalogModel:
        if not isinstance(self.config.get("model_type"), str):
            raise ValueError("config must contain the config.json 'model_type' key")
        text = self.config.get("text_config") or self.config
        for key in ("rope_scaling", "rope_parameters"):
            if key in text and text[key] != self.rope_scaling:
                raise ValueError(f"config.{key} and rope_scaling disagree")
        return self

    @property
    def rope_scaling_known(self) -> bool:
        """True when the entry's config.json was read for its rope scaling (None included: it has none)."""
        return self.rope_scaling != "unknown"


class ModelCatalog(Frozen):
    """Every catalog model; ids are unique."""

    models: tuple[CatalogModel, ...] = Field(min_length=1)

    @model_validator(mode="after")
    def _unique_ids(self) -> ModelCatalog:
        seen: set[str] = set()
        for model in self.models:
            if model.id in seen:
                raise ValueError(f"model id '{model.id}' appears twice")
            seen.add(model.id)
        return self

    def get(self, model_id: str) -> CatalogModel | None:
        """The model with this id, or None."""
        return next((m for m in self.models if m.id == model_id), None)

    @property
    def ids(self) -> tuple[str, ...]:
        """All model ids in file order."""
        return tuple(m.id for m in self.models)
