"""Ollama's side of the speed model: it runs llama.cpp's kernels, so it shares llama.cpp's fitted efficiencies."""

from __future__ import annotations

from calculators.engines.base import BenchReader, EngineSpeed
from calculators.engines.llama_cpp.plan import ENGINE_ID as LLAMA_CPP_ID
from calculators.engines.ollama import bench_import


def concurrency(settings, plan, machine) -> int:
    """The -np Ollama passes to its llama-server (OLLAMA_NUM_PARALLEL, 1 for families that never run in parallel)."""
    if plan is not None and hasattr(plan, "effective_parallel"):
        return plan.effective_parallel
    return max(1, settings.num_parallel)


SPEED = EngineSpeed(
    family=LLAMA_CPP_ID,
    concurrency=concurrency,
    prefill_fp16_accumulate=True,  # llama.cpp's kernels: see engines/llama_cpp/speed.py
    bench_readers=(BenchReader("ollama-json", bench_import.read_ollama_json, bench_import.looks_like_response),),
)
