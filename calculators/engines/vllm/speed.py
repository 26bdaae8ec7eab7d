"""vLLM's side of the speed model: its own fit family, how many sequences a launch runs, its benchmark tool."""

from __future__ import annotations

import re

from calculators.engines.base import BenchReader, EngineSpeed
from calculators.engines.vllm import bench_import
from calculators.engines.vllm.arg_utils import default_batch_limits
from calculators.engines.vllm.plan import ENGINE_ID

#: Fit family of measurements made with vLLM's V0 engine. V1 became the default engine in vLLM 0.8.0 (release
#: notes: "We have now enabled V1 engine by default (#13726)"), and 0.11.0 removed V0 ("V1 is the only engine in
#: the codebase now"); https://github.com/vllm-project/vllm/releases/tag/v0.8.0 and .../tag/v0.11.0. V1 moved the
#: scheduler into its own process ("near-zero CPU overhead", docs.vllm.ai/en/v0.8.0 V1 user guide): on one
#: AccelMark A100 80 GB host a Qwen2.5-0.5B token took 3.83 ms on 0.7.3 (V0) and 1.83 ms on 0.20.1 (V1), so
#: V0 measurements get parameters of their own instead of setting today's per-step overhead.
V0_FAMILY = "vllm-v0"
#: first vLLM release whose default engine is V1
V1_DEFAULT_SINCE = (0, 8)


def family_for_version(version: str) -> str:
    """'vllm-v0' for a measurement of vLLM before 0.8 (the V0 engine), else vLLM's own family.

    `version` is a measurement's engine_version, e.g. "vLLM 0.7.3" or "vLLM 0.20.1+transformers-5.8.1"; a
    string that names no vLLM release (a fork's own numbering) counts as the current engine.
    """
    found = re.match(r"\s*vLLM\s+v?(\d+)\.(\d+)", version, flags=re.IGNORECASE)
    if found is not None and (int(found.group(1)), int(found.group(2))) < V1_DEFAULT_SINCE:
        return V0_FAMILY
    return ENGINE_ID


def concurrency(settings, plan, machine) -> int:
    """--max-num-seqs, or what vLLM's API server picks for the GPU when it is unset (arg_utils.py)."""
    if settings.max_num_seqs:
        return settings.max_num_seqs
    return default_batch_limits(machine)[0] if machine is not None else 256


SPEED = EngineSpeed(
    family=ENGINE_ID,
    concurrency=concurrency,
    fallback_family="sglang",  # the other Python server with CUDA graphs and paged KV
    family_for_version=family_for_version,
    bench_readers=(BenchReader("vllm-json", bench_import.read_save_result, bench_import.looks_like_save_result),),
    bench_backends=("vllm", "vllm-chat"),
)
