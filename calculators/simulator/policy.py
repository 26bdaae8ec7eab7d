"""The common rule set every engine's scheduler policy reduces to, and the static-batching baseline.

Each engine's policy model (`calculators/engines/<engine>/scheduler.py`) holds the knobs a team sets on
that engine (names from the shared key list).
`scheduler_spec()` turns it into a `SchedulerSpec`, the handful of rules the simulator applies:
how many sequences may run, how many tokens one step may process, whether long prompts are split
across steps, how KV is held (per slot or from a shared pool), what happens when KV runs out, and
whether a prefix cache spares prefill work.
"""

from __future__ import annotations

from enum import StrEnum
from typing import TYPE_CHECKING, Final, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from calculators.errors import ServewiseInputError
from calculators.i18n import _
from calculators.memory.plan import PlanNote
from calculators.simulator.roofline import PrefillSteps

#: The baseline the simulator offers besides the engines: no iteration-level scheduling.
STATIC_BASELINE: Final = "static"


class KvLayout(StrEnum):
    """How an engine holds KV for its running sequences."""

    SLOTS = "slots"  # preallocated per slot (llama-server, Ollama): a slot never runs out mid-request
    POOL = "pool"  # one shared pool of tokens/blocks (vLLM, SGLang, static baseline)


class PrefixReuse(StrEnum):
    """Which prefix cache spares prefill work for token-identical prompt prefixes."""

    NONE = "none"
    SHARED = "shared"  # one copy in a shared cache (vLLM automatic prefix caching, SGLang radix cache)
    PER_SLOT = "per-slot"  # each slot keeps its last prompt (llama-server cache_prompt); no KV sharing


class Admission(StrEnum):
    """How much free KV a waiting request needs before it is admitted."""

    NEXT_CHUNK = "next-chunk"  # vLLM: blocks for the tokens scheduled this step only (optimistic)
    PROMPT_PLUS_RESERVE = "prompt-plus-reserve"  # SGLang: prompt + a share of the expected output
    FULL_REQUEST = "full-request"  # static baseline: prompt + whole output reserved up front
    FREE_SLOT = "free-slot"  # slot engines: a free slot is enough, its KV is already allocated
    UNCHECKED = "unchecked"  # no memory check at all: the cache grows until memory runs out (MLX LM)


class SchedulerSpec(BaseModel):
    """Engine-neutral scheduling rules the simulator applies (tokens, sequences, seconds)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    engine: str
    max_running: int = Field(gt=0, description="sequences that may run at once (slots, max_num_seqs, ...)")
    max_running_knob: str = Field(description="knob that sets max_running, for diagnostics")
    step_token_budget: int | None = Field(gt=0, description="tokens one step may process; None = unlimited")
    step_token_budget_knob: str | None = None
    chunked_prefill: bool = Field(description="a prompt may be split across steps within the token budget")
    mixed_prefill_decode: bool = Field(
        default=True, description="prefill chunks ride in the same step as decodes (False: prefill batches run alone)"
    )
    kv_layout: KvLayout
    kv_capacity_tokens: int = Field(gt=0, description="KV tokens the engine can hold in all")
    kv_capacity_knob: str
    slot_context_tokens: int | None = Field(default=None, gt=0, description="per-slot context (slot engines)")
    block_size_tokens: int = Field(default=1, gt=0, description="KV allocation granularity")
    max_request_tokens: int | None = Field(default=None, gt=0, description="prompt + output limit per request")
    admission: Admission
    output_reserve_ratio: float = Field(default=0.0, ge=0, le=1, description="SGLang new_token_ratio")
    preempt_on_kv_exhaustion: bool = Field(description="recompute-preempt the newest request when KV runs out")
    prefix_reuse: PrefixReuse
    static_batch: bool = Field(default=False, description="a batch starts only when the previous one finished")
    max_queue: int | None = Field(default=None, ge=0, description="waiting requests beyond this are rejected")
    max_queue_knob: str | None = None
    single_slot_note: PlanNote | None = Field(
        default=None, description="what to tell a team whose requests queue behind one slot (the engine's default)"
    )
    max_queue_scope_note: tuple[str, str] | None = Field(
        default=None, description="(code, message with {peak} and {limit}) when more waited than an unenforced limit"
    )
    max_queue_unenforced: int | None = Field(
        default=None, ge=0, description="a configured queue limit the engine does not apply to this wait"
    )
    prefill_chunk_tokens: int | None = Field(
        default=None, gt=0, description="prompt tokens one sequence processes per step at most (None: no own cap)"
    )
    max_prefilling: int | None = Field(
        default=None, gt=0, description="sequences processing their prompt at once (None: only max_running caps it)"
    )
    max_prefilling_knob: str | None = None
    decode_then_prefill: bool = Field(
        default=False,
        description="each step is a decode pass over the decoding sequences, then (unless they fill max_running) "
        "admission up to max_running decoders and max_prefilling prompts, a one-token pass handing prompts with one "
        "token left to the decoders, and a prompt pass; every pass reads the weights and pays the step overhead",
    )
    outputs_returned_next_step: bool = Field(
        default=False,
        description="the host processes a step's outputs (sampled tokens appended, detokenised, streamed) while the "
        "next step runs on the device: each step spends the host time per sequence of the previous step's sequences, "
        "and a step's first tokens and finishes reach the client when the next step ends",
    )
    graph_max_batch: int | None = Field(
        default=None, ge=0, description="decode batches of more sequences than this run without a CUDA graph (eagerly: "
        "the host launches every kernel of the forward pass); None: every decode step replays a graph, or the engine "
        "has no graph to fall back from",
    )
    graph_max_batch_knob: str | None = None
    eager_host_s_per_layer: float = Field(
        default=0.0, ge=0, description="host seconds to launch one layer's kernels in an eager forward pass: an eager "
        "decode step takes at least this times the model's layers (a kernel runs only once it is launched), and the "
        "GPU's own time when that is longer",
    )
    kv_overflow_note: tuple[str, str] | None = Field(
        default=None, description="(code, message with {capacity} and {peak}) when the KV held outgrew the capacity "
        "(engines that do not check memory before admitting)",
    )

    @model_validator(mode="after")
    def _slots_have_a_context(self) -> SchedulerSpec:
        if self.kv_layout is KvLayout.SLOTS and self.slot_context_tokens is None:
            raise ValueError(f"{self.engine}: a slot layout needs slot_context_tokens (each slot's context)")
        if self.admission is Admission.UNCHECKED and self.preempt_on_kv_exhaustion:
            raise ValueError(f"{self.engine}: an engine that does not check memory cannot preempt on it")
        if self.decode_then_prefill and (self.admission is not Admission.UNCHECKED
                                         or self.prefix_reuse is not PrefixReuse.NONE):
            raise ValueError(f"{self.engine}: decode-then-prefill steps are modelled without a memory check at "
                             "admission and without prefix reuse")
        if self.decode_then_prefill and self.graph_max_batch is not None:
            raise ValueError(f"{self.engine}: a CUDA-graph batch cap is modelled on the prefill-or-decode step loop "
                             "only")
        return self


class SchedulerPolicy(BaseModel):
    """An engine's scheduling knobs; `scheduler_spec()` reduces them to the simulator's `SchedulerSpec`."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    if TYPE_CHECKING:  # every subclass defines it; declared for the type checker only (no runtime change)

        def scheduler_spec(self, kv_capacity_tokens: int | None = None) -> SchedulerSpec: ...

    @property
    def host_work_per_sequence_in_step(self) -> bool:
        """True when the engine processes every running sequence's output on the host inside each step, in the
        process that schedules and launches it (so the host time grows with the batch and the GPU waits for it).
        A serving calibration then starts from a per-sequence host overhead (calculators/speed/calibrate.py)."""
        return False


class StaticBatchPolicy(SchedulerPolicy):
    """Baseline without iteration-level scheduling: a batch starts only when the previous one ends."""

    engine: Literal["static"] = STATIC_BASELINE
    batch_size: int = Field(default=8, gt=0)

    def scheduler_spec(self, kv_capacity_tokens: int | None = None) -> SchedulerSpec:
        """Rules for the static baseline; it reserves prompt + output KV for every batch member."""
        capacity = require_capacity(self.engine, kv_capacity_tokens)
        return SchedulerSpec(
            engine=self.engine,
            max_running=self.batch_size,
            max_running_knob="batch_size",
            step_token_budget=None,
            chunked_prefill=False,
            kv_layout=KvLayout.POOL,
            kv_capacity_tokens=capacity,
            kv_capacity_knob="kv_capacity_tokens",
            admission=Admission.FULL_REQUEST,
            preempt_on_kv_exhaustion=False,
            prefix_reuse=PrefixReuse.NONE,
            static_batch=True,
        )


def require_capacity(engine: str, kv_capacity_tokens: int | None) -> int:
    if kv_capacity_tokens is None or kv_capacity_tokens <= 0:
        raise ServewiseInputError(
            _("{engine}: KV capacity must be a positive number of tokens (got {kv_capacity_tokens})").format(
              engine=engine, kv_capacity_tokens=kv_capacity_tokens)
        )
    return int(kv_capacity_tokens)


def lone_prompt_steps(policy: SchedulerPolicy, kv_capacity_tokens: int | None) -> PrefillSteps:
    """How an idle engine of `policy` (its KV capacity `kv_capacity_tokens`) cuts one prompt running alone into
    steps: the step's token budget or the engine's per-sequence chunk cap, the smaller, when it splits prompts
    across steps (else one pass), and the last token in a step of its own on a decode-then-prefill engine."""
    spec = policy.scheduler_spec(kv_capacity_tokens)
    caps = [cap for cap in (spec.step_token_budget, spec.prefill_chunk_tokens) if cap is not None]
    chunk = min(caps) if caps and spec.chunked_prefill else None
    return PrefillSteps(chunk_tokens=chunk, last_token_apart=spec.decode_then_prefill)
