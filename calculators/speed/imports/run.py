"""What an imported benchmark run says: one load level's measured latencies and rates, and what was skipped."""

from __future__ import annotations

import json
from typing import Literal, overload

from pydantic import BaseModel, ConfigDict, Field

from calculators.errors import ServewiseInputError, json_problem
from calculators.i18n import _

#: The benchmark tools servewise reads.
Tool = Literal[
    "vllm-bench-serve",
    "sglang-bench-serving",
    "guidellm",
    "llama-bench",
    "ollama-api",
    "mlx-lm-benchmark",
    "mlx-lm-generate",
]
LoadKind = Literal["single", "rate", "concurrency"]


class SkippedLine(BaseModel):
    """An input line a reader did not use, kept verbatim with the reason (nothing pasted is lost)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    line_no: int = Field(ge=1)
    text: str
    reason: str
    source: str = Field(default="", description="the file it came from, when several were read")


class ImportedRun(BaseModel):
    """One measured load level. Times in milliseconds, rates in tokens per second; None = not reported."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    tool: Tool
    engine: str | None = Field(default=None, description="engine id when the output names it")
    model_label: str = ""
    hardware_label: str = ""
    load_kind: LoadKind = "single"
    load: float | None = Field(default=None, gt=0, description="requests per second (rate) or concurrent requests")
    n_requests: int | None = Field(default=None, ge=0)
    prompt_tokens: float | None = Field(
        default=None, ge=0, description="mean prompt tokens per request, or pp test size"
    )
    output_tokens: float | None = Field(
        default=None, ge=0, description="mean output tokens per request, or tg test size"
    )
    context_tokens: float = Field(
        default=0, ge=0, description="tokens already cached before the test (llama-bench depth)"
    )
    ttft_ms_p50: float | None = None
    ttft_ms_p99: float | None = None
    itl_ms_p50: float | None = None
    tpot_ms_p50: float | None = None
    output_tokens_per_s: float | None = None
    decode_tokens_per_s: float | None = Field(default=None, description="single-stream generation rate")
    prefill_tokens_per_s: float | None = None
    line_no: int = Field(default=1, ge=1, description="where in the pasted text this run starts")


class ImportResult(BaseModel):
    """Every run read from one pasted text, plus every line that was not used and why."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    tool: Tool
    runs: tuple[ImportedRun, ...]
    skipped: tuple[SkippedLine, ...] = ()


@overload
def number(data: dict, key: str, where: str, *, required: Literal[True]) -> float: ...
@overload
def number(data: dict, key: str, where: str, *, required: bool = False) -> float | None: ...
def number(data: dict, key: str, where: str, *, required: bool = False) -> float | None:
    """A finite number from `data[key]`; None if absent; ServewiseInputError naming `where` and the key if bad."""
    if key not in data or data[key] is None:
        if required:
            raise ServewiseInputError(_("{where}: field {key!r} is missing").format(where=where, key=key))
        return None
    value = data[key]
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        if isinstance(value, str) and value.strip().lower() in ("inf", "infinity"):
            return float("inf")
        raise ServewiseInputError(_("{where}: field {key!r} should be a number, got {value!r}").format(
                                    where=where, key=key, value=value))
    if value != value:  # NaN
        raise ServewiseInputError(_("{where}: field {key!r} is not a number (NaN)").format(where=where, key=key))
    return float(value)


def load_json(text: str, what: str) -> object:
    """Parse JSON, turning a syntax error into a message with the line and column."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ServewiseInputError(
            _("{what}: not valid JSON at line {lineno}, column {colno}: {msg}").format(
              what=what, lineno=exc.lineno, colno=exc.colno, msg=json_problem(exc.msg))
        ) from exc


def positive_or_none(value: float | None) -> float | None:
    """Rates and times must be positive to be used; zero means 'not measured' in several tools."""
    return value if value is not None and value > 0 and value != float("inf") else None
