"""The workload a simulated server sees: arrivals, prompt/output lengths, shared prefixes, cancellation.

Everything random comes from one seed, drawn in a fixed order, so every engine compared on the
same `WorkloadSpec` sees the same requests (same lengths; the same arrival times when open-loop).
"""

from __future__ import annotations

import csv
import io
import math
import random
from dataclasses import dataclass
from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field, model_validator

from calculators.errors import ServewiseInputError
from calculators.i18n import _
from calculators.simulator.checked import checked
from calculators.units import number

#: Longer than any context window servewise knows; lengths above it are treated as typing mistakes.
MAX_TOKENS_PER_REQUEST = 10_000_000
#: Largest workload the page may ask for (keeps a run well under a few seconds).
MAX_REQUESTS = 100_000
#: Most rows an uploaded length CSV may have.
MAX_CSV_ROWS = 1_000_000


class ArrivalProcess(StrEnum):
    """How requests arrive."""

    POISSON = "poisson"  # open loop: external demand at a fixed mean rate, whatever the server does
    CLOSED = "closed"  # closed loop: N clients, each waits for its answer, thinks, then asks again


class LengthKind(StrEnum):
    """Shape of a token-length distribution."""

    FIXED = "fixed"
    UNIFORM = "uniform"
    LOGNORMAL = "lognormal"


class LengthDistribution(BaseModel):
    """A token-length distribution: fixed `value`, uniform in [low, high], or lognormal(median, sigma)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: LengthKind = LengthKind.FIXED
    value: int = Field(default=512, ge=1, le=MAX_TOKENS_PER_REQUEST)
    low: int = Field(default=1, ge=1, le=MAX_TOKENS_PER_REQUEST)
    high: int = Field(default=1024, ge=1, le=MAX_TOKENS_PER_REQUEST)
    median: float = Field(default=512, ge=1, le=MAX_TOKENS_PER_REQUEST)
    sigma: float = Field(default=0.8, ge=0, le=4)

    @model_validator(mode="after")
    def _check_range(self) -> LengthDistribution:
        if self.kind is LengthKind.UNIFORM and self.low > self.high:
            raise ValueError(f"uniform lengths need low <= high (got {self.low} > {self.high})")
        return self

    def sample(self, rng: random.Random) -> int:
        """One length in tokens (lognormal samples are clipped to [1, MAX_TOKENS_PER_REQUEST])."""
        if self.kind is LengthKind.FIXED:
            return self.value
        if self.kind is LengthKind.UNIFORM:
            return rng.randint(self.low, self.high)
        drawn = rng.lognormvariate(math.log(self.median), self.sigma)
        return max(1, min(MAX_TOKENS_PER_REQUEST, round(drawn)))


class WorkloadSpec(BaseModel):
    """What clients send: how many requests, when, how long, how much is a shared prefix, when they give up."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    n_requests: int = Field(default=1000, ge=1, le=MAX_REQUESTS)
    arrival: ArrivalProcess = ArrivalProcess.POISSON
    rate_per_s: float = Field(default=2.0, gt=0, le=1e6, description="open loop: mean arrivals per second")
    n_clients: int = Field(default=16, ge=1, le=MAX_REQUESTS, description="closed loop: concurrent clients")
    think_time_s: float = Field(default=0.0, ge=0, description="closed loop: mean pause between answer and next ask")
    prompt: LengthDistribution = LengthDistribution(kind=LengthKind.FIXED, value=512)
    output: LengthDistribution = LengthDistribution(kind=LengthKind.FIXED, value=256)
    length_pairs: tuple[tuple[int, int], ...] | None = Field(
        default=None, description="(prompt, output) token pairs sampled with replacement instead of the distributions"
    )
    shared_prefix_fraction: float = Field(
        default=0.0, ge=0, le=1, description="leading share of each prompt that is common"
    )
    prefix_warm: bool = Field(default=True, description="the shared prefix is already cached when the run starts")
    cancel_after_s: float | None = Field(default=None, gt=0, description="cancel requests with no first token by then")
    seed: int = 0

    @classmethod
    def checked(cls, **fields) -> WorkloadSpec:
        """Build a spec, turning validation failures into a ServewiseInputError naming the field."""
        return checked(cls, "workload", **fields)


@dataclass(frozen=True, slots=True)
class RequestSet:
    """Pre-drawn requests: lengths per request index, and arrival times (open loop) or think times (closed)."""

    prompt_tokens: list[int]
    output_tokens: list[int]
    prefix_tokens: list[int]
    arrival_s: list[float] | None  # open loop only
    think_s: list[float]  # closed loop: pause before request i is sent by its client
    #: requests with the same key send token-identical prompts (a benchmark repeating its prompts); None: all differ
    prompt_keys: list[int] | None = None


def draw_requests(spec: WorkloadSpec) -> RequestSet:
    """Draw every request of a workload from its seed (lengths in tokens, times in seconds)."""
    length_rng = random.Random(spec.seed)
    time_rng = random.Random(spec.seed + 1_000_003)
    n = spec.n_requests
    if spec.length_pairs:
        pairs = spec.length_pairs
        picks = [pairs[length_rng.randrange(len(pairs))] for _ in range(n)]
        prompts = [p for p, _ in picks]
        outputs = [o for _, o in picks]
    else:
        prompts = [spec.prompt.sample(length_rng) for _ in range(n)]
        outputs = [spec.output.sample(length_rng) for _ in range(n)]
    fraction = spec.shared_prefix_fraction
    prefixes = [int(p * fraction) for p in prompts]
    if spec.arrival is ArrivalProcess.POISSON:
        t = 0.0
        arrivals = []
        for _unused in range(n):
            t += time_rng.expovariate(spec.rate_per_s)
            arrivals.append(t)
        return RequestSet(prompts, outputs, prefixes, arrivals, [0.0] * n)
    mean = spec.think_time_s
    think = [time_rng.expovariate(1.0 / mean) if mean > 0 else 0.0 for _ in range(n)]
    return RequestSet(prompts, outputs, prefixes, None, think)


_PROMPT_COLUMNS = ("prompt_tokens", "input_tokens", "prompt", "input", "prompt_len", "input_len")
_OUTPUT_COLUMNS = ("output_tokens", "completion_tokens", "output", "completion", "output_len", "max_tokens")


def parse_length_pairs_csv(data: str | bytes) -> tuple[tuple[int, int], ...]:
    """Parse a CSV of request lengths into (prompt_tokens, output_tokens) pairs.

    The header must name a prompt column (e.g. `prompt_tokens`) and an output column
    (e.g. `output_tokens`); other columns are ignored. Every length must be a positive integer.
    """
    text = data.decode("utf-8-sig", errors="replace") if isinstance(data, bytes) else data.lstrip("\ufeff")
    if not text.strip():
        raise ServewiseInputError(_("the length CSV is empty: it needs a header and at least one row"))
    reader = csv.DictReader(io.StringIO(text))
    header = [name.strip().lower() for name in (reader.fieldnames or [])]
    prompt_col = next((c for c in _PROMPT_COLUMNS if c in header), None)
    output_col = next((c for c in _OUTPUT_COLUMNS if c in header), None)
    if prompt_col is None or output_col is None:
        raise ServewiseInputError(
            _("the length CSV needs a prompt column ({prompt_columns}) and an output column "
              "({output_columns}); its header is: {value}").format(
              prompt_columns=', '.join(_PROMPT_COLUMNS[:2]),
              output_columns=', '.join(_OUTPUT_COLUMNS[:2]),
              value=', '.join(header) or '(nothing)')
        )
    original = {name.strip().lower(): name for name in reader.fieldnames or []}
    pairs: list[tuple[int, int]] = []
    for line_no, row in enumerate(reader, start=2):
        if not any((value or "").strip() for value in row.values() if isinstance(value, str)):
            continue
        prompt = _positive_length(row.get(original[prompt_col]), prompt_col, line_no)
        output = _positive_length(row.get(original[output_col]), output_col, line_no)
        pairs.append((prompt, output))
        if len(pairs) > MAX_CSV_ROWS:
            raise ServewiseInputError(_("the length CSV has more than {max_csv_rows} rows; sample it down "
                                        "first").format(max_csv_rows=number(MAX_CSV_ROWS)))
    if not pairs:
        raise ServewiseInputError(_("the length CSV has a header but no rows"))
    return tuple(pairs)


def _positive_length(raw: str | None, column: str, line_no: int) -> int:
    text = (raw or "").strip()
    try:
        value = float(text)
    except ValueError:
        raise ServewiseInputError(_("length CSV line {line_no}: {column} {text!r} is not a number").format(
                                    line_no=line_no, column=column, text=text)) from None
    if not math.isfinite(value) or value != int(value):
        raise ServewiseInputError(_("length CSV line {line_no}: {column} {text!r} is not a whole number of "
                                    "tokens").format(line_no=line_no, column=column, text=text))
    if value <= 0:
        raise ServewiseInputError(_("length CSV line {line_no}: {column} must be positive (got {text})").format(
                                    line_no=line_no, column=column, text=text))
    if value > MAX_TOKENS_PER_REQUEST:
        raise ServewiseInputError(
            _("length CSV line {line_no}: {column} {text} is above {max_tokens_per_request}\u00a0tokens; check "
              "the units").format(
              line_no=line_no, column=column, text=text, max_tokens_per_request=number(MAX_TOKENS_PER_REQUEST))
        )
    return int(value)
