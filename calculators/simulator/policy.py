"""Scheduler policies of each engine, in the engine's own knob names, reduced to one common rule set.

Each `*Policy` model holds the knobs a team sets on that engine (names from the shared key list).
`scheduler_spec()` turns it into a `SchedulerSpec`, the handful of rules the simulator applies:
how many sequences may run, how many tokens one step may process, whether long prompts are split
across steps, how KV is held (per slot or from a shared pool), what happens when KV runs out, and
whether a prefix cache spares prefill work.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from calculators.errors import ServewiseInputError


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
    max_queue_unenforced: int | None = Field(
        default=None, ge=0, description="a configured queue limit the engine does not apply to this wait"
    )


class _Policy(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class OllamaPolicy(_Policy):
    """Ollama's knobs that shape queueing (defaults from ollama/ollama v0.33.0-rc2, envconfig/config.go).

    Ollama starts llama-server with `-c num_ctx*num_parallel -np num_parallel -b num_batch`
    (llm/llama_server.go), so every slot holds `context_length` tokens of its own. Without context
    shift a prompt of num_ctx tokens or more is refused (HTTP 400) and generation stops at num_ctx.
    """

    engine: Literal["ollama"] = "ollama"
    num_parallel: int = Field(default=1, gt=0, description="OLLAMA_NUM_PARALLEL: slots (default 1)")
    context_length: int = Field(
        default=4096,
        gt=0,
        description=(
            "num_ctx per slot. OLLAMA_CONTEXT_LENGTH unset picks it by total VRAM (server/routes.go): 4096 below "
            "23 GiB, 32768 from 23 GiB, 262144 from 47 GiB, capped at the model's trained context"
        ),
    )
    num_batch: int = Field(default=512, gt=0, description="tokens per llama-server step (api/types.go default 512)")
    max_queue: int = Field(default=512, ge=0, description="OLLAMA_MAX_QUEUE (default 512); beyond it HTTP 503")
    max_queue_applies_to_slot_wait: bool = Field(
        default=False,
        description=(
            "v0.33.0-rc2 checks OLLAMA_MAX_QUEUE only while a request waits for the scheduler "
            "(server/sched.go); with the model loaded, requests wait on the runner's num_parallel "
            "semaphore (llm/llama_server.go) without a limit. True applies the limit to that wait too."
        ),
    )

    def scheduler_spec(self, kv_capacity_tokens: int | None = None) -> SchedulerSpec:
        """Rules for Ollama; KV capacity is num_parallel x context_length (the input is not used)."""
        return SchedulerSpec(
            engine=self.engine,
            max_running=self.num_parallel,
            max_running_knob="num_parallel",
            step_token_budget=self.num_batch,
            step_token_budget_knob="num_batch",
            chunked_prefill=True,
            kv_layout=KvLayout.SLOTS,
            kv_capacity_tokens=self.num_parallel * self.context_length,
            kv_capacity_knob="context_length",
            slot_context_tokens=self.context_length,
            admission=Admission.FREE_SLOT,
            preempt_on_kv_exhaustion=False,
            prefix_reuse=PrefixReuse.PER_SLOT,
            max_queue=self.max_queue if self.max_queue_applies_to_slot_wait else None,
            max_queue_knob="max_queue",
            max_queue_unenforced=None if self.max_queue_applies_to_slot_wait else self.max_queue,
        )


class LlamaCppPolicy(_Policy):
    """llama-server's knobs: `-np` slots share `-c` tokens, each slot gets ctx_size / parallel.

    The unified KV (`-kvu`, which llama-server turns on in its automatic `-np -1` mode) is not
    modelled: here each slot owns its share of the context.
    """

    engine: Literal["llama-cpp"] = "llama-cpp"
    ctx_size: int = Field(default=16384, gt=0, description="-c: KV tokens shared by all slots")
    parallel: int = Field(default=4, gt=0, description="-np: slots")
    batch_size: int = Field(default=2048, gt=0, description="-b: tokens per step (llama-server default 2048)")
    cache_prompt: bool = Field(default=True, description="slots reuse the common prefix of their last prompt")

    def scheduler_spec(self, kv_capacity_tokens: int | None = None) -> SchedulerSpec:
        """Rules for llama-server; KV capacity is ctx_size (the input is not used)."""
        per_slot = self.ctx_size // self.parallel
        if per_slot < 1:
            raise ServewiseInputError(f"ctx_size {self.ctx_size} is smaller than parallel {self.parallel}: each slot needs context")
        return SchedulerSpec(
            engine=self.engine,
            max_running=self.parallel,
            max_running_knob="parallel",
            step_token_budget=self.batch_size,
            step_token_budget_knob="batch_size",
            chunked_prefill=True,
            kv_layout=KvLayout.SLOTS,
            kv_capacity_tokens=per_slot * self.parallel,
            kv_capacity_knob="ctx_size",
            slot_context_tokens=per_slot,
            admission=Admission.FREE_SLOT,
            preempt_on_kv_exhaustion=False,
            prefix_reuse=PrefixReuse.PER_SLOT if self.cache_prompt else PrefixReuse.NONE,
        )


class VllmPolicy(_Policy):
    """vLLM V1 scheduler knobs (defaults for the API server on a < 70 GiB GPU; see research/engines.md).

    Running requests are scheduled first (one token each), then waiting ones within
    max_num_batched_tokens; when a block cannot be allocated the newest running request is preempted
    and later recomputed, and no new request is admitted in that step (vllm/v1/core/sched/scheduler.py).
    The recompute ignores blocks the prefix cache may still hold for it (pessimistic).
    """

    engine: Literal["vllm"] = "vllm"
    max_num_seqs: int = Field(default=256, gt=0)
    max_num_batched_tokens: int = Field(default=2048, gt=0)
    block_size: int = Field(default=16, gt=0)
    enable_chunked_prefill: bool = True
    enable_prefix_caching: bool = True
    max_model_len: int | None = Field(default=None, gt=0, description="prompt + output limit; None = no limit")

    def scheduler_spec(self, kv_capacity_tokens: int | None = None) -> SchedulerSpec:
        """Rules for vLLM; `kv_capacity_tokens` is the 'GPU KV cache size' the memory model gives."""
        capacity = _require_capacity(self.engine, kv_capacity_tokens)
        if self.max_num_batched_tokens < self.max_num_seqs:
            raise ServewiseInputError(
                f"vLLM refuses max_num_batched_tokens ({self.max_num_batched_tokens}) smaller than "
                f"max_num_seqs ({self.max_num_seqs}); raise the token budget or lower max_num_seqs"
            )
        return SchedulerSpec(
            engine=self.engine,
            max_running=self.max_num_seqs,
            max_running_knob="max_num_seqs",
            step_token_budget=self.max_num_batched_tokens,
            step_token_budget_knob="max_num_batched_tokens",
            chunked_prefill=self.enable_chunked_prefill,
            kv_layout=KvLayout.POOL,
            kv_capacity_tokens=capacity,
            kv_capacity_knob="gpu_memory_utilization",
            block_size_tokens=self.block_size,
            max_request_tokens=self.max_model_len,
            admission=Admission.NEXT_CHUNK,
            preempt_on_kv_exhaustion=True,
            prefix_reuse=PrefixReuse.SHARED if self.enable_prefix_caching else PrefixReuse.NONE,
        )


class SglangPolicy(_Policy):
    """SGLang scheduler knobs.

    The scheduler runs a prefill batch whenever one can be formed and decodes only otherwise
    (get_next_batch_to_run in python/sglang/srt/managers/scheduler.py), unless
    `--enable-mixed-chunk`; running decodes therefore pause during prefill batches. The chunked prefill
    size caps the tokens of one prefill batch; decode batches take every running request.

    `init_new_token_ratio` 0.7 is SGLANG_INIT_NEW_TOKEN_RATIO's default (sgl-project/sglang
    python/sglang/srt/environ.py): the share of each running request's remaining output that
    admission keeps free. The engine decays it towards 0.7 x 0.14 over 600 decode steps and raises it
    after a retraction; the simulator keeps it fixed (more conservative admission).
    """

    engine: Literal["sglang"] = "sglang"
    max_running_requests: int = Field(default=2048, gt=0)
    chunked_prefill_size: int = Field(
        default=8192,
        gt=0,
        description="unset, SGLang picks it by GPU memory (server_args.py): 2048 below 35 GiB, 8192 below 160 GiB, "
        "16384 above",
    )
    page_size: int = Field(default=1, gt=0)
    disable_radix_cache: bool = False
    enable_mixed_chunk: bool = Field(default=False, description="run prefill chunks together with decodes")
    context_length: int | None = Field(default=None, gt=0)
    init_new_token_ratio: float = Field(default=0.7, ge=0, le=1)

    def scheduler_spec(self, kv_capacity_tokens: int | None = None) -> SchedulerSpec:
        """Rules for SGLang; `kv_capacity_tokens` is max_total_tokens as the memory model gives it."""
        capacity = _require_capacity(self.engine, kv_capacity_tokens)
        return SchedulerSpec(
            engine=self.engine,
            max_running=self.max_running_requests,
            max_running_knob="max_running_requests",
            step_token_budget=self.chunked_prefill_size,
            step_token_budget_knob="chunked_prefill_size",
            chunked_prefill=True,
            mixed_prefill_decode=self.enable_mixed_chunk,
            kv_layout=KvLayout.POOL,
            kv_capacity_tokens=capacity,
            kv_capacity_knob="mem_fraction_static",
            block_size_tokens=self.page_size,
            max_request_tokens=self.context_length,
            admission=Admission.PROMPT_PLUS_RESERVE,
            output_reserve_ratio=self.init_new_token_ratio,
            preempt_on_kv_exhaustion=True,
            prefix_reuse=PrefixReuse.NONE if self.disable_radix_cache else PrefixReuse.SHARED,
        )


class StaticBatchPolicy(_Policy):
    """Baseline without iteration-level scheduling: a batch starts only when the previous one ends."""

    engine: Literal["static"] = "static"
    batch_size: int = Field(default=8, gt=0)

    def scheduler_spec(self, kv_capacity_tokens: int | None = None) -> SchedulerSpec:
        """Rules for the static baseline; it reserves prompt + output KV for every batch member."""
        capacity = _require_capacity(self.engine, kv_capacity_tokens)
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


EnginePolicy = Annotated[
    OllamaPolicy | LlamaCppPolicy | VllmPolicy | SglangPolicy | StaticBatchPolicy,
    Field(discriminator="engine"),
]

#: Engine ids the simulator knows, in the order pages list them.
SIMULATED_ENGINES: tuple[str, ...] = ("ollama", "llama-cpp", "vllm", "sglang", "static")

_POLICY_BY_ENGINE: dict[str, type[_Policy]] = {
    "ollama": OllamaPolicy,
    "llama-cpp": LlamaCppPolicy,
    "vllm": VllmPolicy,
    "sglang": SglangPolicy,
    "static": StaticBatchPolicy,
}


def default_policy(engine: str) -> OllamaPolicy | LlamaCppPolicy | VllmPolicy | SglangPolicy | StaticBatchPolicy:
    """The policy an engine runs with when no knob is changed."""
    try:
        return _POLICY_BY_ENGINE[engine]()
    except KeyError:
        raise ServewiseInputError(f"unknown engine {engine!r}; choose one of {', '.join(SIMULATED_ENGINES)}") from None


def _require_capacity(engine: str, kv_capacity_tokens: int | None) -> int:
    if kv_capacity_tokens is None or kv_capacity_tokens <= 0:
        raise ServewiseInputError(f"{engine}: KV capacity must be a positive number of tokens (got {kv_capacity_tokens})")
    return int(kv_capacity_tokens)
