"""plan_llamacpp rules that the CPU-only conformance test cannot reach: llama-server defaults, --fit's
context resolution, the -ngl layer split, MLA, refusals and bad input.

Each expectation cites the line of ggml-org/llama.cpp@0c1e57098 it comes from.
"""

from __future__ import annotations

import dataclasses

import pytest

from calculators.engines.llama_cpp.plan import (
    FlashAttn,
    LlamaCppSettings,
    ggml_row_bytes,
    llamacpp_log_mib,
    plan_llamacpp,
)
from calculators.errors import ServewiseInputError
from calculators.hardware.machine import Machine
from calculators.units import GIB
from tests.support.models import DEEPSEEK_V2_LITE, GEMMA3_27B, LLAMA3_8B


def test_server_defaults_give_four_slots_sharing_the_trained_context():
    # tools/server/server.cpp:156-160: -np auto -> 4 slots and a unified KV; -c 0 -> trained context
    plan = plan_llamacpp(LLAMA3_8B)
    assert (plan.n_seq, plan.kv_unified, plan.n_stream) == (4, True, 1)
    assert (plan.n_ctx, plan.n_ctx_seq, plan.n_ctx_slot) == (8192, 8192, 8192)
    (kv,) = plan.caches
    # the product brief's worked example: 128 KiB per token, 8192 tokens -> exactly 1 GiB
    assert plan.kv_bytes_per_token == 131072
    assert kv.total_bytes == GIB == plan.kv_cache_bytes
    assert (kv.cells, kv.layers, kv.seqs) == (8192, 32, 4)
    assert f"{llamacpp_log_mib(kv.total_bytes):.2f}" == "1024.00"


def test_fit_gives_every_split_stream_the_trained_context():
    # common/fit.cpp:265-279: with -c unset and --fit on, n_ctx = n_ctx_train x streams
    plan = plan_llamacpp(LLAMA3_8B, LlamaCppSettings(parallel=4))
    assert (plan.n_ctx, plan.n_ctx_seq, plan.kv_unified) == (32768, 8192, False)
    assert plan.kv_cache_bytes == 4 * GIB
    # without --fit llama_context shares the trained context among the streams (llama-context.cpp:133, 295)
    plan = plan_llamacpp(LLAMA3_8B, LlamaCppSettings(parallel=4, fit=False))
    assert (plan.n_ctx, plan.n_ctx_seq) == (8192, 2048)


def test_context_is_padded_then_split_per_stream():
    # src/llama-context.cpp:290-306: pad(10000) = 10240; 10240 / 3 = 3413 -> pad 3584; n_ctx = 3 x 3584
    plan = plan_llamacpp(LLAMA3_8B, LlamaCppSettings(ctx_size=10000, parallel=3))
    assert (plan.n_ctx, plan.n_ctx_seq, plan.n_seq) == (10752, 3584, 3)
    assert plan.caches[0].cells == 3584
    assert plan.kv_cache_bytes == 10752 * 131072


def test_slot_context_is_capped_by_trained_context_and_per_slot_limit():
    # tools/server/server-context.cpp:4008-4015 n_ctx_slot
    plan = plan_llamacpp(LLAMA3_8B, LlamaCppSettings(ctx_size=20000, parallel=1))
    assert (plan.n_ctx_seq, plan.n_ctx_slot) == (20224, 8192)
    # tools/server/server.cpp:166-171: --kv-unified-per-slot sizes an unset -c as slots x N
    plan = plan_llamacpp(LLAMA3_8B, LlamaCppSettings(kv_unified_per_slot=2048))
    assert (plan.n_ctx, plan.kv_unified) == (4 * 2048, True)


def test_sliding_window_cache_is_window_plus_ubatch_padded():
    # src/llama-kv-cache-iswa.cpp:71-81: min(size, pad(n_swa x (n_seq if unified else 1) + n_ubatch, 256))
    arch = GEMMA3_27B
    plan = plan_llamacpp(arch, LlamaCppSettings(ctx_size=32768, parallel=1))
    base, swa = plan.caches
    assert (base.name, base.layers, base.cells) == ("kv", 10, 32768)
    assert (swa.name, swa.layers, swa.cells) == ("kv_swa", 52, 1536)
    assert swa.k_bytes == 52 * 1536 * 16 * 128 * 2
    unified = plan_llamacpp(arch, LlamaCppSettings(ctx_size=32768, parallel=4, kv_unified=True))
    assert unified.caches[1].cells == 4608  # 1024 x 4 + 512
    full = plan_llamacpp(arch, LlamaCppSettings(ctx_size=32768, parallel=1, swa_full=True))
    assert full.caches[1].cells == 32768


def test_mla_caches_the_latent_only():
    # src/llama-kv-cache.cpp:229-234: MLA keeps one K row (latent + rope key) and no V
    plan = plan_llamacpp(DEEPSEEK_V2_LITE, LlamaCppSettings(ctx_size=4096, parallel=1))
    (kv,) = plan.caches
    assert (kv.k_bytes, kv.v_bytes) == (27 * 4096 * 576 * 2, 0)
    assert plan.kv_bytes_per_token == 27 * 576 * 2


def test_refusals_are_worded_as_llamacpp_logs_them():
    # src/llama-context.cpp:3835-3870 (llama_init_from_model returns NULL after these errors)
    quantized_v = plan_llamacpp(LLAMA3_8B, LlamaCppSettings(cache_type_v="q8_0", flash_attn=FlashAttn.OFF))
    assert quantized_v.refusal == "quantized V cache requires flash_attn to be enabled"
    mla = plan_llamacpp(DEEPSEEK_V2_LITE, LlamaCppSettings(ctx_size=4096, cache_type_k="q8_0"))
    assert mla.refusal == "model does not support different K (q8_0) and V (f16) cache types"
    ok = plan_llamacpp(LLAMA3_8B, LlamaCppSettings(cache_type_k="q4_0", cache_type_v="q4_0"))
    assert ok.refusal is None
    assert ok.flash_attn is FlashAttn.ON  # auto is forced on by a quantized V cache (:3840-3849)


def test_ngl_puts_the_last_layers_on_the_gpu():
    # src/llama-model.cpp:1589-1611: layers from n_layer + 1 - ngl on go to the GPU, output layer last
    plan = plan_llamacpp(LLAMA3_8B, LlamaCppSettings(n_gpu_layers=20), Machine(device_memory_bytes=8 * GIB), 4 * GIB)
    gpu, host = plan.devices
    assert (gpu.repeating_layers, gpu.holds_output_layer, host.repeating_layers) == (19, True, 13)
    per_layer_kv = 8192 * 8 * 128 * 2 * 2
    assert (gpu.kv_cache_bytes, host.kv_cache_bytes) == (19 * per_layer_kv, 13 * per_layer_kv)
    assert gpu.weights_bytes == 4 * GIB * 19 // 32


def test_ngl_splits_offloaded_layers_evenly_over_identical_gpus():
    plan = plan_llamacpp(
        LLAMA3_8B, LlamaCppSettings(n_gpu_layers=99), Machine(device_memory_bytes=24 * GIB, n_devices=2)
    )
    gpu0, gpu1, host = plan.devices
    # layer il goes to the first device whose cumulative share exceeds il / 33
    assert (gpu0.repeating_layers, gpu1.repeating_layers, host.repeating_layers) == (17, 15, 0)
    assert gpu1.holds_output_layer
    assert plan.n_gpu_layers == 33


def test_no_kv_offload_and_ngl_zero_keep_caches_on_the_host():
    machine = Machine(device_memory_bytes=24 * GIB)
    for settings in (LlamaCppSettings(no_kv_offload=True), LlamaCppSettings(n_gpu_layers=0)):
        gpu, host = plan_llamacpp(LLAMA3_8B, settings, machine).devices
        assert (gpu.kv_cache_bytes, host.kv_cache_bytes) == (0, GIB)


def test_fit_lowers_an_unset_context_to_keep_a_gibibyte_free():
    # common/fit.cpp:384-437: interpolate between 4096 tokens per stream and the trained context so that
    # weights + caches use all but 1 GiB (common/common.h:480-483), aligned down to 256 x streams.
    settings = LlamaCppSettings(parallel=4)
    plan = plan_llamacpp(LLAMA3_8B, settings, Machine(device_memory_bytes=8 * GIB), 4 * GIB)
    # at 32768 tokens: 4 + 4 GiB; at 16384: 4 + 2 GiB; target 7 GiB -> 16384 + 16384 x (7 - 6) / (8 - 6)
    assert (plan.n_ctx, plan.n_ctx_seq) == (24576, 6144)
    assert plan.kv_cache_bytes == 3 * GIB
    assert plan.notes[0].code == "llamacpp_fit_context"
    roomy = plan_llamacpp(LLAMA3_8B, settings, Machine(device_memory_bytes=80 * GIB), 4 * GIB)
    assert roomy.n_ctx == 32768
    assert not any(note.code.startswith("llamacpp_fit") for note in roomy.notes)


def test_fit_then_offloads_fewer_layers():
    plan = plan_llamacpp(LLAMA3_8B, LlamaCppSettings(parallel=4), Machine(device_memory_bytes=6 * GIB), 6 * GIB)
    assert plan.n_ctx == 4 * 4096  # the context stops at 4096 per stream
    # each block then costs 6 GiB / 32 of weights + 64 MiB of KV = 256 MiB; 5 GiB holds 20 blocks (+ output)
    assert (plan.n_gpu_layers, plan.devices[0].repeating_layers) == (21, 20)
    assert [n.code for n in plan.notes[:2]] == ["llamacpp_fit_context", "llamacpp_fit_layers"]


def test_fit_keeps_what_the_user_set():
    machine = Machine(device_memory_bytes=6 * GIB)
    # a context given with -c is never lowered (common/fit.cpp:454-456), nor a given -ngl (:463-465)
    plan = plan_llamacpp(LLAMA3_8B, LlamaCppSettings(ctx_size=8192, n_gpu_layers=99), machine, 6 * GIB)
    assert (plan.n_ctx, plan.n_gpu_layers) == (8192, 33)
    assert "cannot help" in next(n.message for n in plan.notes if n.code == "llamacpp_fit_would_reduce")
    without_fit = plan_llamacpp(LLAMA3_8B, LlamaCppSettings(parallel=4, fit=False), machine, 6 * GIB)
    assert (without_fit.n_ctx, without_fit.n_gpu_layers) == (8192, 33)


def test_embedding_models_get_no_kv_cache():
    arch = dataclasses.replace(LLAMA3_8B, is_embedding_model=True)
    plan = plan_llamacpp(arch, LlamaCppSettings(ctx_size=512))
    assert (plan.caches, plan.kv_cache_bytes) == ([], 0)


def test_row_bytes_follow_ggml_block_sizes():
    # ggml: q8_0 = 34 bytes per 32 values, q4_0 = 18, q4_1 = 20, q5_0 = 22, q5_1 = 24, iq4_nl = 18
    sizes = {
        t: ggml_row_bytes(t, 1024) for t in ("f32", "f16", "bf16", "q8_0", "q4_0", "q4_1", "q5_0", "q5_1", "iq4_nl")
    }
    assert sizes == {
        "f32": 4096, "f16": 2048, "bf16": 2048, "q8_0": 1088, "q4_0": 576,
        "q4_1": 640, "q5_0": 704, "q5_1": 768, "iq4_nl": 576,
    }  # fmt: skip


@pytest.mark.parametrize(
    "settings",
    [
        {"cache_type_k": "q8"},
        {"cache_type_v": "fp8"},
        {"parallel": 0},
        {"parallel": 300},
    ],
)
def test_bad_settings_are_input_errors(settings):
    with pytest.raises(ServewiseInputError):
        plan_llamacpp(LLAMA3_8B, LlamaCppSettings(**settings))


def test_trained_context_needed_for_ctx_zero():
    arch = dataclasses.replace(LLAMA3_8B, max_context_tokens=None)
    with pytest.raises(ServewiseInputError, match="trained context"):
        plan_llamacpp(arch, LlamaCppSettings(ctx_size=0))
