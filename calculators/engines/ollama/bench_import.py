"""Reader for Ollama API response timings (`/api/generate` or `/api/chat` with their final statistics).

Durations are nanoseconds (ollama/ollama docs/api.md): decode rate = eval_count / eval_duration x 1e9,
prefill rate = prompt_eval_count / prompt_eval_duration x 1e9, and the prompt evaluation time is the
server-side part of time to first token.
"""

from __future__ import annotations

from calculators.engines.ollama.plan import ENGINE_ID
from calculators.errors import ServewiseInputError
from calculators.i18n import _
from calculators.speed.imports.run import ImportedRun, ImportResult, SkippedLine, load_json, number


def _run(row: dict, where: str, line_no: int) -> ImportedRun:
    eval_count = number(row, "eval_count", where, required=True)
    eval_ns = number(row, "eval_duration", where, required=True)
    if eval_ns <= 0 or eval_count <= 0:
        raise ServewiseInputError(_("{where}: eval_count and eval_duration must be positive").format(where=where))
    prompt_count = number(row, "prompt_eval_count", where)
    prompt_ns = number(row, "prompt_eval_duration", where)
    prefill = prompt_count / prompt_ns * 1e9 if prompt_count and prompt_ns and prompt_ns > 0 else None
    return ImportedRun(
        tool="ollama-api",
        engine=ENGINE_ID,
        model_label=str(row.get("model") or ""),
        prompt_tokens=prompt_count,
        output_tokens=eval_count,
        decode_tokens_per_s=eval_count / eval_ns * 1e9,
        prefill_tokens_per_s=prefill,
        ttft_ms_p50=prompt_ns / 1e6 if prompt_ns else None,
        line_no=line_no,
    )


def read_ollama_json(text: str) -> ImportResult:
    """One response object, a list of them, or a streamed response (one JSON object per line; the
    final `"done": true` objects carry the timings, the partial ones are kept as skipped)."""
    stripped = text.strip()
    if not stripped:
        raise ServewiseInputError(_("Ollama response: the text is empty"))
    if stripped.startswith("[") or (stripped.startswith("{") and "\n{" not in stripped and "}\n" not in stripped):
        data = load_json(stripped, "Ollama response")
        rows = [(1, r) for r in (data if isinstance(data, list) else [data])]
    else:
        rows = [
            (n, load_json(line, f"Ollama response line {n}"))
            for n, line in enumerate(text.splitlines(), start=1)
            if line.strip()
        ]
    runs, skipped = [], []
    for line_no, row in rows:
        where = f"Ollama response line {line_no}"
        if not isinstance(row, dict):
            raise ServewiseInputError(_("{where}: expected a JSON object").format(where=where))
        if "eval_count" not in row:
            reason = (
                "a streamed partial response (no timings until 'done': true)"
                if row.get("done") is False
                else "no eval_count field"
            )
            skipped.append(SkippedLine(line_no=line_no, text=str(row)[:500], reason=reason))
            continue
        runs.append(_run(row, where, line_no))
    if not runs:
        raise ServewiseInputError(
            _("Ollama response: no object with eval_count and eval_duration (paste the final 'done': true object)")
        )
    return ImportResult(tool="ollama-api", runs=tuple(runs), skipped=tuple(skipped))


def looks_like_response(text: str, first: dict | None) -> bool:
    """An Ollama response object: eval_count, or a streamed partial with done and model."""
    return first is not None and ("eval_count" in first or ("done" in first and "model" in first))
