"""plan_ollama pinned to figures in Ollama's source and its own tests, ollama/ollama@fb307609 (v0.33.0-rc2).

Each test names the file (and line) the figure was read from.
"""

from __future__ import annotations

import dataclasses

import pytest

from calculators.engines.llama_cpp.plan import FlashAttn
from calculators.engines.ollama.plan import (
    OllamaSettings,
    automatic_generation_batch,
    default_context_tokens,
    ollama_predicted_vram_bytes,
    plan_ollama,
)
from calculators.errors import ServewiseInputError
from calculators.hardware.machine import Machine
from calculators.model.architecture import LayerGeometry, LayerKind, ModelArchitecture
from calculators.units import GIB, MIB
from tests.support.models import LLAMA31_8B


@pytest.mark.parametrize(
    ("device_gib", "n_devices", "overhead_gib", "expected"),
    [
        (24, 1, 0, 32768),  # an RTX 4090 reaches the 23 GiB tier
        (48, 1, 0, 262144),
        (47, 1, 0, 262144),  # thresholds are 47 / 23 GiB "to account for small differences"
        (16, 1, 0, 4096),
        (12, 2, 0, 32768),  # VRAM of every GPU is summed
        (24, 2, 0, 262144),
        (24, 1, 2, 4096),  # OLLAMA_GPU_OVERHEAD is taken off each GPU first: 22 GiB < 23 GiB
    ],
)
def test_default_context_follows_total_vram_tiers(device_gib, n_devices, overhead_gib, expected):
    # server/routes.go:2043-2057
    machine = Machine(device_memory_bytes=device_gib * GIB, n_devices=n_devices)
    assert default_context_tokens(machine, overhead_gib * GIB) == expected


def test_no_gpu_gets_the_smallest_default_context():
    assert default_context_tokens(None) == 4096


@pytest.mark.parametrize(
    ("context_length", "num_ctx", "expected"),
    [
        (0, None, 32768),  # "vram default when nothing else set"
        (8192, None, 8192),  # "env var overrides vram default"
        (8192, 4096, 4096),  # "request overrides everything"
        (0, 4096, 4096),  # "request overrides vram default"
    ],
)
def test_num_ctx_priority(context_length, num_ctx, expected):
    # server/routes_options_test.go TestModelOptionsNumCtxPriority (24 GiB -> 32768 default)
    settings = OllamaSettings(context_length=context_length, num_ctx=num_ctx)
    plan = plan_ollama(LLAMA31_8B, settings, Machine(device_memory_bytes=24 * GIB))
    assert plan.per_request_context == expected


def test_llama_server_gets_num_ctx_times_num_parallel_and_no_unified_kv():
    # llm/llama_server.go:375-376: "-c" num_ctx * numParallel, "-np" numParallel; no --kv-unified
    settings = OllamaSettings(num_parallel=4)
    plan = plan_ollama(LLAMA31_8B, settings, Machine(device_memory_bytes=24 * GIB), weights_bytes=4_920_734_272)
    assert plan.llama_server_args[:4] == ["-c", "131072", "-np", "4"]
    assert (plan.effective_ctx_size, plan.effective_parallel, plan.per_request_context) == (131072, 4, 32768)
    # so every slot holds the full num_ctx in its own stream
    assert (plan.kv_unified, plan.n_ctx, plan.n_ctx_seq, plan.n_stream) == (False, 131072, 32768, 4)
    assert plan.kv_cache_bytes == 16 * GIB


def test_num_ctx_is_capped_at_the_trained_context():
    # llm/server.go:111-115 "requested context size too large for model"
    arch = dataclasses.replace(LLAMA31_8B, max_context_tokens=8192)
    plan = plan_ollama(arch, OllamaSettings(num_ctx=32768, num_parallel=2), Machine(device_memory_bytes=24 * GIB))
    assert (plan.per_request_context, plan.effective_ctx_size) == (8192, 16384)


def test_parallel_is_one_for_embeddings_and_listed_families():
    # envconfig/config.go:275 default 1; server/sched.go:497-509
    assert plan_ollama(LLAMA31_8B, OllamaSettings(num_parallel=0)).effective_parallel == 1
    embedding = dataclasses.replace(LLAMA31_8B, is_embedding_model=True)
    assert plan_ollama(embedding, OllamaSettings(num_parallel=4)).effective_parallel == 1
    qwen3next = dataclasses.replace(LLAMA31_8B, family="qwen3next")
    assert plan_ollama(qwen3next, OllamaSettings(num_parallel=4)).effective_parallel == 1


def test_kv_cache_type_and_flash_attention_pass_through():
    # llm/llama_server.go:394-398 (one type for K and V) and :597-621 (on/off when set, else auto)
    plan = plan_ollama(LLAMA31_8B, OllamaSettings(kv_cache_type="Q8_0", flash_attention=True, num_ctx=8192))
    assert plan.llama_server_args[4:10] == ["--cache-type-k", "q8_0", "--cache-type-v", "q8_0", "--flash-attn", "on"]
    assert (plan.caches[0].type_k, plan.caches[0].type_v, plan.refusal) == ("q8_0", "q8_0", None)
    default = plan_ollama(LLAMA31_8B, OllamaSettings(num_ctx=8192))
    assert "--cache-type-k" not in default.llama_server_args
    assert default.flash_attn is FlashAttn.AUTO


def test_quantized_cache_without_flash_attention_fails_in_llama_server():
    # Ollama does not check the pair (llm/llama_server.go:394-400); llama-server then refuses it
    settings = OllamaSettings(kv_cache_type="q4_0", flash_attention_supported=False)
    plan = plan_ollama(LLAMA31_8B, settings, Machine(device_memory_bytes=8 * GIB))
    assert plan.flash_attn is FlashAttn.OFF
    assert plan.refusal == "quantized V cache requires flash_attn to be enabled"


def test_unknown_kv_cache_type_is_an_input_error():
    with pytest.raises(ServewiseInputError):
        plan_ollama(LLAMA31_8B, OllamaSettings(kv_cache_type="q3_k"))


@pytest.mark.parametrize(
    ("effective_ctx", "predicted", "available", "flash", "cuda_free", "expected"),
    [
        (4096, 0, 0, FlashAttn.AUTO, None, 512),  # "small context keeps default"
        (32768, 0, 0, FlashAttn.AUTO, None, 1024),  # "medium context uses 1024 with unknown memory"
        (131072, 8 * GIB, 14 * GIB, FlashAttn.AUTO, None, 2048),  # "large context uses 2048 with headroom"
        (131072, 9 * GIB, 14 * GIB, FlashAttn.AUTO, None, 1024),  # "... steps down to 1024 without 2048 headroom"
        (131072, 8 * GIB, 11 * GIB, FlashAttn.AUTO, None, 1024),  # "... steps down to 1024 for headroom"
        (32768, 8500 * MIB, 11 * GIB, FlashAttn.AUTO, None, 512),  # "medium context steps down to 512"
        (131072, 8 * GIB, 14 * GIB, FlashAttn.OFF, 14 * GIB, 512),  # "flash attention disabled suppresses promotion"
        (131072, 3 * GIB, 6 * GIB, FlashAttn.OFF, 6 * GIB, 256),  # "constrained CUDA without flash attention"
    ],
)
def test_automatic_generation_batch(effective_ctx, predicted, available, flash, cuda_free, expected):
    # server/sched_test.go TestAutomaticGenerationBatch, case by case
    assert automatic_generation_batch(effective_ctx, predicted, available, flash, cuda_free) == expected


def test_automatic_batch_reaches_llama_server_as_b_and_ub():
    # server/sched.go:535-541 then llm/llama_server.go:591: -b and -ub both get num_batch
    plan = plan_ollama(LLAMA31_8B, OllamaSettings(num_ctx=8192), Machine(device_memory_bytes=24 * GIB), 4 * GIB)
    assert plan.num_batch == 1024  # effective context 8192 > 4096, and memory allows it
    assert plan.llama_server_args[-4:] == ["-b", "1024", "-ub", "1024"]
    assert (plan.n_batch, plan.n_ubatch) == (1024, 1024)


def test_predicted_vram_is_file_size_plus_an_f16_guess_from_hidden_over_heads():
    # llm/llama_server.go:2681-2700: weights + 2 x layers x min KV heads x (hidden / heads) x ctx x 2
    assert ollama_predicted_vram_bytes(LLAMA31_8B, 4 * GIB, 8192) == 4 * GIB + GIB
    # Gemma-3-27B: head size 128 but hidden / heads = 5376 / 32 = 168, and sliding layers counted in full
    layer = LayerGeometry(kind=LayerKind.FULL, n_kv_heads=16, head_dim_k=128, head_dim_v=128)
    gemma = ModelArchitecture("gemma3-27b", "gemma3", (layer,) * 62, 32, 5376, 262208, 131072)
    assert ollama_predicted_vram_bytes(gemma, 0, 4096) == 2 * 62 * 16 * 168 * 4096 * 2
    # a hybrid's recurrent layers have no KV heads, so the minimum is 0 and Ollama falls back to 1
    hybrid = dataclasses.replace(gemma, layers=(layer, LayerGeometry(kind=LayerKind.RECURRENT)) * 31)
    assert ollama_predicted_vram_bytes(hybrid, 0, 4096) == 2 * 62 * 1 * 168 * 4096 * 2


def test_preflight_uses_eighty_percent_of_free_memory():
    # server/sched.go:545-550: evict first when predicted > 80 % of free memory and other models are loaded
    machine = Machine(device_memory_bytes=24 * GIB)
    settings = OllamaSettings(num_ctx=32768, num_parallel=4, models_already_loaded=True)
    plan = plan_ollama(LLAMA31_8B, settings, machine, weights_bytes=4_920_734_272)
    assert plan.predicted_vram_bytes == 4_920_734_272 + 16 * GIB
    assert plan.predicted_for_load_bytes == plan.predicted_vram_bytes  # batch 512: no surcharge (sched.go:906-915)
    assert (plan.fits_preflight, plan.evicts_before_load) == (False, True)
    small = plan_ollama(LLAMA31_8B, settings.model_copy(update={"num_parallel": 1}), machine, 4_920_734_272)
    assert (small.fits_preflight, small.evicts_before_load) == (True, False)


def test_model_prefers_one_gpu_when_it_fits_there():
    # server/sched.go:1060-1075 bestSingleGPUFit: predicted within 80 % of one GPU
    machine = Machine(device_memory_bytes=24 * GIB, n_devices=2)
    plan = plan_ollama(LLAMA31_8B, OllamaSettings(num_ctx=8192), machine, weights_bytes=4 * GIB)
    assert plan.single_gpu
    assert [d.device for d in plan.devices] == ["gpu0", "host"]
    spread = plan_ollama(LLAMA31_8B, OllamaSettings(num_ctx=131072), machine, weights_bytes=4 * GIB)
    assert not spread.single_gpu
    assert [d.device for d in spread.devices] == ["gpu0", "gpu1", "host"]


def test_loaded_models_default_and_gpu_reserve():
    # server/sched.go:86 and :283-289 (3 per GPU); ml/device.go:359-364 (457 MiB, Metal 512 MiB)
    machine = Machine(device_memory_bytes=24 * GIB, n_devices=2)
    plan = plan_ollama(LLAMA31_8B, OllamaSettings(num_ctx=4096, gpu_overhead=GIB), machine)
    assert plan.max_loaded_models_effective == 6
    assert plan.gpu_available_bytes == 24 * GIB - GIB - 457 * MIB
    assert plan_ollama(LLAMA31_8B, OllamaSettings(num_ctx=4096)).max_loaded_models_effective == 3


def test_automatic_context_is_retried_smaller_after_a_failed_load():
    # server/sched.go:917-925 nextLowerAutoNumCtx: 262144 -> 32768 -> 4096, for an automatic num_ctx only
    big = Machine(device_memory_bytes=48 * GIB)
    auto = plan_ollama(LLAMA31_8B, OllamaSettings(), big)
    assert auto.per_request_context == 131072  # 262144 capped at the trained context
    assert any(note.code == "ollama_auto_ctx_retry" for note in auto.notes)
    chosen = plan_ollama(LLAMA31_8B, OllamaSettings(num_ctx=65536), big)
    assert not any(note.code == "ollama_auto_ctx_retry" for note in chosen.notes)
