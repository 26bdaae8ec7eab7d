"""MLX LM plans: cache growth replayed from mlx_lm/models/cache.py, quantized and rotating caches, working set."""

from __future__ import annotations

from dataclasses import replace

import pytest

from calculators.engines.mlx_lm.cache import kv_cache_growth, quantized_bytes_per_vector, rotating_cache_growth
from calculators.engines.mlx_lm.generate import generation_chunks
from calculators.engines.mlx_lm.plan import MlxLmSettings, plan_mlx_lm
from calculators.errors import ServewiseInputError
from calculators.hardware.machine import Machine
from calculators.units import GIB
from tests.support.models import gqa, interleaved, mla

MAC_128 = Machine(device_memory_bytes=128 * GIB, unified_memory=True)
BRIEF_MODEL = gqa(32, 8, 128, 32, 131072, "brief example")  # 32 layers x 8 KV heads x 128 (128 KiB per token)


def test_generate_feeds_the_prompt_in_chunks_then_one_token_per_step():
    # generate.py: all prompt tokens but the last in prefill_step_size chunks, then single tokens
    assert generation_chunks(5000, 3, 2048) == [2048, 2048, 903, 1, 1, 1, 1]
    assert generation_chunks(1, 2, 2048) == [1, 1, 1]


def test_kv_cache_grows_in_256_token_steps():
    assert kv_cache_growth(generation_chunks(1000, 0, 2048)).final_tokens == 1024
    assert kv_cache_growth(generation_chunks(1000, 25, 2048)).final_tokens == 1280  # 1,025 tokens need a 5th step
    assert kv_cache_growth(generation_chunks(3000, 0, 2048)).final_tokens == 3072
    # a used length that is not a whole step is trimmed before the next chunk is appended (cache.py)
    assert kv_cache_growth([300, 300]).final_tokens == 300 + 512


def test_brief_worked_example_8192_tokens_is_exactly_one_gib():
    plan = plan_mlx_lm(BRIEF_MODEL, MlxLmSettings(), MAC_128, 4 * GIB, prompt_tokens=8192)
    assert plan.kv_bytes_per_token == 131072
    assert plan.allocated_tokens == 8192
    assert plan.kv_cache_bytes == GIB


def test_allocation_rounds_up_to_the_step():
    plan = plan_mlx_lm(BRIEF_MODEL, MlxLmSettings(), MAC_128, None, prompt_tokens=1000, generated_tokens=25,
                       n_sequences=3)
    assert plan.allocated_tokens == 1280 and plan.retained_tokens == 1025
    assert plan.kv_cache_bytes == 3 * 1280 * 131072


def test_quantized_vector_layout():
    # 4 bits, group 64, fp16 scales/biases: 128 values -> 16 uint32 words (64 B) + 2 x 2 x 2 B = 72 B
    assert quantized_bytes_per_vector(128, 4, 64, 2) == 72
    assert quantized_bytes_per_vector(128, 8, 64, 2) == 136
    # mx.quantize packs 128 x 5 bits into 20 words (not 128 // (32 // 5) = 21): live QuantizedKVCache nbytes
    assert quantized_bytes_per_vector(128, 5, 64, 2) == 20 * 4 + 8
    with pytest.raises(ServewiseInputError):
        quantized_bytes_per_vector(80, 4, 64, 2)


def test_kv_bits_quantizes_once_the_start_offset_is_reached():
    settings = MlxLmSettings(kv_bits=4)
    long = plan_mlx_lm(BRIEF_MODEL, settings, MAC_128, None, prompt_tokens=8192)
    assert long.quantized and long.kv_bytes_per_token == 32 * 8 * 72 * 2
    assert long.kv_cache_bytes == 8192 * 32 * 8 * 72 * 2
    short = plan_mlx_lm(BRIEF_MODEL, settings, MAC_128, None, prompt_tokens=2000)  # below quantized_kv_start 5000
    assert not short.quantized and short.kv_bytes_per_token == 131072
    assert any(n.code == "mlx_not_yet_quantized" for n in short.notes)


def test_rotating_cache_with_max_kv_size():
    # max_kv_size 512: the prompt's first 2,048-token chunk is kept whole before the first trim
    growth = rotating_cache_growth(generation_chunks(3000, 10, 2048), 512, 4)
    assert growth.final_tokens == 512 and growth.peak_tokens == 2048
    # short prompt, long answer: grows by min(256, max_size - offset) up to max_size
    assert rotating_cache_growth(generation_chunks(100, 10, 2048), 512, 4).final_tokens == 99 + 256
    assert rotating_cache_growth(generation_chunks(10, 1000, 2048), 512, 4).final_tokens == 512
    # mlx_lm/models/qwen3.py has no make_cache: make_prompt_cache gives every layer RotatingKVCache(512, keep=4)
    qwen3 = replace(BRIEF_MODEL, family="qwen3")
    plan = plan_mlx_lm(qwen3, MlxLmSettings(max_kv_size=512), MAC_128, None, prompt_tokens=3000, generated_tokens=10)
    assert plan.max_kv_size_behaviour == "rotating" and plan.rotating_keep_tokens == 4
    assert plan.allocated_tokens == 512 and plan.kv_cache_bytes == 512 * 131072
    # mlx_lm/models/llama.py defines make_cache, so make_prompt_cache never sees max_kv_size (live: 3 x KVCache)
    llama = plan_mlx_lm(BRIEF_MODEL, MlxLmSettings(max_kv_size=512), MAC_128, None, prompt_tokens=3000,
                        generated_tokens=10)
    assert llama.max_kv_size_behaviour == "ignored_by_model_cache" and llama.allocated_tokens == 3072


def test_models_with_their_own_caches_ignore_max_kv_size():
    gemma = interleaved("SSSSSF" * 2, 8, 128, 16, 1024, 131072)
    plan = plan_mlx_lm(gemma, MlxLmSettings(max_kv_size=512), MAC_128, None, prompt_tokens=8192)
    assert plan.max_kv_size_behaviour == "ignored_by_model_cache"
    caches = {c.name: c for c in plan.caches}
    assert caches["kv"].cells == 8192 and caches["kv"].layers == 2
    assert caches["kv_swa"].cells == 1024 and caches["kv_swa"].layers == 10  # RotatingKVCache(sliding_window)


def test_mla_stores_the_latent_and_the_rope_key():
    # mlx_lm deepseek_v3 caches kv_latent (512) as keys and k_pe (64) as values, one head each
    deepseek = mla(61, 512, 64, 128, 163840)
    plan = plan_mlx_lm(deepseek, MlxLmSettings(), MAC_128, None, prompt_tokens=4096)
    assert plan.kv_bytes_per_token == (512 + 64) * 2 * 61
    assert plan.caches[0].k_bytes == 512 * 2 * 61 * 4096 and plan.caches[0].v_bytes == 64 * 2 * 61 * 4096


def test_working_set_from_the_wired_limit():
    # antirez/ds4 PR #893: with iogpu.wired_limit_mb=114688 Metal reported recommendedMaxWorkingSetSize 112.00 GiB
    plan = plan_mlx_lm(BRIEF_MODEL, MlxLmSettings(), MAC_128, 60 * GIB, prompt_tokens=8192, wired_limit_mb=114688)
    assert plan.working_set_bytes == 112 * GIB
    free = [c for c in plan.components if c.label == "left in the GPU working set"]
    assert free[0].bytes == 112 * GIB - 61 * GIB
    unknown = plan_mlx_lm(BRIEF_MODEL, MlxLmSettings(), MAC_128, 60 * GIB, prompt_tokens=8192)
    assert unknown.working_set_bytes is None
    assert any(n.code == "mlx_working_set_unknown" for n in unknown.notes)


def test_over_the_working_set_is_flagged():
    plan = plan_mlx_lm(BRIEF_MODEL, MlxLmSettings(), MAC_128, 100 * GIB, prompt_tokens=131072,
                       working_set_bytes=int(107.52 * GIB))
    assert any(n.code == "mlx_over_working_set" for n in plan.notes)


def test_bad_input_is_a_domain_error():
    with pytest.raises(ServewiseInputError):
        plan_mlx_lm(BRIEF_MODEL, MlxLmSettings(kv_bits=7), MAC_128, None, prompt_tokens=10)
    with pytest.raises(ServewiseInputError):
        plan_mlx_lm(BRIEF_MODEL, MlxLmSettings(), MAC_128, None, prompt_tokens=0)


def test_without_a_workload_one_sequence_fills_the_trained_context():
    small = gqa(32, 8, 128, 32, 8192)
    plan = plan_mlx_lm(small, MlxLmSettings(), MAC_128, None)
    assert plan.retained_tokens == 8192 and plan.kv_cache_bytes == GIB


def test_a_sliding_layer_without_a_window_is_a_domain_error():
    gemma = interleaved("SF", 8, 128, 16, 1024, 131072)
    windowless = replace(gemma, layers=(replace(gemma.layers[0], sliding_window_tokens=None), gemma.layers[1]))
    with pytest.raises(ServewiseInputError, match="no window size"):
        plan_mlx_lm(windowless, MlxLmSettings(), MAC_128, None, prompt_tokens=4096)
