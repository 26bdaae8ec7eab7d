"""SGLang's side of the speed model: its own fit family, its running-request limit, its benchmark tool."""

from __future__ import annotations

from calculators.engines.base import BenchReader, EngineSpeed
from calculators.engines.sglang import bench_import
from calculators.engines.sglang.plan import ENGINE_ID


def concurrency(settings, plan, machine) -> int:
    """--max-running-requests, else the limit SGLang derives from its token pool (the plan computes it)."""
    if settings.max_running_requests:
        return settings.max_running_requests
    return plan.max_running_requests if plan is not None and hasattr(plan, "max_running_requests") else 2048


SPEED = EngineSpeed(
    family=ENGINE_ID,
    concurrency=concurrency,
    fallback_family="vllm",  # the other Python server with CUDA graphs and paged KV
    bench_readers=(BenchReader("sglang-jsonl", bench_import.read_output_file, bench_import.looks_like_output_file),),
    bench_backends=bench_import.BACKENDS,
)
