"""Import a measured run: one reader per benchmark output format, and `read_benchmark` to pick one.

Every reader returns an ImportResult: the runs it read (one per load level) and every input line it did
not use, verbatim, with the reason. Input it cannot use at all raises ServewiseInputError naming the
line or field.
"""

from __future__ import annotations

import json
from typing import Literal

from calculators.errors import ServewiseInputError
from calculators.speed.imports.guidellm import read_guidellm_json
from calculators.speed.imports.llama_bench import read_llama_bench_json, read_llama_bench_markdown
from calculators.speed.imports.mlx_lm import read_mlx_benchmark, read_mlx_generate
from calculators.speed.imports.ollama import read_ollama_json
from calculators.speed.imports.run import ImportedRun, ImportResult, SkippedLine
from calculators.speed.imports.serving import read_serving_console, read_sglang_jsonl, read_vllm_json

Format = Literal[
    "vllm-json", "sglang-jsonl", "serving-console", "guidellm-json", "llama-bench-json", "llama-bench-markdown",
    "ollama-json", "mlx-lm-benchmark", "mlx-lm-generate",
]

READERS = {
    "vllm-json": read_vllm_json,
    "sglang-jsonl": read_sglang_jsonl,
    "serving-console": read_serving_console,
    "guidellm-json": read_guidellm_json,
    "llama-bench-json": read_llama_bench_json,
    "llama-bench-markdown": read_llama_bench_markdown,
    "ollama-json": read_ollama_json,
    "mlx-lm-benchmark": read_mlx_benchmark,
    "mlx-lm-generate": read_mlx_generate,
}

SUPPORTED = (
    "vllm bench serve --save-result JSON (or its console output), python -m sglang.bench_serving --output-file JSONL "
    "(or its console output), GuideLLM report JSON, llama-bench -o json / jsonl / the Markdown table, an Ollama API "
    "response with eval_count and eval_duration, mlx_lm.benchmark output, mlx_lm.generate --verbose output"
)


def _first_object(text: str) -> dict | None:
    stripped = text.strip()
    try:
        data = json.loads(stripped)
    except json.JSONDecodeError:
        first = next((line for line in stripped.splitlines() if line.strip()), "")
        try:
            data = json.loads(first)
        except json.JSONDecodeError:
            return None
    if isinstance(data, list):
        data = data[0] if data else None
    return data if isinstance(data, dict) else None


def detect_format(text: str) -> Format:
    """Guess which tool printed `text`; ServewiseInputError lists the supported formats when none fits."""
    stripped = text.strip()
    if not stripped:
        raise ServewiseInputError("the benchmark text is empty")
    if stripped[0] in "[{":
        obj = _first_object(stripped)
        if obj is not None:
            if "benchmarks" in obj:
                return "guidellm-json"
            if "avg_ts" in obj or "n_gen" in obj:
                return "llama-bench-json"
            if "eval_count" in obj or ("done" in obj and "model" in obj):
                return "ollama-json"
            if any(k in obj for k in ("median_ttft_ms", "median_itl_ms", "median_tpot_ms")):
                backend = str(obj.get("backend", ""))
                sglang = backend.startswith("sglang") or "total_output_tokens_retokenized" in obj or "accept_length" in obj
                return "sglang-jsonl" if sglang else "vllm-json"
        raise ServewiseInputError(f"JSON that servewise does not recognise; it reads: {SUPPORTED}")
    if "Serving Benchmark Result" in text:
        return "serving-console"
    if "generation_tps=" in text:
        return "mlx-lm-benchmark"
    if "tokens-per-sec" in text and "Generation:" in text:
        return "mlx-lm-generate"
    if "|" in text and "t/s" in text and "test" in text:
        return "llama-bench-markdown"
    raise ServewiseInputError(f"text that servewise does not recognise; it reads: {SUPPORTED}")


def read_benchmark(text: str, fmt: Format | None = None) -> ImportResult:
    """Read a pasted benchmark output (format detected unless given)."""
    chosen = fmt or detect_format(text)
    if chosen not in READERS:
        raise ServewiseInputError(f"unknown benchmark format {chosen!r}; choose one of {', '.join(READERS)}")
    return READERS[chosen](text)


__all__ = ["READERS", "SUPPORTED", "Format", "ImportResult", "ImportedRun", "SkippedLine", "detect_format", "read_benchmark"]
