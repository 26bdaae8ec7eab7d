"""MLX LM's side of the speed model: its own fit family, mlx_lm.server's decode concurrency, its outputs."""

from __future__ import annotations

from calculators.engines.base import BenchReader, EngineSpeed
from calculators.engines.mlx_lm import bench_import
from calculators.engines.mlx_lm.plan import ENGINE_ID


def concurrency(settings, plan, machine) -> int:
    """mlx_lm.server --decode-concurrency (sequences batched in one decode step)."""
    return settings.decode_concurrency


SPEED = EngineSpeed(
    family=ENGINE_ID,
    concurrency=concurrency,
    fallback_family="llama-cpp",  # the other Metal runtime
    bench_readers=(
        BenchReader("mlx-lm-benchmark", bench_import.read_mlx_benchmark, bench_import.looks_like_benchmark),
        BenchReader("mlx-lm-generate", bench_import.read_mlx_generate, bench_import.looks_like_generate),
    ),
)
