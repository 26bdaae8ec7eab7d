"""Capacity searches over the engines' plans: longest context, most sequences, the curve (hand-checked)."""

from __future__ import annotations

from calculators.hardware.machine import Machine
from calculators.memory.capacity import capacity, capacity_curve, context_grid, most_sequences
from calculators.memory.compare import ComparisonInputs, Workload
from calculators.units import GIB, MIB
from tests.support.models import gqa

# The product brief's worked example: 32 layers x 8 KV heads x head dim 128 at 2 bytes = 128 KiB per token.
BRIEF = gqa(32, 8, 128, 32, 131_072)
H100 = Machine(device_memory_bytes=80 * GIB)
MAC = Machine(device_memory_bytes=48 * GIB, unified_memory=True, host_ram_bytes=64 * GIB)


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


def test_a_200_by_200_grid_has_a_point_per_context_and_never_rises():
    # its speed (target well under 1 s) is measured by bench/bench_memory_grid.py, not asserted here
    inputs = ComparisonInputs(BRIEF, H100, 16 * GIB)
    curve = capacity_curve(inputs, "vllm", Workload(8192, 1), context_grid(131_072, 200), sequences_limit=200)
    assert len(curve.max_sequences) == 200 and max(curve.max_sequences) <= 200
    assert list(curve.max_sequences) == sorted(curve.max_sequences, reverse=True)


def test_most_sequences_matches_capacity_and_skips_engines_that_cannot_run():
    inputs = ComparisonInputs(BRIEF, MAC, 16 * GIB)
    assert most_sequences(inputs, "mlx-lm", Workload(8192, 1)) == 32
    assert most_sequences(inputs, "vllm", Workload(8192, 1)) is None


def test_llamacpp_capacity_agrees_with_its_side_by_side_plan():
    # the search plans without --fit but keeps --fit's 1 GiB per GPU; the side-by-side plan runs --fit itself
    from calculators.memory.compare import compare_engine

    inputs = ComparisonInputs(BRIEF, H100, 16 * GIB)
    for context in (4096, 32_768):
        most = most_sequences(inputs, "llama-cpp", Workload(context, 1), sequences_limit=256)
        assert 0 < most < 256
        assert compare_engine(inputs, "llama-cpp", Workload(context, most)).holds
        assert not compare_engine(inputs, "llama-cpp", Workload(context, most + 1)).holds


def test_ollama_capacity_agrees_with_its_side_by_side_plan():
    # Ollama's probes ask for every layer (no --fit layer search) and keep --fit's margin instead
    from calculators.memory.compare import compare_engine

    inputs = ComparisonInputs(BRIEF, H100, 16 * GIB)
    most = most_sequences(inputs, "ollama", Workload(16_384, 1), sequences_limit=256)
    assert 0 < most < 256
    assert compare_engine(inputs, "ollama", Workload(16_384, most)).holds
    assert not compare_engine(inputs, "ollama", Workload(16_384, most + 1)).holds


def test_the_context_grid_passes_through_the_workloads_context():
    # 512 x 256^(i/5): 512, 1552, 4705, 14263, 43238, 131072; a grid point within a third of a step (x1.45) of
    # the workload's context makes way for it, the ends stay
    assert context_grid(131_072, 6) == [512, 1552, 4705, 14263, 43238, 131072]
    assert context_grid(131_072, 6, through=16_384) == [512, 1552, 4705, 16384, 43238, 131072]
    assert context_grid(131_072, 6, through=3000) == [512, 1552, 3000, 4705, 14263, 43238, 131072]
    assert context_grid(131_072, 6, through=600) == [512, 600, 1552, 4705, 14263, 43238, 131072]
    assert context_grid(131_072, 6, through=200_000) == [512, 1552, 4705, 14263, 43238, 131072, 200_000]


def test_the_curve_at_the_workloads_context_is_the_capacity_figure():
    inputs = ComparisonInputs(BRIEF, H100, 16 * GIB)
    for context in (3000, 20_000):
        workload = Workload(context, 8)
        for engine in ("ollama", "llama-cpp", "vllm", "sglang"):
            contexts = context_grid(131_072, 6, through=context)
            curve = capacity_curve(inputs, engine, workload, contexts, sequences_limit=256)
            most = capacity(inputs, engine, workload, sequences_limit=4096).max_sequences
            assert most is not None
            assert dict(zip(curve.context_tokens, curve.max_sequences, strict=True))[context] == min(most, 256)
