"""resolve_model: exactly one source, each path reaching its builder."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from gguf import GGUFWriter

from calculators.errors import ServewiseInputError
from calculators.model_source import resolve_model

CONFIGS = Path(__file__).resolve().parents[1] / "data" / "hf_configs"


def test_config_file_and_catalog_agree_on_geometry():
    from_file = resolve_model(hf_config=CONFIGS / "Meta-Llama-3.1-8B.json")
    from_catalog = resolve_model(model="llama-3.1-8b")
    assert from_file.architecture.layers == from_catalog.architecture.layers
    assert from_file.weights_bytes is None and from_catalog.architecture.params_total == 8_030_261_248


def test_gguf_gives_exact_weight_bytes(tmp_path):
    writer = GGUFWriter(tmp_path / "m.gguf", "llama")
    for method, value in (("add_block_count", 2), ("add_head_count", 4), ("add_embedding_length", 64)):
        getattr(writer, method)(value)
    writer.add_tensor("token_embd.weight", np.zeros((8, 64), dtype=np.float16))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    resolved = resolve_model(gguf=tmp_path / "m.gguf")
    assert resolved.weights_bytes == 8 * 64 * 2 and resolved.tensor_types == {"F16": 1}


@pytest.mark.parametrize("kwargs", [{}, {"model": "llama-3.1-8b", "hf_model": "a/b"}])
def test_exactly_one_source(kwargs):
    with pytest.raises(ServewiseInputError, match="exactly one model source"):
        resolve_model(**kwargs)
