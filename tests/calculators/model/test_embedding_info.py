"""Pooling recipe from sentence-transformers files, shaped as bge-m3's and Qwen3-Embedding's ship them."""

from __future__ import annotations

import pytest

from calculators.errors import ServewiseInputError
from calculators.model.embedding_info import embedding_pooling_from_files

MODULES_WITH_NORMALIZE = [
    {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
    {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
    {"idx": 2, "name": "2", "path": "2_Normalize", "type": "sentence_transformers.models.Normalize"},
]


def test_cls_pooling_normalised_1024():  # bge-m3: CLS, 1024, Normalize module
    pooling = {"word_embedding_dimension": 1024, "pooling_mode_cls_token": True, "pooling_mode_mean_tokens": False}
    info = embedding_pooling_from_files(pooling, MODULES_WITH_NORMALIZE)
    assert (info.pooling, info.output_dimension, info.normalized) == (("cls",), 1024, True)


def test_last_token_pooling():  # Qwen3-Embedding: last token, 1024
    pooling = {"word_embedding_dimension": 1024, "pooling_mode_lasttoken": True, "include_prompt": True}
    info = embedding_pooling_from_files(pooling, MODULES_WITH_NORMALIZE)
    assert info.pooling == ("last_token",) and info.output_dimension == 1024


def test_dense_module_makes_dimension_unknown_and_no_normalize_means_raw():
    modules = [*MODULES_WITH_NORMALIZE[:2], {"idx": 2, "type": "sentence_transformers.models.Dense"}]
    info = embedding_pooling_from_files({"word_embedding_dimension": 768, "pooling_mode_mean_tokens": True}, modules)
    assert (info.output_dimension, info.normalized) == (None, False)


def test_no_mode_is_an_error():
    with pytest.raises(ServewiseInputError, match="no pooling mode"):
        embedding_pooling_from_files({"word_embedding_dimension": 768})


def test_sentence_transformers_6_config_keys():
    # sentence-transformers 6.2.0 writes pooling_mode and embedding_dimension (config_keys of its Pooling module)
    from calculators.model.embedding_info import embedding_pooling_from_files

    pooled = embedding_pooling_from_files({"embedding_dimension": 1024, "pooling_mode": "lasttoken"})
    assert (pooled.pooling, pooled.output_dimension) == (("last_token",), 1024)
    both = embedding_pooling_from_files({"embedding_dimension": 8, "pooling_mode": ["cls", "mean"]})
    assert (both.pooling, both.output_dimension) == (("cls", "mean"), 16)
