"""What vLLM's and SGLang's serving benchmarks share: result objects with the same field names
(median_ttft_ms, median_itl_ms, ...) and the same console "Serving Benchmark Result" layout.

The engines' own readers (engines/vllm/bench_import.py, engines/sglang/bench_import.py) call
`read_json_rows` with their id; the console reader names the engine from the `Backend:` line through
the registry (each engine lists its benchmark backends).
"""

from __future__ import annotations

import math
import re
from typing import Any

from calculators.errors import ServewiseInputError
from calculators.i18n import _
from calculators.speed.imports.run import ImportedRun, ImportResult, SkippedLine, load_json, number, positive_or_none
from calculators.units import compact


def _load(row: dict, where: str, line_no: int) -> tuple[str, float | None]:
    concurrency = number(row, "max_concurrency", where)
    rate = number(row, "request_rate", where)
    if concurrency is not None:
        return "concurrency", concurrency
    if rate is not None and math.isfinite(rate):
        return "rate", rate
    # every request sent at once: the load is the number of requests in flight at the start
    prompts = number(row, "num_prompts", where) or number(row, "completed", where)
    return "concurrency", prompts


def engine_for_backend(backend: str) -> str | None:
    """The registered engine whose serving benchmarks write this `backend` value, if any."""
    from calculators.engines import ENGINES

    for engine_id, found in ENGINES.items():
        if found.speed is not None and backend in found.speed.bench_backends:
            return engine_id
    return None


def run_from_row(row: object, tool: str, where: str, line_no: int, engine: str | None = None) -> ImportedRun:
    """One saved result object (vLLM JSON or an SGLang JSONL line) as an ImportedRun."""
    if not isinstance(row, dict):
        raise ServewiseInputError(_("{where}: expected a JSON object, got {name}").format(
                                    where=where, name=type(row).__name__))
    if "median_ttft_ms" not in row and "median_itl_ms" not in row and "median_tpot_ms" not in row:
        raise ServewiseInputError(
            _("{where}: no median_ttft_ms / median_itl_ms / median_tpot_ms field: not a serving benchmark "
              "result").format(where=where)
        )
    completed = number(row, "completed", where)
    if completed is not None and completed <= 0:
        raise ServewiseInputError(_("{where}: 'completed' is {completed}: the run finished no request").format(
                                    where=where, completed=compact(completed, 3)))
    kind, load = _load(row, where, line_no)
    inputs, outputs = number(row, "total_input_tokens", where), number(row, "total_output_tokens", where)
    named = engine_for_backend(str(row.get("backend") or ""))
    return ImportedRun(
        tool=tool,
        engine=named or engine,
        model_label=str(row.get("model_id") or row.get("model") or ""),
        load_kind=kind,
        load=positive_or_none(load),
        n_requests=int(completed) if completed is not None else None,
        prompt_tokens=inputs / completed if inputs is not None and completed else None,
        output_tokens=outputs / completed if outputs is not None and completed else None,
        ttft_ms_p50=positive_or_none(number(row, "median_ttft_ms", where)),
        ttft_ms_p99=positive_or_none(number(row, "p99_ttft_ms", where)),
        itl_ms_p50=positive_or_none(number(row, "median_itl_ms", where)),
        tpot_ms_p50=positive_or_none(number(row, "median_tpot_ms", where)),
        output_tokens_per_s=positive_or_none(number(row, "output_throughput", where)),
        line_no=line_no,
    )


def read_json_rows(text: str, tool: str, what: str, engine: str | None = None) -> ImportResult:
    """Saved serving results: one JSON object, a list of them, or one per line (bad lines kept as skipped).

    `engine` is the engine the tool belongs to; a `backend` field naming another engine wins.
    """
    stripped = text.strip()
    if not stripped:
        raise ServewiseInputError(_("{what}: the text is empty").format(what=what))
    if stripped.startswith("[") or (stripped.startswith("{") and "\n{" not in stripped):
        data = load_json(stripped, what)
        rows = data if isinstance(data, list) else [data]
        return ImportResult(
            tool=tool, runs=tuple(run_from_row(r, tool, f"{what} #{i + 1}", 1, engine) for i, r in enumerate(rows))
        )
    runs, skipped = [], []
    for line_no, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            runs.append(
                run_from_row(load_json(line, f"{what} line {line_no}"), tool, f"{what} line {line_no}", line_no, engine)
            )
        except ServewiseInputError as exc:
            skipped.append(SkippedLine(line_no=line_no, text=line, reason=str(exc)))
    if not runs:
        first = skipped[0] if skipped else None
        raise ServewiseInputError(_("{what}: no usable line").format(what=what)
            + (f" ({first.reason})" if first else ""))
    return ImportResult(tool=tool, runs=tuple(runs), skipped=tuple(skipped))


#: Console lines both tools print, e.g. "Median TTFT (ms):   9459.70".
_CONSOLE = {
    "ttft_ms_p50": re.compile(r"^Median TTFT \(ms\):\s*([0-9.eE+-]+)\s*$"),
    "ttft_ms_p99": re.compile(r"^P99 TTFT \(ms\):\s*([0-9.eE+-]+)\s*$"),
    "itl_ms_p50": re.compile(r"^Median ITL \(ms\):\s*([0-9.eE+-]+)\s*$"),
    "tpot_ms_p50": re.compile(r"^Median TPOT \(ms\):\s*([0-9.eE+-]+)\s*$"),
    "output_tokens_per_s": re.compile(r"^Output token throughput \(tok/s\):\s*([0-9.eE+-]+)\s*$"),
    "completed": re.compile(r"^Successful requests:\s*([0-9]+)\s*$"),
    "inputs": re.compile(r"^Total input tokens:\s*([0-9]+)\s*$"),
    "outputs": re.compile(r"^Total generated tokens:\s*([0-9]+)\s*$"),
    "rate": re.compile(r"^(?:Traffic request rate|Request rate configured \(RPS\)):\s*([0-9.]+|inf)\s*$"),
    "concurrency": re.compile(r"^Max(?:imum)? re(?:q|qu)e?st concurrency:\s*([0-9]+|not set|None)\s*$", re.IGNORECASE),
    "backend": re.compile(r"^Backend:\s*(\S+)\s*$"),
}


def read_serving_console(text: str) -> ImportResult:
    """The "Serving Benchmark Result" blocks both tools print (several blocks = several runs)."""
    block: dict[str, Any] = {}  # a block's values: the backend's name, then numbers
    runs, skipped, start = [], [], 1
    backends = [
        line.strip().split(":", 1)[1].strip() for line in text.splitlines() if line.strip().startswith("Backend:")
    ]
    named = engine_for_backend(backends[0]) if backends else None
    # only sglang.bench_serving prints a Backend: line; vllm bench serve does not
    tool = "sglang-bench-serving" if backends else "vllm-bench-serve"

    def close(_line_no: int) -> None:
        nonlocal block
        if any(k in block for k in ("ttft_ms_p50", "itl_ms_p50", "tpot_ms_p50")):
            completed = block.get("completed")
            rate, conc = block.get("rate"), block.get("concurrency")
            kind, load = (
                ("concurrency", conc)
                if conc
                else (("rate", rate) if rate and math.isfinite(rate) else ("concurrency", completed))
            )
            runs.append(
                ImportedRun(
                    tool=tool,
                    engine=engine_for_backend(block.get("backend", "")) or named,
                    load_kind=kind,
                    load=positive_or_none(load),
                    n_requests=int(completed) if completed else None,
                    prompt_tokens=block["inputs"] / completed if completed and "inputs" in block else None,
                    output_tokens=block["outputs"] / completed if completed and "outputs" in block else None,
                    ttft_ms_p50=positive_or_none(block.get("ttft_ms_p50")),
                    ttft_ms_p99=positive_or_none(block.get("ttft_ms_p99")),
                    itl_ms_p50=positive_or_none(block.get("itl_ms_p50")),
                    tpot_ms_p50=positive_or_none(block.get("tpot_ms_p50")),
                    output_tokens_per_s=positive_or_none(block.get("output_tokens_per_s")),
                    line_no=start,
                )
            )
        block = {}

    for line_no, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if "Serving Benchmark Result" in line:
            if any(k in block for k in ("ttft_ms_p50", "itl_ms_p50", "tpot_ms_p50")):
                close(line_no)  # rate/concurrency lines printed before this header belong to the new block
            start = line_no
            continue
        for key, pattern in _CONSOLE.items():
            match = pattern.match(line)
            if match:
                value = match.group(1)
                if key == "backend":
                    block[key] = value
                elif key == "concurrency":
                    block[key] = float(value) if value.isdigit() else None
                elif key in ("rate",):
                    block[key] = float("inf") if value == "inf" else float(value)
                else:
                    try:
                        block[key] = float(value)
                    except ValueError:
                        skipped.append(
                            SkippedLine(line_no=line_no, text=raw, reason=_("{key}: {value!r} is not a "
                                "number").format(key=key, value=value))
                        )
                break
        else:
            if line:
                skipped.append(SkippedLine(line_no=line_no, text=raw, reason=_("not a result line servewise reads")))
    close(len(text.splitlines()))
    if not runs:
        raise ServewiseInputError(
            _("no 'Serving Benchmark Result' block with a Median TTFT / ITL / TPOT line was found"))
    return ImportResult(tool=tool, runs=tuple(runs), skipped=tuple(skipped))
