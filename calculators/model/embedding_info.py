"""How a sentence-transformers embedding model pools and normalises, from its modules.json and 1_Pooling/config.json.

Pooling, normalisation and output dimension must match an existing vector index; config.json alone
does not say them (Qwen3-Embedding's config.json is a chat model's). Key names are those
sentence-transformers writes: `pooling_mode` and `embedding_dimension` (6.x,
sentence_transformers/sentence_transformer/modules/pooling.py @6.2.0) or the older `pooling_mode_*`
switches and `word_embedding_dimension`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from calculators.errors import ServewiseInputError
from calculators.i18n import _

#: sentence-transformers `pooling_mode` value (6.x configs) -> servewise pooling slug.
_POOLING_MODES = {
    "cls": "cls",
    "mean": "mean",
    "max": "max",
    "mean_sqrt_len_tokens": "mean_sqrt_len",
    "weightedmean": "weighted_mean",
    "lasttoken": "last_token",
}

#: sentence-transformers Pooling config flag (older configs) -> servewise pooling slug.
_POOLING_FLAGS = {
    "pooling_mode_cls_token": "cls",
    "pooling_mode_mean_tokens": "mean",
    "pooling_mode_max_tokens": "max",
    "pooling_mode_mean_sqrt_len_tokens": "mean_sqrt_len",
    "pooling_mode_weightedmean_tokens": "weighted_mean",
    "pooling_mode_lasttoken": "last_token",
}


@dataclass(frozen=True)
class EmbeddingPooling:
    """One embedding model's pooling recipe; `output_dimension` None when a Dense module resizes it."""

    pooling: tuple[str, ...]  # usually one mode; sentence-transformers concatenates several when set
    output_dimension: int | None
    normalized: bool


def embedding_pooling_from_files(
    pooling_config: Mapping[str, Any], modules: Sequence[Mapping[str, Any]] | None = None
) -> EmbeddingPooling:
    """Pooling modes, output dimension (elements) and L2 normalisation from sentence-transformers files."""
    named = pooling_config.get("pooling_mode")  # sentence-transformers 6.x: one name or a list of names
    if named is not None:
        names = [named] if isinstance(named, str) else list(named) if isinstance(named, list) else []
        unknown = [n for n in names if n not in _POOLING_MODES]
        if unknown or not names:
            raise ServewiseInputError(
                _("1_Pooling/config.json: pooling_mode {named!r} is not a sentence-transformers mode").format(
                  named=named)
            )
        modes = tuple(_POOLING_MODES[n] for n in names)
    else:
        modes = tuple(slug for flag, slug in _POOLING_FLAGS.items() if pooling_config.get(flag))
    if not modes:
        raise ServewiseInputError(
            _("1_Pooling/config.json enables no pooling mode (pooling_mode_* all false or absent)"))
    width = pooling_config.get("embedding_dimension", pooling_config.get("word_embedding_dimension"))
    if not isinstance(width, int):
        raise ServewiseInputError(_("1_Pooling/config.json has no embedding_dimension (or word_embedding_dimension)"))
    types = [str(module.get("type", "")) for module in modules or ()]
    resized = any(t.endswith(".Dense") for t in types)
    return EmbeddingPooling(
        pooling=modes,
        output_dimension=None if resized else width * len(modes),
        normalized=any(t.endswith(".Normalize") for t in types),
    )
