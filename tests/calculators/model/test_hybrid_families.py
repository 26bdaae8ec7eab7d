"""Hybrid families read from config.json: which layers keep state, the state's shapes, and parameter counts."""

from __future__ import annotations

import pytest

from calculators.errors import ServewiseInputError
from calculators.model.architecture import LayerKind
from calculators.model.hf_config import architecture_from_config, architecture_from_config_file
from calculators.model.params import count_parameters
from tests.support.paths import HF_CONFIG_DIR

CONFIGS = HF_CONFIG_DIR

GRANITE = {"model_type": "granitemoehybrid", "hidden_size": 128, "intermediate_size": 96, "num_hidden_layers": 4,
           "layer_types": ["mamba", "mamba", "mamba", "attention"], "num_attention_heads": 4, "num_key_value_heads": 2,
           "mamba_n_heads": 8, "mamba_d_head": 32, "mamba_n_groups": 1, "mamba_d_state": 16, "mamba_d_conv": 4,
           "mamba_expand": 2, "num_local_experts": 4, "num_experts_per_tok": 2, "shared_intermediate_size": 256,
           "vocab_size": 1024, "max_position_embeddings": 4096, "tie_word_embeddings": True}
GRANITE_DENSE = {**GRANITE, "layer_types": ["mamba", "attention", "mamba", "mamba"], "mamba_n_groups": 2,
                 "num_local_experts": 0, "num_experts_per_tok": 0, "tie_word_embeddings": False}
NEMOTRON = {"model_type": "nemotron_h", "hidden_size": 128, "intermediate_size": 256, "num_hidden_layers": 6,
            "hybrid_override_pattern": "M-M*M-", "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 32,
            "mamba_num_heads": 8, "mamba_head_dim": 32, "n_groups": 2, "ssm_state_size": 16, "conv_kernel": 4,
            "vocab_size": 1024, "max_position_embeddings": 4096, "tie_word_embeddings": False}
QWEN35_MOE = {"model_type": "qwen3_5_moe_text", "hidden_size": 256, "num_hidden_layers": 4, "num_attention_heads": 4,
              "num_key_value_heads": 2, "head_dim": 64, "vocab_size": 1024, "max_position_embeddings": 4096,
              "layer_types": ["linear_attention"] * 3 + ["full_attention"], "full_attention_interval": 4,
              "linear_conv_kernel_dim": 4, "linear_key_head_dim": 32, "linear_num_key_heads": 2,
              "linear_num_value_heads": 4, "linear_value_head_dim": 32, "num_experts": 4, "num_experts_per_tok": 2,
              "moe_intermediate_size": 128, "shared_expert_intermediate_size": 128, "tie_word_embeddings": False}
QWEN35_DENSE = {k: v for k, v in QWEN35_MOE.items() if k not in ("num_experts", "num_experts_per_tok",
                "moe_intermediate_size", "shared_expert_intermediate_size")} | {"model_type": "qwen3_5_text",
                                                                                  "intermediate_size": 512}


FALCON_H1 = {"model_type": "falcon_h1", "hidden_size": 128, "intermediate_size": 256, "num_hidden_layers": 2,
             "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 32, "mamba_n_heads": 8, "mamba_d_head": 32,
             "mamba_n_groups": 1, "mamba_d_state": 16, "mamba_d_conv": 4, "mamba_expand": 2, "mamba_d_ssm": 256,
             "mamba_chunk_size": 64, "vocab_size": 1024, "max_position_embeddings": 4096, "tie_word_embeddings": False}


@pytest.mark.parametrize(("config", "transformers_count"), [
    # transformers 5.19.0 (the vLLM CPU venv's): AutoModelForCausalLM.from_config(config).parameters(), summed
    # (tied weights once), on these tiny configs, 2026-12-01
    (GRANITE, 1_481_896), (GRANITE_DENSE, 1_033_864), (NEMOTRON, 771_464), (QWEN35_MOE, 3_162_616),
    (QWEN35_DENSE, 2_764_280), (FALCON_H1, 767_472),
])
def test_parameter_counts_equal_transformers_own(config, transformers_count):
    assert count_parameters(config).total == transformers_count


def test_nemotron_h_pattern_gives_state_attention_and_stateless_blocks():
    arch = architecture_from_config(NEMOTRON)
    assert [layer.kind for layer in arch.layers] == [LayerKind.RECURRENT, LayerKind.NONE, LayerKind.RECURRENT,
                                                     LayerKind.FULL, LayerKind.RECURRENT, LayerKind.NONE]
    state = arch.layers[0].recurrent
    # Mamba2: conv over d_inner + 2 x n_groups x d_state = 256 + 2 x 2 x 16; state (heads, head_dim, d_state)
    assert (state.conv_channels(1), state.ssm_shape(1)) == (320, (8, 32, 16))
    assert (state.conv_channels(2), state.ssm_shape(2)) == (160, (4, 32, 16))
    assert arch.layers[0].recurrent_conv_elements == 3 * 320  # llama.cpp n_embd_r = (d_conv - 1) x channels


def test_mamba2_groups_widen_to_the_ranks_when_they_do_not_divide():
    arch = architecture_from_config(GRANITE)  # one group: TP 2 gives each rank a copy of it
    state = arch.layers[0].recurrent
    assert state.conv_channels(1) == 256 + 2 * 1 * 16
    assert state.conv_channels(2) == (256 + 2 * 2 * 16) // 2


def test_qwen3_5_reads_its_text_config_and_mtp_layer():
    arch = architecture_from_config_file(CONFIGS / "Qwen3.5-397B-A17B.json")
    assert arch.n_layers == 60 and len(arch.layers_of(LayerKind.RECURRENT)) == 45
    assert arch.mtp_layers == 1
    state = arch.layers[0].recurrent
    assert state.mixer == "gated_deltanet"
    # conv over q, k, v: 16 x 128 x 2 + 64 x 128; state (v_heads, v_dim, k_dim)
    assert (state.conv_channels(2), state.ssm_shape(2)) == (6144, (32, 128, 128))


def test_qwen3_next_keeps_its_llama_cpp_element_counts():
    arch = architecture_from_config_file(CONFIGS / "Qwen3-Next-80B-A3B-Thinking.json")
    layer = arch.layers_of(LayerKind.RECURRENT)[0]
    assert (layer.recurrent_conv_elements, layer.recurrent_state_elements) == (3 * 8192, 128 * 4096)


def test_granite_without_layer_types_names_the_field():
    config = {k: v for k, v in GRANITE.items() if k != "layer_types"}
    with pytest.raises(ServewiseInputError, match="layer_types"):
        architecture_from_config(config)


def test_a_bad_nemotron_pattern_is_a_clear_error():
    with pytest.raises(ServewiseInputError, match="hybrid_override_pattern"):
        architecture_from_config({**NEMOTRON, "hybrid_override_pattern": "M-M*"})


def test_falcon_h1_layers_keep_both_kv_and_state():
    arch = architecture_from_config(FALCON_H1)
    assert [layer.kind for layer in arch.layers] == [LayerKind.FULL, LayerKind.FULL]
    state = arch.layers[0].recurrent
    assert (state.mixer, state.conv_channels(1), state.ssm_shape(1)) == ("mamba2", 288, (8, 32, 16))


def test_kimi_linear_is_refused_with_the_reason_it_is_not_modelled():
    """Issue 14: Kimi Linear is served by vLLM and SGLang but not planned here; a config says so, not 'unknown'."""
    config = {"model_type": "kimi_linear", "num_hidden_layers": 27,
              "linear_attn_config": {"full_attn_layers": [4, 8, 12, 16, 20, 24, 27], "num_heads": 32, "head_dim": 128}}
    with pytest.raises(ServewiseInputError, match="Kimi Linear .* is not planned yet: vLLM 0.33.0"):
        architecture_from_config(config)
