"""Time of one engine step (one forward pass) from a roofline of the accelerator: an estimate.

A step processes `tokens` new tokens (decode tokens plus prefill chunk tokens) and reads the KV of
every scheduled sequence. Two lower bounds apply:

- memory: the weights are streamed once per step, plus the KV the attention reads:
  (weights_bytes + expert bytes touched + kv_bytes_per_token x kv_read_tokens) / (bandwidth x memory_efficiency)
  where a mixture-of-experts model's routed experts are read only when a token of the step picks them:
  with each token choosing a share s = active / total routed experts, a step of t tokens touches
  1 - (1 - s)^t of them (routing taken as independent per token: an estimate; batch 1 reads the active
  experts only, a large batch reads them all)
- compute: about 2 x active parameters FLOPs per token, plus causal attention over the prefill chunks
  (4 x layers x query dim FLOPs per (query, key) pair): (2 x P x tokens + attention) / (flops x compute_efficiency)

One fused forward pass overlaps weight streaming with the matrix multiplications, so the step takes
the larger of the two (the roofline), plus a fixed per-step overhead and a host overhead per scheduled
sequence (scheduler, sampler, detokenizer: 0 unless a speed calibration fitted it, calculators/speed).
Tensor parallelism adds its all-reduce traffic per token, after the roofline (layers wait for it).
A request's handling outside the steps (HTTP, tokenisation: `request_overhead_s`) is added to its first-
token and finish times. Decode attention FLOPs are left out (a decode step reads each cached token's KV,
which takes far longer than its attention arithmetic).
"""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict, Field

#: Decode (memory-bound) efficiency. The llama.cpp CUDA scoreboard (ggml-org/llama.cpp discussion
#: #15013, Llama-2 7B Q4_0 tg128, summarised in research/hardware.md) implies 0.6-0.72 of peak
#: bandwidth on consumer cards and 0.3-0.5 on HBM data-centre GPUs at batch 1. 0.6 is a mid value.
DEFAULT_MEMORY_EFFICIENCY = 0.6

#: Model-FLOPs utilisation Pope et al., "Efficiently Scaling Transformer Inference" (MLSys 2023) report for
#: large-batch prefill of PaLM 540B on TPU v4: an upper reference, quoted where the assumption below is typed.
POPE_PREFILL_MFU = 0.76

#: Prefill (compute-bound) model-FLOPs utilisation: an assumption, below POPE_PREFILL_MFU to leave room for smaller
#: models and less tuned kernels.
DEFAULT_COMPUTE_EFFICIENCY = 0.5


#: `StepCostModel.rates`: the per-step, per-token and per-pair seconds the hot path multiplies.
Rates = tuple[float, float, float, float, float, float, float, float, float]


class StepCostModel(BaseModel):
    """Accelerator and model figures the step time is estimated from (bytes, FLOP/s, seconds)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    memory_bandwidth_bytes_per_s: float = Field(gt=0)
    flops_per_s: float = Field(gt=0, description="dense FLOP/s at the weights' compute precision")
    weights_bytes: float = Field(ge=0, description="weight bytes read every step (MoE: all but the routed experts)")
    expert_weights_bytes: float = Field(
        default=0.0, ge=0, description="bytes of the routed experts, read only as far as a step's tokens pick them"
    )
    expert_share_per_token: float = Field(
        default=0.0, ge=0, le=1, description="share of the routed experts one token uses (active / total experts)"
    )
    attention_flops_per_pair: float = Field(
        default=0.0, ge=0, description="FLOPs per (query, cached key) pair of a prefill: 4 x layers x query dim"
    )
    request_overhead_s: float = Field(
        default=0.0, ge=0, description="seconds of request handling outside the steps, added to TTFT and finish"
    )
    allreduce_s_per_token: float = Field(
        default=0.0, ge=0, description="tensor parallel: all-reduce seconds per token of a step (not overlapped)"
    )
    active_params: float = Field(gt=0, description="parameters used per token (MoE: active, not total)")
    kv_bytes_per_token: float = Field(ge=0)
    memory_efficiency: float = Field(default=DEFAULT_MEMORY_EFFICIENCY, gt=0, le=1)
    compute_efficiency: float = Field(default=DEFAULT_COMPUTE_EFFICIENCY, gt=0, le=1)
    step_overhead_s: float = Field(default=0.0, ge=0, description="fixed time per step (scheduling, launches)")
    per_sequence_overhead_s: float = Field(
        default=0.0, ge=0, description="host time per scheduled sequence per step (scheduler, sampler, detokenizer)"
    )
    eager_host_scale: float = Field(
        default=1.0, gt=0, description="factor on the engine's eager launch time per layer (a calibration's)"
    )
    n_layers: int = Field(
        default=0, ge=0, description="transformer layers one forward pass runs (0: unknown; an engine's eager "
        "decode step then has no host launch floor, SchedulerSpec.eager_host_s_per_layer)"
    )

    @property
    def rates(self) -> Rates:
        """(weights read s per step, KV read s per token, compute s per token, overhead s per step, s per sequence,
        all routed experts' read s, expert share per token, attention s per prefill pair, all-reduce s per token)."""
        bandwidth = self.memory_bandwidth_bytes_per_s * self.memory_efficiency
        flops = self.flops_per_s * self.compute_efficiency
        return (
            self.weights_bytes / bandwidth,
            self.kv_bytes_per_token / bandwidth,
            2.0 * self.active_params / flops,
            self.step_overhead_s,
            self.per_sequence_overhead_s,
            self.expert_weights_bytes / bandwidth,
            self.expert_share_per_token,
            self.attention_flops_per_pair / flops,
            self.allreduce_s_per_token,
        )

    def step_seconds(self, tokens: int, kv_read_tokens: float, n_seqs: int = 0, prefill_pairs: float = 0.0) -> float:
        """Seconds one step takes for `tokens` new tokens of `n_seqs` sequences reading `kv_read_tokens` of KV,
        with `prefill_pairs` (query, key) pairs of prefill attention."""
        return step_seconds(self.rates, tokens, kv_read_tokens, n_seqs, prefill_pairs)

    def decode_span_seconds(self, steps: int, n_seqs: int, kv_read_tokens_first: float) -> float:
        """Seconds for `steps` pure-decode steps of `n_seqs` sequences whose KV read grows by n_seqs a step."""
        return decode_span_seconds(self.rates, steps, n_seqs, kv_read_tokens_first)


def experts_touched_share(share_per_token: float, tokens: int) -> float:
    """Share of the routed experts a step of `tokens` tokens reads, each token picking `share_per_token` of them."""
    if share_per_token <= 0.0 or tokens <= 0:
        return 0.0
    return 1.0 - (1.0 - share_per_token) ** tokens


def step_seconds(
    rates: Rates, tokens: int, kv_read_tokens: float, n_seqs: int = 0, prefill_pairs: float = 0.0
) -> float:
    """Roofline step time in seconds from `StepCostModel.rates` (plain function: the simulator's hot path)."""
    weights_s, kv_s, flop_s, overhead_s, per_seq_s, expert_s, share, pair_s, comm_s = rates
    memory_s = weights_s + kv_s * kv_read_tokens
    if expert_s:
        memory_s += expert_s * experts_touched_share(share, tokens)
    compute_s = flop_s * tokens + pair_s * prefill_pairs
    return (memory_s if memory_s > compute_s else compute_s) + overhead_s + per_seq_s * n_seqs + comm_s * tokens


def prefill_pairs(chunk_tokens: float, context_tokens: float) -> float:
    """(query, key) pairs of causal attention in a prefill chunk of `chunk_tokens` new tokens whose last token sits
    at position `context_tokens` (the chunk included): each query sees the keys cached before the chunk and the
    chunk's own up to itself, c x (context - c / 2). The chunks of a prompt sum to n^2 / 2 pairs however it is cut,
    and a chunk late in a long prompt costs more than the same chunk early (engines attend over the cached prefix:
    vLLM and SGLang chunked prefill, llama.cpp's micro-batches, MLX LM's prefill steps)."""
    return chunk_tokens * (context_tokens - chunk_tokens / 2.0)


def prefill_chunk_seconds(rates: Rates, chunk_tokens: int, context_tokens: float) -> float:
    """Seconds of a step that runs one prefill chunk alone: `chunk_tokens` new tokens ending at position
    `context_tokens`, reading that much KV (the one cost both the simulator and the speed estimate use)."""
    return step_seconds(rates, chunk_tokens, context_tokens, 1, prefill_pairs(chunk_tokens, context_tokens))


@dataclass(frozen=True)
class PrefillSteps:
    """How an engine's steps prefill one prompt running alone (`simulator.policy.lone_prompt_steps`)."""

    #: most prompt tokens one step processes (None: the whole prompt in one step)
    chunk_tokens: int | None = None
    #: the prompt's last token runs in a step of its own, the one that computes the first output token (MLX LM's
    #: generate_step prefills all but the last token; the simulator's decode-then-prefill loop hands it over)
    last_token_apart: bool = False


#: One pass over the whole prompt.
ONE_PASS = PrefillSteps()


def lone_prefill_seconds(rates: Rates, prompt_tokens: int, steps: PrefillSteps = ONE_PASS) -> float:
    """Seconds of the steps that prefill one prompt of `prompt_tokens` alone on an idle engine, cut as `steps`
    says: the sum of `prefill_chunk_seconds` over its chunks. Request handling outside the steps is not included."""
    apart = 1 if steps.last_token_apart and prompt_tokens > 1 else 0
    chunked = prompt_tokens - apart
    step = chunked if steps.chunk_tokens is None else max(1, min(steps.chunk_tokens, chunked))
    total = 0.0
    done = 0
    while done < chunked:
        chunk = min(step, chunked - done)
        done += chunk
        total += prefill_chunk_seconds(rates, chunk, done)
    if apart:
        total += prefill_chunk_seconds(rates, 1, prompt_tokens)
    return total


def decode_span_seconds(rates: Rates, steps: int, n_seqs: int, kv_read_tokens_first: float) -> float:
    """Closed form of the sum over j < steps of step_seconds(n_seqs, kv_read_tokens_first + n_seqs x j)."""
    if steps <= 0:
        return 0.0
    weights_s, kv_s, flop_s, overhead_s, per_seq_s, expert_s, share, _pair_s, comm_s = rates
    m0 = weights_s + kv_s * kv_read_tokens_first + expert_s * experts_touched_share(share, n_seqs)
    slope = kv_s * n_seqs
    compute_s = flop_s * n_seqs
    # steps whose memory time is below the compute time are compute-bound: j < j_switch
    if m0 >= compute_s:
        j_switch = 0
    elif slope <= 0:
        j_switch = steps
    else:
        # an astronomically compute-bound model (absurd parameter counts) stays compute-bound throughout
        crossing = (compute_s - m0) / slope
        j_switch = steps if not crossing < steps else int(crossing) + 1
        while j_switch > 0 and m0 + slope * (j_switch - 1) >= compute_s:  # float edge
            j_switch -= 1
    memory_steps = steps - j_switch
    memory_sum = memory_steps * m0 + slope * (j_switch + steps - 1) * memory_steps / 2.0
    return j_switch * compute_s + memory_sum + steps * (overhead_s + (per_seq_s + comm_s) * n_seqs)
