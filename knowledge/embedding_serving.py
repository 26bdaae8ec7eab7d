"""Schema of knowledge/embedding_serving.yaml: what each engine does to produce an embedding vector."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from knowledge.common import Frozen, Sourced

PoolingSlug = Literal["cls", "mean", "max", "mean_sqrt_len", "weighted_mean", "last_token"]


class EmbeddingFlags(Frozen):
    """The exact flag spellings that change one embedding behaviour of an engine (absent: no such flag)."""

    runner: str | None = None
    pooling: str | None = None
    normalise_on: str | None = None
    normalise_off: str | None = None
    matryoshka: str | None = None
    max_input: str | None = None
    batch: str | None = None  # "{n}" stands for the token count


class EngineEmbedding(Sourced):
    """How one engine serves embeddings: pooling source, normalisation, dimensions, input length."""

    serves: Literal["yes", "no", "needs-flag"]
    endpoints: tuple[str, ...] = ()
    how: str
    served_without_flag: tuple[str, ...] = ()  # architectures served as embedders without the runner flag
    served_without_flag_source: str | None = None
    pooling_source: Literal["sentence-transformers", "architecture", "gguf", "none"]
    pooling_modes: tuple[PoolingSlug, ...] = ()
    pooling_mapping: dict[PoolingSlug, str] = Field(default_factory=dict)
    pooling_mapping_note: str | None = None
    pooling_note: str | None = None
    architecture_defaults: dict[str, str] = Field(default_factory=dict)
    normalisation: str
    normalises_by_default: Literal["yes", "no", "from-model", "not-applicable"]
    dense: str
    dimensions: str
    matryoshka_request: Literal["only-if-config", "any-model", "no"]
    max_input: str
    truncates_by_default: bool | Literal["unknown"]
    batch_limit_tokens: int | None = None  # one input must fit one batch of this many tokens
    over_batch: Literal["rejected", "unknown"] | None = None
    over_batch_note: str | None = None
    batch_flags: tuple[str, ...] = ()  # flags that set that batch on the command line
    flags: EmbeddingFlags
    pooling_flag_values: dict[PoolingSlug, str] = Field(default_factory=dict)
    see_also: tuple[str, ...] = ()


class SentenceTransformersReference(Sourced):
    """What sentence-transformers itself does: the reference an existing index was built with."""

    pooling: str
    config_keys: tuple[str, ...]
    dense: str
    normalisation: str
    truncation: str
    see_also: tuple[str, ...] = ()


class EmbeddingServingFile(Frozen):
    """The whole of knowledge/embedding_serving.yaml."""

    engines: dict[str, EngineEmbedding]
    sentence_transformers: SentenceTransformersReference

