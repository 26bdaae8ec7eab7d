"""The comparison layer: workload -> each engine's settings, side-by-side plans, why a plan falls short."""

from __future__ import annotations

import pytest

from calculators.errors import ServewiseInputError
from calculators.hardware.machine import Machine
from calculators.memory.compare import (
    ComparisonInputs,
    Workload,
    compare_engine,
    compare_engines,
    engine_settings,
    valid_tensor_parallel_sizes,
    why_not_held,
    workload_settings,
)
from calculators.units import GIB
from tests.support.models import gqa

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


def test_valid_tp_degrees_divide_the_heads():
    assert valid_tensor_parallel_sizes(gqa(32, 8, 128, 40, 4096), 8) == [1, 2, 4, 5, 8]


def test_why_not_held_names_the_limit():
    inputs = ComparisonInputs(BRIEF, H100, 16 * GIB)
    row = compare_engine(inputs, "sglang", Workload(131_072, 64))
    assert not row.holds
    assert "fewer than 64 × 131,072" in why_not_held("sglang", row.plan, Workload(131_072, 64), H100)
    from calculators.i18n import language

    with language("es"):  # the reason in Spanish words and Spanish digits
        assert "menos de 64 × 131.072" in why_not_held("sglang", row.plan, Workload(131_072, 64), H100)
    held = compare_engine(inputs, "vllm", Workload(8192, 2))
    assert held.holds and why_not_held("vllm", held.plan, Workload(8192, 2), H100) is None


def test_llamacpp_layers_left_on_the_host_need_host_ram():
    inputs = ComparisonInputs(BRIEF, H100, 16 * GIB, overrides={"llama-cpp": {"n_gpu_layers": 20}})
    row = compare_engine(inputs, "llama-cpp", Workload(8192, 2))
    assert not row.holds and "host RAM" in why_not_held("llama-cpp", row.plan, Workload(8192, 2), H100)
    with_ram = H100.model_copy(update={"host_ram_bytes": 256 * GIB})
    assert compare_engine(ComparisonInputs(BRIEF, with_ram, 16 * GIB, inputs.overrides), "llama-cpp",
                          Workload(8192, 2)).holds
