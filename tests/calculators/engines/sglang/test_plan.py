"""SGLang plans: pinned to figures SGLang printed in public logs, plus hand-checked cases (MLA, TP, pages, SWA)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from calculators.engines.sglang.plan import (
    SglangSettings,
    auto_chunk_and_graph_sizes,
    auto_mem_fraction_static,
    max_running_requests_for,
    plan_sglang,
)
from calculators.errors import ServewiseInputError
from calculators.hardware.machine import Machine
from calculators.units import GIB, MIB
from tests.support.models import gqa, interleaved, mla

# nvidia-smi totals (MiB), which SGLang reads for its automatic rules (shared/research/hardware.md table)
H100 = Machine(device_memory_bytes=81559 * MIB)
RTX_4090 = Machine(device_memory_bytes=24564 * MIB)
B200_X8 = Machine(device_memory_bytes=183359 * MIB, n_devices=8)

LLAMA_31_8B = gqa(32, 8, 128, 32, 131072, "Llama-3.1-8B-Instruct")


# --- public logs -------------------------------------------------------------------------------------


def test_k_and_v_sizes_from_sglang_pr_4760():
    # https://github.com/sgl-project/sglang/pull/4760 (Meta-Llama-3.1-8B-Instruct, one GPU):
    #   "KV Cache is allocated. #tokens: 442750, K size: 27.02 GB, V size: 27.02 GB"
    # Each layer's K buffer holds #tokens + page_size rows of 8 heads x 128 x 2 bytes.
    plan = plan_sglang(LLAMA_31_8B, SglangSettings(mem_fraction_static=0.88, max_total_tokens=442750), H100,
                       int(15.11 * GIB), free_before_load_bytes=int(78.59 * GIB))
    assert plan.max_total_num_tokens == 442750
    assert plan.k_bytes == plan.v_bytes == 442751 * 8 * 128 * 2 * 32
    assert f"{plan.k_bytes / GIB:.2f}" == "27.02" and f"{plan.v_bytes / GIB:.2f}" == "27.02"


def test_token_capacity_from_sglang_pr_4760():
    # Same log: "Load weight end ... avail mem=63.48 GB, mem usage=15.11 GB" (so 78.59 GB free before loading),
    # mem_fraction_static 0.88 (that release's default on one GPU), and #tokens: 442750.
    # rest = 63.48 - 78.59 x (1 - 0.88) = 54.05 GiB over 128 KiB per token; the inputs are printed to 0.01 GB,
    # so servewise must land within the tokens those roundings allow (~0.01 GiB = 82 tokens).
    counts = [
        plan_sglang(LLAMA_31_8B, SglangSettings(mem_fraction_static=0.88), H100, int(weights * GIB),
                    free_before_load_bytes=int(free * GIB)).max_total_num_tokens
        for free in (78.585, 78.595) for weights in (15.105, 15.115)
    ]
    assert min(counts) <= 442750 <= max(counts)
    assert max(counts) - min(counts) < 200


def test_automatic_fraction_and_chunk_on_h100_from_lmcache_issue_2400():
    # https://github.com/LMCache/LMCache/issues/2400: `python -m sglang.launch_server --model-path Qwen/Qwen3-14B`
    # on one GPU printed server_args with mem_fraction_static=0.835 and chunked_prefill_size=8192.
    # H100 80 GB = 81,559 MiB: reserved = 512 + 8192 x 1.5 + 256 x 2 + 1024/8 = 13,440 MiB -> 0.835.
    qwen3_14b = gqa(40, 8, 128, 40, 40960, "Qwen3-14B")
    plan = plan_sglang(qwen3_14b, SglangSettings(), H100, int(27.5 * GIB))
    assert plan.mem_fraction_static == 0.835 and plan.mem_fraction_static_is_auto
    assert plan.chunked_prefill_size == 8192
    assert plan.cuda_graph_max_bs == 256


# --- hand-checked -------------------------------------------------------------------------------------


def test_automatic_rules_by_gpu_memory():
    # arg_groups/memory_hook.py at v0.5.23 (the 20-35 GiB row was 2048 / 24 / 80 before the RTX 5090 change)
    assert auto_chunk_and_graph_sizes(24564, 1) == (4096, 48)  # RTX 4090
    assert auto_chunk_and_graph_sizes(24564, 4) == (4096, 160)
    assert auto_chunk_and_graph_sizes(24105, 1) == (4096, 48)  # this workplace's host on --device cpu (printed 4096)
    assert auto_chunk_and_graph_sizes(46068, 1) == (4096, 32)  # L40S
    assert auto_chunk_and_graph_sizes(183359, 8) == (16384, 512)  # B200
    # RTX 4090: 512 + 2048 x 1.5 + 24 x 2 + 128 = 3,760 MiB reserved -> (24564 - 3760) / 24564 = 0.847
    assert auto_mem_fraction_static(24564, SglangSettings(), 2048, 24) == 0.847
    # B200 TP8: 512 + 16384 x 1.5 + 512 x 2 + 8 x 1024 / 8 = 27,136 MiB -> 0.852
    assert auto_mem_fraction_static(183359, SglangSettings(tp_size=8), 16384, 512) == 0.852
    # more than 60 GiB: at least 10 GiB reserved
    assert auto_mem_fraction_static(81559, SglangSettings(), 2048, 8) == round((81559 - 10240) / 81559, 3)


def test_max_running_requests_rule():
    # clamp(int(tokens / context x 512), 2048, 4096), then at most tokens // 2
    assert max_running_requests_for(442750, 131072, None, 1) == 2048
    assert max_running_requests_for(252343, 40960, None, 1) == 3154
    assert max_running_requests_for(3000, 4096, None, 1) == 1500
    assert max_running_requests_for(442750, 131072, 64, 1) == 64
    assert max_running_requests_for(442750, 131072, 64, 2) == 32
    # a requested value above the estimate is kept (resolve_max_num_reqs, v0.5.23), only tokens // 2 bounds it
    assert max_running_requests_for(442750, 131072, 5000, 1) == 5000
    assert max_running_requests_for(3000, 4096, 5000, 1) == 1500


def test_mla_cell_is_the_latent_on_every_rank():
    # DeepSeek-V3: (512 + 64) x 61 layers x 2 bytes = 70,272 bytes per token, not divided by TP.
    deepseek = mla(61, 512, 64, 128, 163840)
    plan = plan_sglang(deepseek, SglangSettings(tp_size=8, max_total_tokens=1_000_000), B200_X8, 680 * GIB)
    assert plan.cell_size_bytes == 70272
    assert plan.max_total_num_tokens == 1_000_000
    assert plan.k_bytes == 1_000_001 * 576 * 2 * 61 and plan.v_bytes == 0
    assert plan.caches[0].name == "kv_mla"


def test_tensor_parallel_splits_and_replicates_kv_heads():
    model = gqa(32, 8, 128, 32, 32768)
    tp2 = plan_sglang(model, SglangSettings(tp_size=2, mem_fraction_static=0.8), H100, 16 * GIB)
    tp16 = plan_sglang(model, SglangSettings(tp_size=16, mem_fraction_static=0.8), H100, 16 * GIB)
    assert tp2.cell_size_bytes == 4 * 256 * 32 * 2
    assert tp16.cell_size_bytes == 1 * 256 * 32 * 2  # 8 heads over 16 ranks: one replicated head each


def test_page_alignment_and_padded_page():
    plan = plan_sglang(LLAMA_31_8B, SglangSettings(mem_fraction_static=0.85, page_size=64), H100, int(15 * GIB))
    assert plan.max_total_num_tokens % 64 == 0
    assert plan.k_bytes == (plan.max_total_num_tokens + 64) * 8 * 128 * 2 * 32


def test_max_total_tokens_caps_the_pool():
    capped = plan_sglang(LLAMA_31_8B, SglangSettings(mem_fraction_static=0.85, max_total_tokens=100_000), H100,
                         int(15 * GIB))
    assert capped.max_total_num_tokens == 100_000
    huge = plan_sglang(LLAMA_31_8B, SglangSettings(mem_fraction_static=0.85, max_total_tokens=10_000_000), H100,
                       int(15 * GIB))
    assert huge.max_total_num_tokens < 10_000_000
    assert any(n.code == "sglang_max_total_tokens_too_large" for n in huge.notes)


def test_fp8_cache_halves_the_cell():
    bf16 = plan_sglang(LLAMA_31_8B, SglangSettings(mem_fraction_static=0.85), H100, int(15 * GIB))
    fp8 = plan_sglang(LLAMA_31_8B, SglangSettings(mem_fraction_static=0.85, kv_cache_dtype="fp8_e4m3"), H100,
                      int(15 * GIB))
    assert fp8.cell_size_bytes * 2 == bf16.cell_size_bytes
    assert fp8.max_total_num_tokens == pytest.approx(2 * bf16.max_total_num_tokens, abs=2)


def test_hybrid_sliding_window_pool():
    # 2 full + 10 sliding layers, 8 KV heads x 128: full token = 2 x 4 KiB, sliding = 10 x 4 KiB;
    # bytes per full token = 8 KiB + 0.8 x 40 KiB; sliding pool = 0.8 x full tokens.
    gemma = interleaved("SSSSSF" * 2, 8, 128, 16, 1024, 131072)
    # gpt-oss-style: SGLang 0.5.23 keeps Gemma 2/3's windows in the full pool (recorded on the CPU device)
    plan = plan_sglang(replace(gemma, family="gpt_oss"), SglangSettings(mem_fraction_static=0.8), H100, 10 * GIB)
    per_full_token = 2 * 4096 + 0.8 * 10 * 4096
    assert plan.max_total_num_tokens == int(plan.rest_memory_bytes / per_full_token)
    assert plan.swa_max_total_num_tokens == int(plan.max_total_num_tokens * 0.8)
    assert [(c.name, c.layers) for c in plan.caches] == [("kv", 2), ("kv_swa", 10)]
    as_gemma = plan_sglang(gemma, SglangSettings(mem_fraction_static=0.8), H100, 10 * GIB)
    assert as_gemma.swa_max_total_num_tokens is None and [c.layers for c in as_gemma.caches] == [12]
    assert "sglang_gemma_no_swa_pool" in {n.code for n in as_gemma.notes}


def test_weights_larger_than_the_fraction_are_refused():
    plan = plan_sglang(LLAMA_31_8B, SglangSettings(mem_fraction_static=0.5), RTX_4090, 16 * GIB)
    assert plan.max_total_num_tokens == 0
    # kv_cache_configurator.py _profile_available_bytes (v0.5.23): the budget is negative before any token sizing
    assert plan.refusal.startswith("Loaded weights leave no GPU memory for the KV cache under "
                                   "--mem-fraction-static=0.5.")
    assert "Raise --mem-fraction-static above 0.685 (minimum viable = 1 - available/pre = 0.6841)" in plan.refusal


def test_bad_input_is_a_domain_error():
    with pytest.raises(ServewiseInputError):
        plan_sglang(LLAMA_31_8B, SglangSettings(kv_cache_dtype="q8_0"), H100, 16 * GIB)
    with pytest.raises(ServewiseInputError):
        plan_sglang(LLAMA_31_8B, SglangSettings(), H100, None)


def test_tensor_parallel_k_size_from_vllm_issue_21348():
    # https://github.com/vllm-project/vllm/issues/21348: SGLang with Qwen3-235B-A22B-FP8 (94 layers, 4 KV heads x 128,
    # bf16 cache) on --tp 4 --mem-fraction-static 0.93 printed
    #   "KV Cache is allocated. #tokens: 367404, K size: 8.23 GB, V size: 8.23 GB"
    # 4 KV heads over 4 ranks leave one head per rank: K = (367404 + 1) x 1 x 128 x 94 x 2 bytes.
    qwen3_235b = gqa(94, 4, 128, 64, 40960, "Qwen3-235B-A22B")
    plan = plan_sglang(qwen3_235b, SglangSettings(tp_size=4, mem_fraction_static=0.93, max_total_tokens=367404),
                       Machine(device_memory_bytes=81559 * MIB, n_devices=4), 200 * GIB)
    assert plan.max_total_num_tokens == 367404
    assert plan.k_bytes == 367405 * 128 * 94 * 2
    assert f"{plan.k_bytes / GIB:.2f}" == "8.23" and f"{plan.v_bytes / GIB:.2f}" == "8.23"


def test_runtime_context_estimate_grows_with_tensor_parallel():
    # estimates from public logs (PR #4760 single GPU, PR #11716 TP8); marked as estimates in the plan
    one = plan_sglang(LLAMA_31_8B, SglangSettings(mem_fraction_static=0.85), H100, int(15 * GIB))
    eight = plan_sglang(LLAMA_31_8B, SglangSettings(mem_fraction_static=0.85, tp_size=8),
                        Machine(device_memory_bytes=81559 * MIB, n_devices=8), int(15 * GIB))
    context = [c for plan in (one, eight) for c in plan.components if c.label.startswith("CUDA context")]
    assert context[0].bytes < context[1].bytes
    assert not any(c.exact for c in context)
