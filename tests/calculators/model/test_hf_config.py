"""Architectures built from real config.json contents: layer kinds, KV heads, head sizes, windows, MLA, state.

Bytes per token are pinned to figures worked out by hand from each config (shown in the comments),
at bf16 (2 bytes per element): per layer, K + V = 2 x KV heads x head_dim elements.
"""

from __future__ import annotations

import json

import pytest

from calculators.errors import ConfigFieldMissing, ServewiseInputError
from calculators.memory.kv import raw_kv_estimate
from calculators.model.architecture import LayerKind
from calculators.model.hf_config import (
    SUPPORTED_MODEL_TYPES,
    architecture_from_config,
    architecture_from_config_file,
    architecture_from_config_text,
)
from tests.support.real_configs import CONFIGS, load

BF16 = 2


def arch(name: str):
    if (CONFIGS / f"{name}.json").exists():
        return architecture_from_config_file(CONFIGS / f"{name}.json")
    return architecture_from_config(load(name), name=name)


def per_token_bf16(name: str) -> tuple[float, float]:
    """(bytes/token of full+MLA layers, bytes/token of sliding layers) at bf16."""
    est = raw_kv_estimate(arch(name), tokens_per_sequence=1, n_sequences=1, bytes_per_element=BF16)
    return est.bytes_per_token_unbounded_layers, est.bytes_per_token_window_layers


@pytest.mark.parametrize(
    ("name", "layers", "kv_heads", "head_dim", "unbounded_bytes"),
    [
        ("Llama-3.1-8B-Instruct", 32, 8, 128, 131_072),  # 32 x 2 x 8 x 128 x 2
        ("Llama-3.1-70B-Instruct", 80, 8, 128, 327_680),  # 80 x 2 x 8 x 128 x 2
        ("Meta-Llama-3.1-405B", 126, 8, 128, 516_096),  # 126 x 2 x 8 x 128 x 2
        ("Llama-3.2-1B", 16, 8, 64, 32_768),  # 16 x 2 x 8 x 64 x 2
        ("Llama-3.2-3B", 28, 8, 128, 114_688),  # 28 x 2 x 8 x 128 x 2
        ("Mistral-7B-v0.3", 32, 8, 128, 131_072),
        ("Qwen2-7B", 28, 4, 128, 57_344),  # 28 x 2 x 4 x 128 x 2
        ("Qwen3-0.6B", 28, 8, 128, 114_688),  # 28 x 2 x 8 x 128 x 2 (hidden 1024 / 16 heads would be 64)
        ("Qwen3-1.7B", 28, 8, 128, 114_688),
        ("Qwen3-8B", 36, 8, 128, 147_456),  # 36 x 2 x 8 x 128 x 2
        ("Qwen3-32B", 64, 8, 128, 262_144),
        ("Phi-3.5-mini-instruct", 32, 32, 96, 393_216),  # MHA: 32 x 2 x 32 x 96 x 2
        ("Phi-4-mini-instruct", 32, 8, 128, 131_072),
        ("Mistral-Small-3.1-24B-Instruct-2503", 40, 8, 128, 163_840),  # 40 x 2 x 8 x 128 x 2
        ("Mixtral-8x7B-v0.1", 32, 8, 128, 131_072),
        ("Qwen3-30B-A3B", 48, 4, 128, 98_304),  # 48 x 2 x 4 x 128 x 2
        ("Qwen3-235B-A22B", 94, 4, 128, 192_512),  # 94 x 2 x 4 x 128 x 2
    ],
)
def test_full_attention_families(name, layers, kv_heads, head_dim, unbounded_bytes):
    a = arch(name)
    assert a.n_layers == layers
    assert {layer.kind for layer in a.layers} == {LayerKind.FULL}
    assert {(layer.n_kv_heads, layer.head_dim_k, layer.head_dim_v) for layer in a.layers} == {
        (kv_heads, head_dim, head_dim)
    }
    assert per_token_bf16(name) == (unbounded_bytes, 0)


def test_explicit_head_dim_wins_over_hidden_over_heads():
    # Mistral Small 3.1: hidden 5120 / 32 heads would be 160; config.json says head_dim 128.
    assert arch("Mistral-Small-3.1-24B-Instruct-2503").layers[0].head_dim_k == 128
    # Qwen3-30B-A3B: hidden 2048 / 32 heads would be 64; head_dim is 128.
    assert arch("Qwen3-30B-A3B").layers[0].head_dim_k == 128


def test_head_dim_derived_when_absent_for_llama_style():
    cfg = load("Llama-3.1-8B-Instruct")
    assert "head_dim" not in cfg
    assert arch("Llama-3.1-8B-Instruct").layers[0].head_dim_k == 4096 // 32


def test_kv_heads_default_to_query_heads_as_hf_does():
    cfg = load("Llama-3.1-8B-Instruct")
    del cfg["num_key_value_heads"]
    assert architecture_from_config(cfg).layers[0].n_kv_heads == 32


def test_gemma2_alternates_sliding_and_global():
    a = arch("gemma-2-9b")
    assert [layer.kind for layer in a.layers[:4]] == [LayerKind.SLIDING, LayerKind.FULL] * 2
    assert a.layers[0].sliding_window_tokens == 4096 and a.layers[1].sliding_window_tokens is None
    assert (a.layers[0].n_kv_heads, a.layers[0].head_dim_k) == (8, 256)  # hidden/heads would be 224
    # 21 global and 21 local layers, each 2 x 8 x 256 x 2 = 8,192 bytes per token
    assert per_token_bf16("gemma-2-9b") == (172_032, 172_032)
    assert per_token_bf16("gemma-2-27b") == (23 * 2 * 16 * 128 * 2, 23 * 2 * 16 * 128 * 2)


@pytest.mark.parametrize(
    ("name", "layers", "global_layers", "kv_heads", "head_dim"),
    [
        ("gemma-3-4b-it", 34, 5, 4, 256),  # KV heads and head_dim from Gemma3TextConfig defaults
        ("gemma-3-12b-it", 48, 8, 8, 256),
        ("gemma-3-27b-it", 62, 10, 16, 128),
    ],
)
def test_gemma3_five_local_one_global_through_multimodal_wrapper(name, layers, global_layers, kv_heads, head_dim):
    a = arch(name)
    assert a.family == "gemma3_text"
    assert a.n_layers == layers
    full = [i for i, layer in enumerate(a.layers) if layer.kind is LayerKind.FULL]
    assert full == list(range(5, layers, 6))
    assert len(full) == global_layers
    assert {layer.sliding_window_tokens for layer in a.layers_of(LayerKind.SLIDING)} == {1024}
    assert (a.layers[0].n_kv_heads, a.layers[0].head_dim_k) == (kv_heads, head_dim)
    per_layer = 2 * kv_heads * head_dim * BF16
    assert per_token_bf16(name) == (global_layers * per_layer, (layers - global_layers) * per_layer)
    assert a.max_context_tokens == 131_072


def test_gemma3_text_without_wrapper():
    a = arch("gemma-3-1b-it")  # model_type gemma3_text at top level, window 512, MQA
    assert (a.family, a.n_layers, a.max_context_tokens) == ("gemma3_text", 26, 32768)
    assert [i for i, layer in enumerate(a.layers) if layer.kind is LayerKind.FULL] == [5, 11, 17, 23]
    assert (a.layers[0].n_kv_heads, a.layers[0].head_dim_k, a.layers[0].sliding_window_tokens) == (1, 256, 512)
    assert a.params_total == 999_885_952  # keras-hub gemma3_presets.py gemma3_1b (same 262,144 vocabulary)


def test_gemma3_layer_types_win_over_pattern():
    cfg = load("gemma-3-27b-it")
    cfg["text_config"]["layer_types"] = ["full_attention"] * 62
    assert {layer.kind for layer in architecture_from_config(cfg).layers} == {LayerKind.FULL}


def test_gpt_oss_layer_types_window_128():
    a = arch("gpt-oss-20b")
    assert [layer.kind for layer in a.layers[:2]] == [LayerKind.SLIDING, LayerKind.FULL]
    assert {layer.sliding_window_tokens for layer in a.layers_of(LayerKind.SLIDING)} == {128}
    assert (a.layers[0].n_kv_heads, a.layers[0].head_dim_k) == (8, 64)
    assert per_token_bf16("gpt-oss-20b") == (12 * 2 * 8 * 64 * 2, 12 * 2 * 8 * 64 * 2)  # 24,576 each
    assert per_token_bf16("gpt-oss-120b") == (36_864, 36_864)
    assert (a.moe.n_experts, a.moe.n_active) == (32, 4)


def test_moe_all_experts_resident_few_active():
    mixtral = arch("Mixtral-8x7B-v0.1")
    assert (mixtral.moe.n_experts, mixtral.moe.n_active, mixtral.moe.expert_intermediate_size) == (8, 2, 14336)
    qwen = arch("Qwen3-30B-A3B")
    assert (qwen.moe.n_experts, qwen.moe.n_active, qwen.moe.expert_intermediate_size, qwen.moe.n_dense_layers) == (
        128,
        8,
        768,
        0,
    )
    assert qwen.params_total > 9 * qwen.params_active


def test_deepseek_v3_mla():
    a = arch("DeepSeek-V3")
    assert a.n_layers == 61 and {layer.kind for layer in a.layers} == {LayerKind.MLA}
    layer = a.layers[0]
    assert (layer.kv_lora_rank, layer.qk_rope_head_dim) == (512, 64)
    assert (layer.head_dim_k, layer.head_dim_v, layer.n_kv_heads) == (192, 128, 128)
    # one latent (512) + one rope key (64) per token per layer: 61 x 576 x 2 bytes
    assert per_token_bf16("DeepSeek-V3") == (70_272, 0)
    assert (a.moe.n_experts, a.moe.n_active, a.moe.n_shared, a.moe.n_dense_layers) == (256, 8, 1, 3)


def test_deepseek_v2_lite_mla_without_q_lora():
    a = arch("DeepSeek-V2-Lite")
    assert per_token_bf16("DeepSeek-V2-Lite") == (27 * 576 * 2, 0)  # 31,104
    assert (a.moe.n_experts, a.moe.n_active, a.moe.n_shared, a.moe.n_dense_layers) == (64, 6, 2, 1)


def test_qwen3_next_hybrid_full_every_fourth_layer_plus_recurrent_state():
    a = arch("Qwen3-Next-80B-A3B-Thinking")
    full = [i for i, layer in enumerate(a.layers) if layer.kind is LayerKind.FULL]
    assert full == list(range(3, 48, 4))
    assert len(a.layers_of(LayerKind.RECURRENT)) == 36
    # llama.cpp: conv (d_conv-1) x (d_inner + 2 n_group d_state) = 3 x (32x128 + 2x16x128) = 24,576;
    # state d_state x d_inner = 128 x 4,096 = 524,288 elements per sequence per layer.
    rec = a.layers_of(LayerKind.RECURRENT)[0]
    assert (rec.recurrent_conv_elements, rec.recurrent_state_elements) == (24_576, 524_288)
    assert per_token_bf16("Qwen3-Next-80B-A3B-Thinking") == (12 * 2 * 2 * 256 * 2, 0)  # 24,576
    est = raw_kv_estimate(a, tokens_per_sequence=0, n_sequences=1, bytes_per_element=BF16)
    assert est.recurrent_state_bytes_per_sequence == 36 * (24_576 + 524_288) * 4  # f32: 79,036,416
    assert (a.moe.n_experts, a.moe.n_active, a.moe.n_shared) == (512, 10, 1)


def test_jamba_attention_one_layer_in_eight_mamba_elsewhere():
    a = arch("AI21-Jamba-1.5-Mini")
    assert [i for i, layer in enumerate(a.layers) if layer.kind is LayerKind.FULL] == [4, 12, 20, 28]
    rec = a.layers_of(LayerKind.RECURRENT)[0]
    # d_inner = 2 x 4096; Mamba v1 has no groups: conv 3 x 8192, state 16 x 8192
    assert (rec.recurrent_conv_elements, rec.recurrent_state_elements) == (24_576, 131_072)
    assert per_token_bf16("AI21-Jamba-1.5-Mini") == (4 * 2 * 8 * 128 * 2, 0)  # 16,384
    assert (a.moe.n_experts, a.moe.n_active, a.moe.n_dense_layers) == (16, 2, 16)


def test_pure_mamba_has_no_kv_only_state():
    a = arch("falcon-mamba-7b")
    assert a.n_layers == 64 and {layer.kind for layer in a.layers} == {LayerKind.RECURRENT}
    assert (a.layers[0].recurrent_conv_elements, a.layers[0].recurrent_state_elements) == (3 * 8192, 16 * 8192)
    assert per_token_bf16("falcon-mamba-7b") == (0, 0)


def test_embedding_models():
    bge = arch("bge-m3")
    assert bge.is_embedding_model and bge.family == "xlm-roberta"
    assert (bge.n_layers, bge.layers[0].n_kv_heads, bge.layers[0].head_dim_k) == (24, 16, 64)
    qwen_as_embedder = architecture_from_config(load("Qwen3-0.6B"), is_embedding_model=True)
    assert qwen_as_embedder.is_embedding_model
    assert not arch("Qwen3-0.6B").is_embedding_model


def test_qwen2_window_only_when_use_sliding_window():
    cfg = load("Qwen2-7B")
    assert cfg["use_sliding_window"] is False
    assert {layer.kind for layer in architecture_from_config(cfg).layers} == {LayerKind.FULL}
    cfg.update(use_sliding_window=True, sliding_window=4096, max_window_layers=20)
    kinds = [layer.kind for layer in architecture_from_config(cfg).layers]
    assert kinds == [LayerKind.FULL] * 20 + [LayerKind.SLIDING] * 8


def test_mistral_window_applies_to_every_layer_when_set():
    cfg = load("Mistral-7B-v0.3")
    cfg["sliding_window"] = 4096  # as Mistral 7B v0.1 published it
    assert {(layer.kind, layer.sliding_window_tokens) for layer in architecture_from_config(cfg).layers} == {
        (LayerKind.SLIDING, 4096)
    }


def test_phi3_window_longer_than_context_is_full_attention():
    a = arch("Phi-3.5-mini-instruct")  # sliding_window 262144 > 131072 positions
    assert {layer.kind for layer in a.layers} == {LayerKind.FULL}
    assert any("sliding_window" in note for note in a.notes)


def test_names_and_sources():
    a = arch("Llama-3.1-8B-Instruct")
    assert a.name == "Llama-3.1-8B-Instruct" and a.source.endswith("Llama-3.1-8B-Instruct.json")
    assert a.max_context_tokens == 131_072 and a.vocab_size == 128_256 and a.n_heads == 32


# --- errors a user can cause -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "drop", "family"),
    [
        ("Llama-3.1-8B-Instruct", "num_hidden_layers", "llama"),
        ("Qwen3-0.6B", "head_dim", "qwen3"),
        ("DeepSeek-V3", "kv_lora_rank", "deepseek_v3"),
        ("DeepSeek-V3", "first_k_dense_replace", "deepseek_v3"),
        ("gemma-2-9b", "sliding_window", "gemma2"),
        ("gpt-oss-20b", "layer_types", "gpt_oss"),
        ("Qwen3-Next-80B-A3B-Thinking", "linear_key_head_dim", "qwen3_next"),
        ("AI21-Jamba-1.5-Mini", "attn_layer_period", "jamba"),
        ("Mixtral-8x7B-v0.1", "num_local_experts", "mixtral"),
    ],
)
def test_missing_field_names_field_and_family(name, drop, family):
    cfg = load(name)
    del cfg[drop]
    with pytest.raises(ConfigFieldMissing) as err:
        architecture_from_config(cfg)
    assert (err.value.field, err.value.family) == (drop, family)
    assert drop in str(err.value) and family in str(err.value)


def test_wrapper_without_text_config():
    cfg = load("Mistral-Small-3.1-24B-Instruct-2503")
    del cfg["text_config"]
    with pytest.raises(ConfigFieldMissing, match="text_config"):
        architecture_from_config(cfg)


def test_missing_model_type():
    with pytest.raises(ConfigFieldMissing, match="model_type"):
        architecture_from_config({"hidden_size": 4096})


def test_unknown_model_type_is_named():
    with pytest.raises(ServewiseInputError, match="'rwkv7'") as err:
        architecture_from_config({"model_type": "rwkv7"})
    assert "llama" in str(err.value)  # lists the families it does know


@pytest.mark.parametrize("text", ['{"model_type": "llama",', "not json at all", ""])
def test_malformed_json(text):
    with pytest.raises(ServewiseInputError, match="not valid JSON"):
        architecture_from_config_text(text)


def test_json_that_is_not_an_object():
    with pytest.raises(ServewiseInputError, match="JSON object"):
        architecture_from_config_text("[1, 2, 3]")


def test_missing_file(tmp_path):
    with pytest.raises(ServewiseInputError, match="cannot read"):
        architecture_from_config_file(tmp_path / "config.json")


def test_wrong_layer_types_length():
    cfg = load("gpt-oss-20b")
    cfg["layer_types"] = cfg["layer_types"][:-1]
    with pytest.raises(ServewiseInputError, match="one entry per layer"):
        architecture_from_config(cfg)


def test_kv_heads_must_divide_heads():
    cfg = load("Llama-3.1-8B-Instruct")
    cfg["num_key_value_heads"] = 5
    with pytest.raises(ServewiseInputError, match="must divide"):
        architecture_from_config(cfg)


def test_text_round_trip_matches_dict():
    text = (CONFIGS / "gemma-3-27b-it.json").read_text()
    assert architecture_from_config_text(text).layers == arch("gemma-3-27b-it").layers


def test_every_test_config_is_a_supported_family():
    for path in CONFIGS.glob("*.json"):
        cfg = json.loads(path.read_text())
        assert cfg["model_type"] in SUPPORTED_MODEL_TYPES, path.name


def test_geometry_survives_a_config_too_thin_to_count_weights():
    cfg = load("Llama-3.1-8B-Instruct")
    del cfg["intermediate_size"]  # not needed for the KV cache, needed for the weights
    a = architecture_from_config(cfg)
    assert a.n_layers == 32 and a.params_total is None and a.params_active is None
    assert "parameter count unknown: config.json has no 'intermediate_size'" in a.notes
