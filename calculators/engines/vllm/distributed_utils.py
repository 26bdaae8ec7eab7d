"""How vLLM splits the layers over pipeline stages (vllm/distributed/utils.py get_pp_indices)."""

from __future__ import annotations


def pipeline_stage_layer_counts(n_layers: int, pipeline_parallel_size: int) -> list[int]:
    """Layers per pipeline stage as vLLM splits them: extra layers go to the stages before the last."""
    counts = [n_layers // pipeline_parallel_size] * pipeline_parallel_size
    for i in range(2, n_layers % pipeline_parallel_size + 2):
        counts[-i] += 1
    return counts
