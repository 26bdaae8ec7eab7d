"""llama.cpp's side of the speed model: its own fit family, its slots, and llama-bench's outputs."""

from __future__ import annotations

from calculators.engines.base import BenchReader, EngineSpeed
from calculators.engines.llama_cpp import bench_import
from calculators.engines.llama_cpp.plan import ENGINE_ID, SERVER_AUTO_PARALLEL


def concurrency(settings, plan, machine) -> int:
    """-np slots (-1: the server's automatic 4)."""
    return SERVER_AUTO_PARALLEL if settings.parallel == -1 else max(1, settings.parallel)


SPEED = EngineSpeed(
    family=ENGINE_ID,
    concurrency=concurrency,
    bench_readers=(
        BenchReader("llama-bench-json", bench_import.read_llama_bench_json, bench_import.looks_like_json),
        BenchReader("llama-bench-markdown", bench_import.read_llama_bench_markdown, bench_import.looks_like_markdown),
    ),
)
