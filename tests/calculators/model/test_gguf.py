"""GGUF headers read without tensor data: geometry, per-layer KV heads, windows, MLA, recurrent state, bytes.

Each test writes a tiny GGUF with `gguf.GGUFWriter` carrying a real model's attention keys (as
llama.cpp's convert_hf_to_gguf.py writes them) and a few small tensors whose byte sizes are known.
"""

from __future__ import annotations

import numpy as np
import pytest
from gguf import GGMLQuantizationType, GGUFWriter
from gguf.constants import GGML_QUANT_SIZES
from gguf.quants import quantize

from calculators.errors import ServewiseInputError
from calculators.model.architecture import LayerKind
from calculators.model.ggml_types import ggml_tensor_bytes
from calculators.model.gguf import read_gguf_header


def write_gguf(path, arch: str, keys, tensors=None):
    writer = GGUFWriter(path, arch)
    for method, value in keys:
        getattr(writer, method)(value)
    for name, array, raw_dtype in tensors or [("token_embd.weight", np.zeros((4, 32), dtype=np.float32), None)]:
        writer.add_tensor(name, array, raw_dtype=raw_dtype)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path


def test_llama_style_gqa_and_exact_weight_bytes(tmp_path):
    q8 = quantize(np.ones((64, 64), dtype=np.float32), GGMLQuantizationType.Q8_0)
    path = write_gguf(
        tmp_path / "llama.gguf",
        "llama",
        [("add_block_count", 4), ("add_head_count", 32), ("add_head_count_kv", 8), ("add_embedding_length", 4096),
         ("add_context_length", 131072), ("add_vocab_size", 128256), ("add_file_type", 7)],
        [
            ("token_embd.weight", np.zeros((16, 64), dtype=np.float16), None),
            ("blk.0.attn_q.weight", q8, GGMLQuantizationType.Q8_0),
            ("output_norm.weight", np.zeros(64, dtype=np.float32), None),
        ],
    )  # fmt: skip
    header = read_gguf_header(path)
    a = header.architecture
    assert (a.family, a.n_layers, a.n_heads, a.max_context_tokens, a.vocab_size) == ("llama", 4, 32, 131072, 128256)
    # no key_length in the file: llama.cpp uses n_embd / n_head = 128
    assert {(layer.kind, layer.n_kv_heads, layer.head_dim_k, layer.head_dim_v) for layer in a.layers} == {
        (LayerKind.FULL, 8, 128, 128)
    }
    block, type_size = GGML_QUANT_SIZES[GGMLQuantizationType.Q8_0]  # 32 values in 34 bytes
    assert header.weights_bytes == 16 * 64 * 2 + 64 * 64 // block * type_size + 64 * 4  # 2048 + 4352 + 256
    assert header.tensor_types == {"F16": 1, "F32": 1, "Q8_0": 1}
    assert header.tensor_count == 3 and header.file_type == 7
    assert a.params_total == a.params_active == 16 * 64 + 64 * 64 + 64  # elements, whatever the storage type
    assert header.file_bytes >= header.weights_bytes


def test_per_layer_kv_head_array_and_explicit_key_length(tmp_path):
    path = write_gguf(
        tmp_path / "x.gguf",
        "llama",
        [("add_block_count", 3), ("add_head_count", 8), ("add_head_count_kv", [8, 2, 4]), ("add_embedding_length", 512),
         ("add_key_length", 96), ("add_value_length", 64)],
    )  # fmt: skip
    layers = read_gguf_header(path).architecture.layers
    assert [(layer.n_kv_heads, layer.head_dim_k, layer.head_dim_v) for layer in layers] == [
        (8, 96, 64),
        (2, 96, 64),
        (4, 96, 64),
    ]


def test_gemma3_sliding_pattern_as_llama_cpp_hard_codes_it(tmp_path):
    path = write_gguf(
        tmp_path / "g3.gguf",
        "gemma3",
        [("add_block_count", 12), ("add_head_count", 8), ("add_head_count_kv", 4), ("add_embedding_length", 2560),
         ("add_key_length", 256), ("add_value_length", 256), ("add_sliding_window", 1024),
         ("add_context_length", 131072)],
    )  # fmt: skip
    a = read_gguf_header(path).architecture
    assert [i for i, layer in enumerate(a.layers) if layer.kind is LayerKind.FULL] == [5, 11]
    assert {layer.sliding_window_tokens for layer in a.layers_of(LayerKind.SLIDING)} == {1024}


def test_gpt_oss_and_explicit_pattern_array(tmp_path):
    path = write_gguf(
        tmp_path / "oss.gguf",
        "gpt-oss",
        [("add_block_count", 4), ("add_head_count", 64), ("add_head_count_kv", 8), ("add_embedding_length", 2880),
         ("add_key_length", 64), ("add_value_length", 64), ("add_sliding_window", 128),
         ("add_expert_count", 32), ("add_expert_used_count", 4)],
        [("token_embd.weight", np.zeros((4, 32), dtype=np.float32), None),
         ("blk.0.ffn_up_exps.weight", np.zeros((32, 2, 32), dtype=np.float16), None)],
    )  # fmt: skip
    a = read_gguf_header(path).architecture
    assert [layer.kind for layer in a.layers] == [LayerKind.SLIDING, LayerKind.FULL] * 2
    assert (a.moe.n_experts, a.moe.n_active) == (32, 4)
    # token_embd 4 x 32 = 128 elements, blk.0.ffn_up_exps 32 experts x 2 x 32 = 2048: 4 of 32 run per token
    assert (a.params_total, a.params_active) == (128 + 2048, 128 + 2048 * 4 // 32)
    explicit = write_gguf(
        tmp_path / "pattern.gguf",
        "llama",
        [("add_block_count", 3), ("add_head_count", 4), ("add_embedding_length", 256), ("add_sliding_window", 512),
         ("add_sliding_window_pattern", [True, False, True])],
    )  # fmt: skip
    kinds = [layer.kind for layer in read_gguf_header(explicit).architecture.layers]
    assert kinds == [LayerKind.SLIDING, LayerKind.FULL, LayerKind.SLIDING]


def test_window_without_known_pattern_counts_full_and_says_so(tmp_path):
    path = write_gguf(
        tmp_path / "phi.gguf",
        "phi3",
        [("add_block_count", 2), ("add_head_count", 32), ("add_embedding_length", 3072), ("add_sliding_window", 2047)],
    )  # fmt: skip
    a = read_gguf_header(path).architecture
    assert {layer.kind for layer in a.layers} == {LayerKind.FULL}
    assert "2047-token sliding window" in a.notes[0]


def test_deepseek2_mla(tmp_path):
    path = write_gguf(
        tmp_path / "ds.gguf",
        "deepseek2",
        [("add_block_count", 3), ("add_head_count", 128), ("add_head_count_kv", 1), ("add_embedding_length", 7168),
         ("add_key_length", 576), ("add_value_length", 512), ("add_key_length_mla", 192), ("add_value_length_mla", 128),
         ("add_kv_lora_rank", 512), ("add_rope_dimension_count", 64), ("add_expert_count", 256),
         ("add_expert_used_count", 8), ("add_expert_shared_count", 1), ("add_leading_dense_block_count", 3)],
    )  # fmt: skip
    a = read_gguf_header(path).architecture
    layer = a.layers[0]
    assert (layer.kind, layer.kv_lora_rank, layer.qk_rope_head_dim) == (LayerKind.MLA, 512, 64)
    assert (layer.head_dim_k, layer.head_dim_v) == (192, 128)
    assert layer.k_elements_per_token == 576 and layer.v_elements_per_token == 0
    assert (a.moe.n_shared, a.moe.n_dense_layers) == (1, 3)


def test_qwen3next_recurrent_state_from_ssm_keys(tmp_path):
    path = write_gguf(
        tmp_path / "q3n.gguf",
        "qwen3next",
        [("add_block_count", 8), ("add_head_count", 16), ("add_head_count_kv", 2), ("add_embedding_length", 2048),
         ("add_key_length", 256), ("add_value_length", 256), ("add_full_attention_interval", 4),
         ("add_ssm_conv_kernel", 4), ("add_ssm_state_size", 128), ("add_ssm_group_count", 16),
         ("add_ssm_time_step_rank", 32), ("add_ssm_inner_size", 4096)],
    )  # fmt: skip
    a = read_gguf_header(path).architecture
    assert [i for i, layer in enumerate(a.layers) if layer.kind is LayerKind.FULL] == [3, 7]
    rec = a.layers_of(LayerKind.RECURRENT)[0]
    assert (rec.recurrent_conv_elements, rec.recurrent_state_elements) == (24_576, 524_288)  # same as from config.json


def test_jamba_style_zero_kv_heads_mark_mamba_layers(tmp_path):
    path = write_gguf(
        tmp_path / "jamba.gguf",
        "jamba",
        [("add_block_count", 8), ("add_head_count", 32), ("add_head_count_kv", [0, 0, 0, 0, 8, 0, 0, 0]),
         ("add_embedding_length", 4096), ("add_ssm_conv_kernel", 4), ("add_ssm_state_size", 16),
         ("add_ssm_inner_size", 8192)],
    )  # fmt: skip
    a = read_gguf_header(path).architecture
    assert [layer.kind for layer in a.layers].index(LayerKind.FULL) == 4
    assert len(a.layers_of(LayerKind.RECURRENT)) == 7
    assert a.layers[0].recurrent_state_elements == 16 * 8192


def test_not_a_gguf_file(tmp_path):
    path = tmp_path / "model.safetensors"
    path.write_bytes(b'{"__metadata__": {}}' + b"\0" * 64)
    with pytest.raises(ServewiseInputError, match="not a GGUF file"):
        read_gguf_header(path)


def test_truncated_gguf(tmp_path):
    good = write_gguf(
        tmp_path / "ok.gguf", "llama", [("add_block_count", 1), ("add_head_count", 4), ("add_embedding_length", 64)]
    )
    cut = tmp_path / "cut.gguf"
    cut.write_bytes(good.read_bytes()[:40])
    with pytest.raises(ServewiseInputError, match="header cannot be read"):
        read_gguf_header(cut)


def test_missing_file_and_missing_key(tmp_path):
    with pytest.raises(ServewiseInputError, match="cannot read"):
        read_gguf_header(tmp_path / "absent.gguf")
    path = write_gguf(tmp_path / "nolayers.gguf", "llama", [("add_head_count", 4), ("add_embedding_length", 64)])
    with pytest.raises(ServewiseInputError, match="llama.block_count"):
        read_gguf_header(path)


def test_header_bytes_follow_the_ggml_block_rule(tmp_path):
    # (moved from the second GGUF reader, weights_from_gguf_file, now deleted) 64 x 256 q8_0 values are 512
    # blocks of 34 bytes, plus 256 F32 = 1,024 bytes
    weights = np.random.default_rng(0).standard_normal((64, 256)).astype(np.float32)
    path = write_gguf(
        tmp_path / "tiny.gguf",
        "llama",
        [("add_block_count", 1), ("add_head_count", 2), ("add_head_count_kv", 2), ("add_embedding_length", 256),
         ("add_context_length", 4096)],
        [("blk.0.ffn_up.weight", quantize(weights, GGMLQuantizationType.Q8_0), GGMLQuantizationType.Q8_0),
         ("output_norm.weight", np.ones(256, dtype=np.float32), None)],
    )  # fmt: skip
    header = read_gguf_header(path)
    assert header.weights_bytes == 512 * 34 + 1024 == 18_432
    assert header.weights_bytes == ggml_tensor_bytes("q8_0", 64 * 256) + ggml_tensor_bytes("f32", 256)
    assert header.architecture.params_total == 64 * 256 + 256


def test_chat_template_and_pooling_type_are_read(tmp_path, monkeypatch):
    import gguf

    from calculators.model.gguf import read_gguf_header
    from knowledge.tool_calling import TEMPLATES_DIR
    from tests.support import tiny_gguf

    template = (TEMPLATES_DIR / "Qwen-Qwen3-0.6B.jinja").read_text(encoding="utf-8")
    finish = tiny_gguf._finish

    def with_keys(writer):
        writer.add_chat_template(template)
        writer.add_pooling_type(gguf.PoolingType.LAST)
        finish(writer)

    monkeypatch.setattr(tiny_gguf, "_finish", with_keys)
    spec = tiny_gguf.TinyAttentionModel(name="t", arch="llama", n_layer=2, n_head=2, n_head_kv=1, head_dim=16,
                                        n_ctx_train=256)
    header = read_gguf_header(spec.write(tmp_path / "t.gguf"))
    assert header.chat_template == template
    assert header.pooling_type == "last_token"
