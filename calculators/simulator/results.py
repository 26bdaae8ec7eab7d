"""What a simulation run returns: per-request records, latency distributions, time series, diagnostics.

All times are seconds from the start of the run; all figures are estimates from the step-time
roofline and the scheduling rules, never measurements.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field

from calculators.memory.plan import PlanNote


class RequestStatus(StrEnum):
    """How a request ended."""

    FINISHED = "finished"
    REJECTED = "rejected"
    CANCELLED = "cancelled"


class RejectReason(StrEnum):
    """Why a request was refused at arrival."""

    QUEUE_FULL = "queue_full"  # max_queue waiting requests already (Ollama answers HTTP 503)
    EXCEEDS_CONTEXT = "exceeds_context"  # prompt (+ output) longer than the per-request context limit
    EXCEEDS_KV = "exceeds_kv"  # prompt + output larger than the whole KV capacity
    EXCEEDS_TOKEN_BUDGET = "exceeds_token_budget"  # prompt + output above the step budget without chunked prefill


#: Below this share of the run with a non-empty queue, no limit is reported as binding.
QUEUE_NEGLIGIBLE_SHARE = 0.02


class Constraint(StrEnum):
    """What kept the head of the queue waiting (a limit of the engine's configuration)."""

    NONE = "none"
    MAX_RUNNING = "max_running"  # slots / max_num_seqs / max_running_requests / batch size all taken
    KV_CAPACITY = "kv_capacity"  # not enough free KV (including steps paused by a preemption)
    TOKEN_BUDGET = "token_budget"  # the step's token budget was used up by decodes and other prefills
    STATIC_BATCH = "static_batch"  # the static baseline waits for the whole batch to finish
    PREFILL_SLOTS = "prefill_slots"  # every place for a prompt in progress was taken (MLX LM's prompt_concurrency)


class Slo(BaseModel):
    """Latency targets a request must meet to count towards goodput (seconds)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    ttft_s: float = Field(default=2.0, gt=0, description="time to first token target")
    itl_s: float = Field(default=0.1, gt=0, description="mean inter-token latency target")


@dataclass(frozen=True, slots=True)
class RequestRecord:
    """One request's life in the simulated server (seconds from run start; tokens)."""

    index: int
    arrival_s: float
    prompt_tokens: int
    output_tokens: int  # what the client asked for
    generated_tokens: int
    status: RequestStatus
    end_s: float  # finish, rejection or cancellation time
    admit_s: float | None = None  # first admission into the running batch
    first_token_s: float | None = None
    preemptions: int = 0
    prefix_hit_tokens: int = 0  # prompt tokens served from a prefix cache at the last admission
    truncated: bool = False  # generation stopped at the slot's context limit
    reject_reason: RejectReason | None = None

    @property
    def queue_s(self) -> float | None:
        """Seconds from arrival to first admission."""
        return None if self.admit_s is None else self.admit_s - self.arrival_s

    @property
    def ttft_s(self) -> float | None:
        """Seconds from arrival to the first output token."""
        return None if self.first_token_s is None else self.first_token_s - self.arrival_s

    @property
    def e2e_s(self) -> float | None:
        """Seconds from arrival to the last token (finished requests only)."""
        return self.end_s - self.arrival_s if self.status is RequestStatus.FINISHED else None

    @property
    def itl_s(self) -> float | None:
        """Mean seconds between output tokens after the first (finished requests with >= 2 tokens)."""
        if self.status is not RequestStatus.FINISHED or self.generated_tokens < 2 or self.first_token_s is None:
            return None
        return (self.end_s - self.first_token_s) / (self.generated_tokens - 1)


@dataclass(frozen=True, slots=True)
class Distribution:
    """Percentiles of a latency in seconds over the requests that have it."""

    count: int
    mean: float
    p50: float
    p90: float
    p99: float
    max: float


@dataclass(frozen=True, slots=True)
class Summary:
    """Headline figures of one run (seconds, requests per second, tokens per second)."""

    n_requests: int
    n_finished: int
    n_rejected: int
    n_cancelled: int
    n_preemptions: int
    duration_s: float  # first arrival to last request end
    throughput_rps: float  # finished requests per second
    output_tokens_per_s: float
    goodput_rps: float  # finished requests meeting both SLO targets, per second
    slo: Slo
    queue: Distribution | None
    ttft: Distribution | None
    itl: Distribution | None
    e2e: Distribution | None


@dataclass(frozen=True, slots=True)
class TimeSeries:
    """Queue, running sequences and KV use over time, downsampled (max per bucket) for plotting."""

    t_s: list[float]
    queued: list[int]
    active: list[int]
    kv_used_tokens: list[float]


@dataclass(frozen=True, slots=True)
class Diagnostics:
    """Which configured limit held requests in the queue, and how close each limit came to binding."""

    binding: Constraint  # NONE when the queue was non-empty less than QUEUE_NEGLIGIBLE_SHARE of the run
    queued_time_s: float  # time with at least one request waiting
    blocked_time_s: dict[Constraint, float]  # of queued_time_s, per limit that stopped the queue head
    max_running: int
    max_running_knob: str
    peak_active: int
    mean_active: float
    step_token_budget: int | None
    step_token_budget_knob: str | None
    kv_capacity_tokens: int
    kv_capacity_knob: str
    peak_kv_used_tokens: float
    mean_kv_used_tokens: float
    kv_concurrency_estimate: float  # KV capacity / mean tokens a request holds at its midpoint
    busy_fraction: float  # share of the run the engine was stepping
    n_preemptions: int
    n_steps: int
    decode_stall_s: float  # time prefill batches ran alone while other sequences waited to decode
    kv_overflow_tokens: float = 0.0  # most KV tokens held beyond the capacity (engines that admit unchecked)
    decode_steps: int = 0  # steps that decoded (alone or with prefill chunks)
    eager_decode_steps: int = 0  # decode-only steps above the CUDA-graph batch cap (SchedulerSpec.graph_max_batch)
    eager_step_floor_s: float = 0.0  # the host's launch time of one eager forward pass (0: not modelled)


@dataclass(frozen=True, slots=True)
class StepTrace:
    """One simulated step: when it started (s), who decoded, who was handed to the decoders, prompt chunks."""

    start_s: float
    decoded: tuple[int, ...]  # request indices, ascending
    handed_over: tuple[int, ...]
    prefilled: tuple[tuple[int, int], ...]  # (request index, prompt tokens processed)


@dataclass(frozen=True, slots=True)
class SimulationResult:
    """Everything one simulated run produced for one engine on one workload (estimates)."""

    engine: str
    records: list[RequestRecord]
    summary: Summary
    timeseries: TimeSeries
    diagnostics: Diagnostics
    notes: list[PlanNote] = field(default_factory=list)  # plain-language notes tying results to knobs
