"""vLLM's side of the speed model: its own fit family, how many sequences a launch runs, its benchmark tool."""

from __future__ import annotations

from calculators.engines.base import BenchReader, EngineSpeed
from calculators.engines.vllm import bench_import
from calculators.engines.vllm.arg_utils import default_batch_limits
from calculators.engines.vllm.plan import ENGINE_ID


def concurrency(settings, plan, machine) -> int:
    """--max-num-seqs, or what vLLM's API server picks for the GPU when it is unset (arg_utils.py)."""
    if settings.max_num_seqs:
        return settings.max_num_seqs
    return default_batch_limits(machine)[0] if machine is not None else 256


SPEED = EngineSpeed(
    family=ENGINE_ID,
    concurrency=concurrency,
    fallback_family="sglang",  # the other Python server with CUDA graphs and paged KV
    bench_readers=(BenchReader("vllm-json", bench_import.read_save_result, bench_import.looks_like_save_result),),
    bench_backends=("vllm", "vllm-chat"),
)
