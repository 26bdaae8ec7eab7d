"""Time of one engine step (one forward pass) from a roofline of the accelerator: an estimate.

A step processes `tokens` new tokens (decode tokens plus prefill chunk tokens) and reads the KV of
every scheduled sequence. Two lower bounds apply:

- memory: the weights are streamed once per step, plus the KV the attention reads:
  (weights_bytes + kv_bytes_per_token x kv_read_tokens) / (bandwidth x memory_efficiency)
- compute: about 2 x active parameters FLOPs per token: 2 x P x tokens / (flops x compute_efficiency)

One fused forward pass overlaps weight streaming with the matrix multiplications, so the step takes
the larger of the two (the roofline), plus a fixed per-step overhead and a host overhead per scheduled
sequence (scheduler, sampler, detokenizer: 0 unless a speed calibration fitted it, calculators/speed).
Attention FLOPs (quadratic in context) are left out, so long prompts are estimated optimistic.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

#: Decode (memory-bound) efficiency. The llama.cpp CUDA scoreboard (ggml-org/llama.cpp discussion
#: #15013, Llama-2 7B Q4_0 tg128, summarised in research/hardware.md) implies 0.6-0.72 of peak
#: bandwidth on consumer cards and 0.3-0.5 on HBM data-centre GPUs at batch 1. 0.6 is a mid value.
DEFAULT_MEMORY_EFFICIENCY = 0.6

#: Prefill (compute-bound) model-FLOPs utilisation: an assumption. Pope et al., "Efficiently Scaling
#: Transformer Inference" (MLSys 2023) report 76 % MFU for large-batch prefill of PaLM 540B on TPU v4,
#: an upper reference; 0.5 leaves room for smaller models and less tuned kernels.
DEFAULT_COMPUTE_EFFICIENCY = 0.5


class StepCostModel(BaseModel):
    """Accelerator and model figures the step time is estimated from (bytes, FLOP/s, seconds)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    memory_bandwidth_bytes_per_s: float = Field(gt=0)
    flops_per_s: float = Field(gt=0, description="dense FLOP/s at the weights' compute precision")
    weights_bytes: float = Field(ge=0, description="weight bytes read once per step")
    active_params: float = Field(gt=0, description="parameters used per token (MoE: active, not total)")
    kv_bytes_per_token: float = Field(ge=0)
    memory_efficiency: float = Field(default=DEFAULT_MEMORY_EFFICIENCY, gt=0, le=1)
    compute_efficiency: float = Field(default=DEFAULT_COMPUTE_EFFICIENCY, gt=0, le=1)
    step_overhead_s: float = Field(default=0.0, ge=0, description="fixed time per step (scheduling, launches)")
    per_sequence_overhead_s: float = Field(
        default=0.0, ge=0, description="host time per scheduled sequence per step (scheduler, sampler, detokenizer)"
    )

    @property
    def rates(self) -> tuple[float, float, float, float, float]:
        """(weights read s per step, KV read s per token, compute s per token, overhead s per step, s per sequence)."""
        bandwidth = self.memory_bandwidth_bytes_per_s * self.memory_efficiency
        return (
            self.weights_bytes / bandwidth,
            self.kv_bytes_per_token / bandwidth,
            2.0 * self.active_params / (self.flops_per_s * self.compute_efficiency),
            self.step_overhead_s,
            self.per_sequence_overhead_s,
        )

    def step_seconds(self, tokens: int, kv_read_tokens: float, n_seqs: int = 0) -> float:
        """Seconds one step takes for `tokens` new tokens of `n_seqs` sequences reading `kv_read_tokens` of KV."""
        return step_seconds(self.rates, tokens, kv_read_tokens, n_seqs)

    def decode_span_seconds(self, steps: int, n_seqs: int, kv_read_tokens_first: float) -> float:
        """Seconds for `steps` pure-decode steps of `n_seqs` sequences whose KV read grows by n_seqs a step."""
        return decode_span_seconds(self.rates, steps, n_seqs, kv_read_tokens_first)


def step_seconds(
    rates: tuple[float, float, float, float, float], tokens: int, kv_read_tokens: float, n_seqs: int = 0
) -> float:
    """Roofline step time in seconds from `StepCostModel.rates` (plain function: the simulator's hot path)."""
    weights_s, kv_s, flop_s, overhead_s, per_seq_s = rates
    memory_s = weights_s + kv_s * kv_read_tokens
    compute_s = flop_s * tokens
    return (memory_s if memory_s > compute_s else compute_s) + overhead_s + per_seq_s * n_seqs


def decode_span_seconds(
    rates: tuple[float, float, float, float, float], steps: int, n_seqs: int, kv_read_tokens_first: float
) -> float:
    """Closed form of the sum over j < steps of step_seconds(n_seqs, kv_read_tokens_first + n_seqs x j)."""
    if steps <= 0:
        return 0.0
    weights_s, kv_s, flop_s, overhead_s, per_seq_s = rates
    m0 = weights_s + kv_s * kv_read_tokens_first
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
    return j_switch * compute_s + memory_sum + steps * (overhead_s + per_seq_s * n_seqs)
