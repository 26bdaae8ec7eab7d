"""`vllm bench serve --save-result` output: one JSON object per run (a list or one per line when several)."""

from __future__ import annotations

from calculators.engines.vllm.plan import ENGINE_ID
from calculators.speed.imports.run import ImportResult
from calculators.speed.imports.serving import read_json_rows


def read_save_result(text: str) -> ImportResult:
    """Every saved result in `text`, one ImportedRun per load level."""
    return read_json_rows(text, "vllm-bench-serve", "vLLM result", engine=ENGINE_ID)


def looks_like_save_result(text: str, first: dict | None) -> bool:
    """vLLM's saved results name the endpoint type and burstiness next to the medians."""
    return first is not None and "median_ttft_ms" in first and ("endpoint_type" in first or "burstiness" in first)
