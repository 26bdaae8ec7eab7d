"""Weight bytes: ggml block sizes, group-scheme bits per weight, 16-bit leftovers, file mixes and TP split."""

import pytest

from calculators.errors import ServewiseInputError
from calculators.model.architecture import LayerGeometry, LayerKind, ModelArchitecture, MoEGeometry
from calculators.model.ggml_types import ggml_block, ggml_tensor_bytes
from calculators.model.weights import (
    embedding_params,
    estimate_weights,
    moe_expert_params,
    scheme_bits_per_weight,
    weights_from_file_bytes,
    weights_from_safetensors_header,
)
from calculators.units import GIB
from knowledge.loader import load_knowledge

FORMATS = load_knowledge().formats
# meta-llama/Llama-3.1-8B: 8,030,261,248 parameters (the count its model card and config imply:
# 32 layers, hidden 4096, intermediate 14336, 8 KV heads, vocab 128256, untied embeddings).
LLAMA_31_8B_PARAMS = 8_030_261_248
LLAMA_31_8B_EMBED_AND_HEAD = 2 * 128_256 * 4096


@pytest.mark.parametrize(
    ("type_name", "values", "block_bytes"),
    [
        # issue 3's table of ggml block sizes, as ggml stores them
        ("q8_0", 32, 34),
        ("q4_0", 32, 18),
        ("q4_1", 32, 20),
        ("q5_0", 32, 22),
        ("q5_1", 32, 24),
        ("iq4_nl", 32, 18),
        ("q4_K", 256, 144),  # 4.5 bits per weight
        ("Q6_K", 256, 210),
        ("f16", 1, 2),
        ("bf16", 1, 2),
        ("f32", 1, 4),
    ],
)
def test_ggml_block_sizes(type_name, values, block_bytes):
    assert ggml_tensor_bytes(type_name, values) == block_bytes
    assert ggml_tensor_bytes(type_name, 4 * values) == 4 * block_bytes


def test_q8_0_is_8_5_bits_not_8():
    assert float(ggml_block("q8_0").bits_per_weight) == 8.5
    assert float(ggml_block("q4_k").bits_per_weight) == 4.5


def test_ggml_partial_block_is_refused():
    with pytest.raises(ServewiseInputError, match="blocks of 32"):
        ggml_tensor_bytes("q8_0", 33)


def test_unknown_ggml_type_is_a_user_error():
    with pytest.raises(ServewiseInputError, match="unknown ggml type 'q9_9'"):
        ggml_block("q9_9")


@pytest.mark.parametrize(
    ("quant_id", "bits"),
    [
        ("awq-w4-g128", 4 + (16 + 4) / 128),  # 4.15625: 16-bit scale + 4-bit zero per 128 weights
        ("gptq-w4-g128", 4.15625),
        ("gptq-w8-g128", 8 + (16 + 8) / 128),
        ("fp8-e4m3-block128", 8 + 32 / (128 * 128)),  # one FP32 scale per 128x128 tile
        ("fp8-e4m3-tensor", 8.0),
        ("bnb-nf4", 4 + 32 / 64),  # FP32 absmax per 64: QLoRA's 0.5 bit
        ("bnb-nf4-double", 4 + (8 + 32 / 256) / 64),  # QLoRA's 0.127 bit per parameter
        ("mlx-affine-4", 4 + (16 + 16) / 64),  # 16-bit scale + 16-bit bias per 64
        ("mlx-affine-8", 8.5),
        ("mxfp4", 4 + 8 / 32),  # E8M0 scale per 32 E2M1 values
        ("mlx-mxfp4", 4.25),
        ("nvfp4", 4 + 8 / 16),  # E4M3 scale per 16
        ("mlx-mxfp8", 8 + 8 / 32),
        ("q4_k", 4.5),  # 144 bytes / 256 values, from GGML_QUANT_SIZES
        ("bf16", 16.0),
    ],
)
def test_scheme_bits_per_weight(quant_id, bits):
    assert float(scheme_bits_per_weight(FORMATS.quantization(quant_id))) == pytest.approx(bits, abs=1e-12)


def test_container_without_a_bit_width_has_none():
    assert scheme_bits_per_weight(FORMATS.quantization("compressed-tensors")) is None
    with pytest.raises(ServewiseInputError, match="does not fix a bit width"):
        estimate_weights(FORMATS, 1_000_000, "compressed-tensors")


def test_bf16_8_03b_is_16_06_gb():
    estimate = estimate_weights(FORMATS, 8_030_000_000, "bf16")
    assert estimate.bytes == 16_060_000_000
    assert estimate.exact is False
    assert estimate.bits_per_weight == 16.0


@pytest.mark.parametrize(
    ("mix_id", "readme_gib"),
    [
        # llama.cpp tools/quantize/README.md (commit 311c2c9f), Llama-3.1-8B table: size (GiB) column.
        ("q4_k_m", 4.58),
        ("q8_0_file", 7.95),
        ("f16_file", 14.96),
        ("q6_k_file", 6.14),
        ("q5_k_m", 5.33),
    ],
)
def test_file_mix_reproduces_llama_cpp_readme_sizes(mix_id, readme_gib):
    estimate = estimate_weights(FORMATS, LLAMA_31_8B_PARAMS, mix_id)
    assert estimate.bytes / GIB == pytest.approx(readme_gib, abs=0.005)
    assert any("measured on meta-llama/Llama-3.1-8B" in note for note in estimate.approximations)


def test_awq_keeps_embeddings_and_head_in_16_bit():
    estimate = estimate_weights(
        FORMATS, LLAMA_31_8B_PARAMS, "awq-w4-g128", high_precision_params=LLAMA_31_8B_EMBED_AND_HEAD
    )
    quantized = LLAMA_31_8B_PARAMS - LLAMA_31_8B_EMBED_AND_HEAD  # 6,979,588,096
    # by hand: 6,979,588,096 / 8 = 872,448,512; x 4.15625 = 3,626,114,128; 1,050,673,152 x 2 = 2,101,346,304
    assert [p.bytes for p in estimate.parts] == [3_626_114_128, 2_101_346_304]
    assert quantized * 4.15625 / 8 == 3_626_114_128
    assert estimate.bytes == 5_727_460_432
    assert estimate.bits_per_weight == pytest.approx(5.7059, abs=1e-4)


def test_awq_without_embedding_count_says_it_approximates():
    estimate = estimate_weights(FORMATS, LLAMA_31_8B_PARAMS, "awq-w4-g128")
    assert estimate.bytes == pytest.approx(LLAMA_31_8B_PARAMS * 4.15625 / 8, abs=1)
    assert any("embeddings and lm_head counted at the quantized width" in a for a in estimate.approximations)


def test_mxfp4_needs_expert_count_and_keeps_the_rest_16_bit():
    with pytest.raises(ServewiseInputError, match="only the routed experts"):
        estimate_weights(FORMATS, 20_000_000_000, "mxfp4")
    estimate = estimate_weights(FORMATS, 20_000_000_000, "mxfp4", expert_params=18_000_000_000)
    # 18e9 x 4.25 / 8 + 2e9 x 2 bytes
    assert estimate.bytes == 9_562_500_000 + 4_000_000_000


def test_gpt_oss_20b_expert_count_from_geometry():
    # openai/gpt-oss-20b config.json: 24 layers, hidden 2880, 32 experts of intermediate 2880, vocab 201088.
    layer = LayerGeometry(kind=LayerKind.FULL, n_kv_heads=8, head_dim_k=64, head_dim_v=64)
    arch = ModelArchitecture(
        name="gpt-oss-20b",
        family="gpt_oss",
        layers=(layer,) * 24,
        n_heads=64,
        hidden_size=2880,
        vocab_size=201_088,
        max_context_tokens=131_072,
        moe=MoEGeometry(n_experts=32, n_active=4, expert_intermediate_size=2880),
    )
    assert moe_expert_params(arch) == 24 * 32 * 3 * 2880 * 2880 == 19_110_297_600
    assert embedding_params(arch, tied_embeddings=False) == 2 * 201_088 * 2880


def test_expert_count_refused_for_dense_model():
    layer = LayerGeometry(kind=LayerKind.FULL, n_kv_heads=8, head_dim_k=128, head_dim_v=128)
    dense = ModelArchitecture("dense", "llama", (layer,) * 2, 32, 4096, 128_256, 8192)
    with pytest.raises(ServewiseInputError, match="not a mixture-of-experts"):
        moe_expert_params(dense)


def test_unknown_scheme_lists_known_ones():
    with pytest.raises(ServewiseInputError, match="unknown quantization 'int3'.*q4_k_m"):
        estimate_weights(FORMATS, 1_000, "int3")


@pytest.mark.parametrize("bad", [0, -5])
def test_bad_parameter_count(bad):
    with pytest.raises(ServewiseInputError):
        estimate_weights(FORMATS, bad, "bf16")


def test_high_precision_share_larger_than_model_is_refused():
    with pytest.raises(ServewiseInputError, match="between 0 and"):
        estimate_weights(FORMATS, 1_000, "awq-w4-g128", high_precision_params=2_000)


def test_file_size_is_exact():
    estimate = weights_from_file_bytes(4_920_734_016, source="example.gguf (an input, not a published figure)")
    assert estimate.exact is True and estimate.bytes == 4_920_734_016
    with pytest.raises(ServewiseInputError):
        weights_from_file_bytes(0)


def test_gguf_tensor_list_is_exact():
    # two q4_K tensors of 4096x4096 and an F32 norm of 4096: 2 x 16,777,216/256 x 144 + 4096 x 4
    tensors = [("q4_K", 4096 * 4096), ("Q4_K", 4096 * 4096), ("F32", 4096)]
    assert sum(ggml_tensor_bytes(t, n) for t, n in tensors) == 2 * 65_536 * 144 + 16_384 == 18_890_752


def _write_safetensors(path, header: dict, data_len: int) -> None:
    import json
    import struct

    blob = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(blob)) + blob + b"\0" * data_len)


def test_safetensors_header_gives_exact_bytes(tmp_path):
    path = tmp_path / "model.safetensors"
    header = {
        "__metadata__": {"format": "pt"},
        "w": {"dtype": "BF16", "shape": [4096, 4096], "data_offsets": [0, 33_554_432]},
        "qweight": {"dtype": "I32", "shape": [512, 4096], "data_offsets": [33_554_432, 41_943_040]},
    }
    _write_safetensors(path, header, data_len=16)  # the data section's length is not read
    estimate = weights_from_safetensors_header(path)
    assert estimate.bytes == 41_943_040 and estimate.exact is True


def test_bad_safetensors_is_a_one_line_error(tmp_path):
    path = tmp_path / "model.safetensors"
    path.write_bytes(b"\x05\x00\x00\x00\x00\x00\x00\x00{oops")
    with pytest.raises(ServewiseInputError, match="not a Safetensors file"):
        weights_from_safetensors_header(path)
    _write_safetensors(path, {"w": {"dtype": "F16", "shape": [2]}}, 4)
    with pytest.raises(ServewiseInputError, match="no valid data_offsets"):
        weights_from_safetensors_header(path)
