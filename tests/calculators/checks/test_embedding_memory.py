"""Embedding-server memory: weights plus one batch's activations, no KV cache."""

import pytest

from calculators.checks.embedding_memory import embedding_server_memory
from calculators.errors import ServewiseInputError
from calculators.model.catalog import architecture_from_catalog
from knowledge.loader import load_knowledge


def test_bge_m3_activation_bytes_per_token_by_hand() -> None:
    kb = load_knowledge()
    arch = architecture_from_catalog("bge-m3", kb)
    memory = embedding_server_memory(arch, weights_bytes=1_000, intermediate_size=4096, batch_tokens=10)
    # hidden 1024, 16 heads x 64, 16 KV heads x 64 (knowledge/models.yaml bge-m3 config), intermediate 4096:
    # residual in/out 2 x 1024 + q/k/v 3 x 1024 + gate/up 2 x 4096 = 13,312 elements x 2 bytes.
    assert memory.activation_bytes_per_token == 26_624
    assert memory.activation_bytes == 266_240 and memory.total_bytes == 267_240
    assert memory.kv_cache_bytes == 0


def test_bad_inputs_are_refused() -> None:
    arch = architecture_from_catalog("bge-m3", load_knowledge())
    with pytest.raises(ServewiseInputError, match="at least one token"):
        embedding_server_memory(arch, 1, 4096, 0)
    with pytest.raises(ServewiseInputError, match="intermediate_size"):
        embedding_server_memory(arch, 1, 0, 10)
