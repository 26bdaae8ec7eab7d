"""`python -m sglang.bench_serving --output-file` output: one JSON object per line, appended per run."""

from __future__ import annotations

from calculators.engines.sglang.plan import ENGINE_ID
from calculators.speed.imports.run import ImportResult
from calculators.speed.imports.serving import read_json_rows

#: `backend` values sglang.bench_serving writes when it benchmarked SGLang itself
BACKENDS = ("sglang", "sglang-native", "sglang-oai", "sglang-oai-chat")


def read_output_file(text: str) -> ImportResult:
    """Every result line in `text` (unreadable lines are kept as skipped)."""
    return read_json_rows(text, "sglang-bench-serving", "SGLang result", engine=ENGINE_ID)


def looks_like_output_file(text: str, first: dict | None) -> bool:
    """SGLang's lines count retokenized output tokens (and name an sglang backend when it served)."""
    return first is not None and (
        "total_output_tokens_retokenized" in first
        or "accept_length" in first
        or str(first.get("backend", "")) in BACKENDS
    )
