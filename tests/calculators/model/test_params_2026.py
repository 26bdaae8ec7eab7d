"""Parameter counts of the 2025-2026 families added for issue 17, pinned to transformers' own count.

Figures: transformers 5.19.0 instantiated on the meta device (no weights) from the catalog's source config
(ai-dynamo/aiconfigurator model_configs @095f58a5), `sum(p.numel() for p in model.parameters())`, language
model only. servewise also counts the routers' score-correction biases (a buffer in transformers, a tensor in
the checkpoint), as it already does for DeepSeek-V3: one per routed expert per MoE layer.
"""

from __future__ import annotations

import pytest

from calculators.errors import ServewiseInputError
from calculators.model.architecture import LayerKind
from calculators.model.catalog import architecture_from_catalog
from calculators.model.params import count_parameters
from knowledge.loader import load_knowledge

CATALOG = load_knowledge().models


@pytest.mark.parametrize(
    ("model_id", "transformers_total", "score_biases"),
    [
        ("qwen3-coder-480b-a35b", 480_154_875_392, 0),
        ("llama-4-scout-17b-16e", 107_769_861_120, 0),
        ("llama-4-maverick-17b-128e", 400_711_848_960, 0),
        ("minimax-m2.5", 228_689_748_992, 62 * 256),
        ("kimi-k2.5", 1_026_408_209_408, 60 * 384),
        ("gemma-4-31b", 30_697_345_280, 0),
        ("glm-5", 743_911_199_232, 75 * 256),
    ],
)
def test_total_equals_transformers_count(model_id, transformers_total, score_biases):
    assert count_parameters(CATALOG.get(model_id).config).total == transformers_total + score_biases


def test_llama4_layers_alternate_chunked_and_global():
    arch = architecture_from_catalog("llama-4-scout-17b-16e")
    kinds = [layer.kind for layer in arch.layers]
    assert kinds[:4] == [LayerKind.SLIDING, LayerKind.SLIDING, LayerKind.SLIDING, LayerKind.FULL]
    assert arch.layers[0].sliding_window_tokens == 8192
    assert arch.moe.n_dense_layers == 0
    assert architecture_from_catalog("llama-4-maverick-17b-128e").moe.n_dense_layers == 24


def test_gemma4_global_layers_have_their_own_heads():
    arch = architecture_from_catalog("gemma-4-31b")
    full = arch.layers_of(LayerKind.FULL)
    assert len(full) == 10 and full[0].n_kv_heads == 4 and full[0].head_dim_k == 512
    assert arch.layers_of(LayerKind.SLIDING)[0].head_dim_k == 256


def test_mla_families_cache_a_latent():
    for model_id in ("kimi-k2.5", "glm-5"):
        layer = architecture_from_catalog(model_id).layers[0]
        assert (layer.kind, layer.kv_lora_rank, layer.qk_rope_head_dim) == (LayerKind.MLA, 512, 64)
    assert any("indexer" in note for note in architecture_from_catalog("glm-5").notes)


def test_gemma4_moe_is_refused_until_counted():
    config = {**CATALOG.get("gemma-4-31b").config}
    config["text_config"] = {**config["text_config"], "enable_moe_block": True}
    with pytest.raises(ServewiseInputError, match="dense models only"):
        count_parameters(config)
