"""Pick the reader for a pasted benchmark output (detected or named) and run it."""


from __future__ import annotations

import json
from collections.abc import Callable

from calculators.errors import ServewiseInputError
from calculators.i18n import N_, _
from calculators.speed.imports.guidellm import read_guidellm_json
from calculators.speed.imports.run import ImportResult, load_json
from calculators.speed.imports.serving import read_serving_console

#: Formats no single engine owns: GuideLLM talks to any OpenAI-compatible server; the console block is
#: printed alike by vllm bench serve and sglang.bench_serving.
GENERIC_FORMATS = ("guidellm-json", "serving-console")

SUPPORTED = N_(
    "vllm bench serve --save-result JSON (or its console output), python -m sglang.bench_serving --output-file JSONL "
    "(or its console output), GuideLLM report JSON, llama-bench -o json / jsonl / the Markdown table, an Ollama API "
    "response with eval_count and eval_duration, mlx_lm.benchmark output, mlx_lm.generate --verbose output"
)


def readers() -> dict[str, Callable[[str], ImportResult]]:
    """Every format id -> reader: the generic ones, then each engine's own (engines/<engine>/bench_import.py)."""
    from calculators.engines import ENGINES

    found: dict[str, Callable[[str], ImportResult]] = {
        "guidellm-json": read_guidellm_json, "serving-console": read_serving_console,
    }
    for engine in ENGINES.values():
        for reader in engine.speed.bench_readers if engine.speed else ():
            found[reader.format_id] = reader.read
    return found


def _first_object(text: str) -> dict | None:
    stripped = text.strip()
    if not stripped or stripped[0] not in "[{":
        return None
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


def detect_format(text: str) -> str:
    """Guess which tool printed `text`; ServewiseInputError lists the supported formats when none fits."""
    from calculators.engines import ENGINES

    stripped = text.strip()
    if not stripped:
        raise ServewiseInputError(_("the benchmark text is empty"))
    first = _first_object(stripped)
    if first is not None and "benchmarks" in first:
        return "guidellm-json"
    if first is None and "Serving Benchmark Result" in text:
        return "serving-console"
    # engine formats, most specific first: an SGLang line also has vLLM's median fields
    candidates = [r for e in ENGINES.values() if e.speed for r in e.speed.bench_readers]
    for reader in sorted(candidates, key=lambda r: 0 if r.format_id.endswith("jsonl") else 1):
        if reader.sniff(stripped, first):
            return reader.format_id
    if first is None and stripped[0] in "[{":  # starts as JSON but neither it nor its first line parses
        load_json(stripped, _("the benchmark output (was it cut short?)"))
    if first is not None or stripped[0] in "[{":
        raise ServewiseInputError(_("JSON that servewise does not recognise; it reads: {supported}").format(
                                    supported=_(SUPPORTED)))
    raise ServewiseInputError(_("text that servewise does not recognise; it reads: {supported}").format(
                                supported=_(SUPPORTED)))


def read_benchmark(text: str, fmt: str | None = None) -> ImportResult:
    """Read a pasted benchmark output (format detected unless given)."""
    chosen = fmt or detect_format(text)
    found = readers()
    if chosen not in found:
        raise ServewiseInputError(_("unknown benchmark format {chosen!r}; choose one of {found}").format(
                                    chosen=chosen, found=', '.join(found)))
    return found[chosen](text)
