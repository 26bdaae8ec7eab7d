"""The comparison layer: workload -> each engine's settings, side-by-side plans, capacity searches (hand-checked)."""

from __future__ import annotations

import time

import pytest

from calculators.capacity import capacity, capacity_curve, context_grid, most_sequences
from calculators.compare import (
    ComparisonInputs,
    Workload,
    compare_engine,
    compare_engines,
    engine_settings,
    valid_tensor_parallel_sizes,
    why_not_held,
    workload_settings,
)
from calculators.errors import ServewiseInputError
from calculators.machine import Machine
from tests.servers_archs import GIB, MIB, gqa

# The product brief's worked example: 32 layers x 8 KV heads x head dim 128 at 2 bytes = 128 KiB per token.
BRIEF = gqa(32, 8, 128, 32, 131_072)
H100 = Machine(device_memory_bytes=80 * GIB)
MAC = Machine(device_memory_bytes=48 * GIB, unified_memory=True, host_ram_bytes=64 * GIB)


def test_workload_maps_to_each_engines_own_knobs():
    w = Workload(context_tokens=8192, sequences=4, kv_cache_type="8-bit")
    # llama-server: -c is the whole cache shared by -np slots, so it is context x slots
    assert workload_settings("llama-cpp", w) == {
        "ctx_size": 32768, "parallel": 4, "cache_type_k": "q8_0", "cache_type_v": "q8_0"}
    assert workload_settings("ollama", w)["context_length"] == 8192
    assert workload_settings("ollama", w)["num_parallel"] == 4
    assert workload_settings("vllm", w) == {"max_model_len": 8192, "max_num_seqs": 4, "kv_cache_dtype": "fp8"}
    assert workload_settings("sglang", w) == {
        "context_length": 8192, "max_running_requests": 4, "kv_cache_dtype": "fp8_e4m3"}
    assert workload_settings("mlx-lm", w) == {"decode_concurrency": 4, "kv_bits": 8}


def test_overrides_replace_mapped_keys():
    settings = engine_settings("vllm", Workload(8192, 4), {"max_num_seqs": 64, "gpu_memory_utilization": 0.8})
    assert settings.max_num_seqs == 64 and settings.gpu_memory_utilization == 0.8 and settings.max_model_len == 8192


def test_bad_override_is_a_user_error_naming_the_setting():
    with pytest.raises(ServewiseInputError, match="gpu_memory_utilization"):
        engine_settings("vllm", Workload(8192, 1), {"gpu_memory_utilization": 1.5})


@pytest.mark.parametrize("kwargs", [{"context_tokens": 0}, {"context_tokens": 10, "sequences": 0},
                                    {"context_tokens": 10, "kv_cache_type": "2-bit"}])
def test_impossible_workloads_are_refused(kwargs):
    with pytest.raises(ServewiseInputError):
        Workload(**kwargs)


def test_engines_that_cannot_run_here_are_listed_with_a_reason():
    rows = {row.engine: row for row in compare_engines(ComparisonInputs(BRIEF, H100, 16 * GIB), Workload(8192, 8))}
    assert list(rows) == ["ollama", "llama-cpp", "vllm", "sglang", "mlx-lm"]
    assert "Apple silicon" in rows["mlx-lm"].not_applicable and rows["mlx-lm"].plan is None
    assert rows["vllm"].plan is not None and rows["vllm"].holds
    mac_rows = {row.engine: row for row in compare_engines(ComparisonInputs(BRIEF, MAC, 16 * GIB), Workload(8192, 8))}
    assert "Metal" in mac_rows["vllm"].not_applicable
    assert mac_rows["sglang"].not_applicable
    assert mac_rows["mlx-lm"].plan is not None


def test_a_cache_type_an_engine_lacks_is_not_applicable_not_an_error():
    rows = {r.engine: r for r in compare_engines(ComparisonInputs(BRIEF, H100, 16 * GIB), Workload(8192, 1, "4-bit"))}
    assert "4-bit" in rows["vllm"].not_applicable and rows["vllm"].error is None


def test_mlx_capacity_is_the_brief_arithmetic():
    # 48 GiB working set - 16 GiB weights = 32 GiB of cache = 262,144 tokens at 128 KiB each (MLX adds no
    # reserve; 8,192 and 32,768 are whole 256-token steps): 32 sequences of 8,192, or 8 sequences of 32,768.
    cap = capacity(ComparisonInputs(BRIEF, MAC, 16 * GIB), "mlx-lm", Workload(8192, 8))
    assert cap.max_sequences == 32
    assert cap.max_context_tokens == 32_768


def test_vllm_capacity_follows_its_block_budget():
    # vllm.py: requested = 80 GiB x 0.92; minus 16 GiB weights, 5.64 GiB activation peak and 0.14 GiB
    # non-torch memory (llm-d figures); blocks of 16 tokens x 128 KiB = 2 MiB.
    available = int(80 * GIB * 0.92 - (16 * GIB + int(5.64 * GIB) + int(0.14 * GIB)))
    blocks = available // (2 * MIB)
    cap = capacity(ComparisonInputs(BRIEF, H100, 16 * GIB), "vllm", Workload(8192, 8))
    assert cap.max_sequences == blocks // 512  # 8,192 tokens = 512 blocks per request
    # the longest context is searched in whole 256-token steps: the largest step within blocks // 8 blocks
    assert cap.max_context_tokens == blocks // 8 * 16 // 256 * 256


def test_capacity_overrides_other_than_workload_keys_are_kept():
    inputs = ComparisonInputs(BRIEF, H100, 16 * GIB, overrides={"vllm": {"gpu_memory_utilization": 0.5}})
    low = capacity(inputs, "vllm", Workload(8192, 8))
    high = capacity(ComparisonInputs(BRIEF, H100, 16 * GIB), "vllm", Workload(8192, 8))
    assert 0 < low.max_sequences < high.max_sequences


def test_nothing_fits_gives_zero_not_an_error():
    cap = capacity(ComparisonInputs(BRIEF, MAC, 60 * GIB), "mlx-lm", Workload(8192, 1))
    assert cap.max_sequences == 0 and cap.max_context_tokens == 0


def test_curve_never_rises_with_context_and_matches_point_searches():
    inputs = ComparisonInputs(BRIEF, MAC, 16 * GIB)
    contexts = [4096, 8192, 32768]
    curve = capacity_curve(inputs, "mlx-lm", Workload(8192, 1), contexts, sequences_limit=100)
    assert curve.max_sequences == (64, 32, 8)


def test_curve_for_an_engine_that_cannot_run_says_why():
    curve = capacity_curve(ComparisonInputs(BRIEF, H100, 16 * GIB), "mlx-lm", Workload(8192, 1), [1024])
    assert curve.reason and curve.max_sequences == ()


def test_a_200_by_200_grid_is_fast():
    inputs = ComparisonInputs(BRIEF, H100, 16 * GIB)
    start = time.perf_counter()
    curve = capacity_curve(inputs, "vllm", Workload(8192, 1), context_grid(131_072, 200), sequences_limit=200)
    assert time.perf_counter() - start < 1.0
    assert list(curve.max_sequences) == sorted(curve.max_sequences, reverse=True)


def test_valid_tp_degrees_divide_the_heads():
    assert valid_tensor_parallel_sizes(gqa(32, 8, 128, 40, 4096), 8) == [1, 2, 4, 5, 8]


def test_most_sequences_matches_capacity_and_skips_engines_that_cannot_run():
    inputs = ComparisonInputs(BRIEF, MAC, 16 * GIB)
    assert most_sequences(inputs, "mlx-lm", Workload(8192, 1)) == 32
    assert most_sequences(inputs, "vllm", Workload(8192, 1)) is None


def test_why_not_held_names_the_limit():
    inputs = ComparisonInputs(BRIEF, H100, 16 * GIB)
    row = compare_engine(inputs, "sglang", Workload(131_072, 64))
    assert not row.holds
    assert "fewer than 64 x 131,072" in why_not_held("sglang", row.plan, Workload(131_072, 64), H100)
    held = compare_engine(inputs, "vllm", Workload(8192, 2))
    assert held.holds and why_not_held("vllm", held.plan, Workload(8192, 2), H100) is None


def test_llamacpp_layers_left_on_the_host_need_host_ram():
    inputs = ComparisonInputs(BRIEF, H100, 16 * GIB, overrides={"llama-cpp": {"n_gpu_layers": 20}})
    row = compare_engine(inputs, "llama-cpp", Workload(8192, 2))
    assert not row.holds and "host RAM" in why_not_held("llama-cpp", row.plan, Workload(8192, 2), H100)
    with_ram = H100.model_copy(update={"host_ram_bytes": 256 * GIB})
    assert compare_engine(ComparisonInputs(BRIEF, with_ram, 16 * GIB, inputs.overrides), "llama-cpp",
                          Workload(8192, 2)).holds
