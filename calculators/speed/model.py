"""Step time of one forward pass from bytes read, FLOPs and a few fitted efficiencies (an estimate).

A decode step of `batch` sequences, each with `context_tokens` of KV already cached, costs

    overhead_s + per_sequence_overhead_s x batch + launch_s x graph-less kernel launches + max(memory_s, compute_s)
    memory_s  = (weights read + batch x context x KV bytes per token) / (bandwidth x memory_efficiency)
    (a mixture-of-experts model reads its dense part and the routed experts the batch's tokens pick)
    compute_s = (2 x active params x batch + attention FLOPs) / (flops x compute_efficiency)

where attention FLOPs are 4 x layers x query dim per context token per sequence (QK^T and AV, 2 flops
per multiply-add). A prompt of n tokens alone on an idle engine reaches its first token after

    max(0, prefill_overhead_s - overhead_s) + the sum over the engine's prefill chunks of one step each:
    overhead_s + max((weights read + context x KV bytes per token) / (bandwidth x memory_efficiency),
                     (2 x active params x c + 4 x layers x query dim x c x (context - c / 2)) / (flops x compute_eff.))

for a chunk of c tokens ending at position `context` (calculators/simulator/roofline.py lone_prefill_seconds, the
simulator's own steps): however the prompt is cut, its chunks touch n^2 / 2 (query, key) pairs, the causal
attention of one pass; each chunk adds a step's overhead and weight read. The efficiencies and overheads are fitted per
engine family and hardware class (calculators/speed/fit.py) or calibrated from a team's own run
(calculators/speed/calibrate.py); every prediction carries which, and the band the fit's residuals give.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from calculators.errors import ServewiseInputError
from calculators.i18n import N_, _, translated_word
from calculators.simulator.roofline import (
    ONE_PASS,
    PrefillSteps,
    StepCostModel,
    experts_touched_share,
    lone_prefill_seconds,
)

#: Where a prediction's parameters come from.
SpeedBasisKind = Literal["default-fit", "calibration", "assumed"]


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


#: Apple publishes GPU flop/s for few of its chips. The M1's 8-core GPU: 2.6 TFLOPS (Apple at the M1 launch,
#: as reported by https://www.macrumors.com/2020/11/10/apple-announces-m1-chip-for-the-mac/), on 66.6 GB/s (the
#: catalog's M1 figure, knowledge/gpus.yaml). Within the M-series the GPU's core count grows with the memory bus
#: (Pro, Max and Ultra double both), so an Apple GPU's flop/s are estimated as bandwidth x this ratio, FP16 at the
#: FP32 rate: an assumption, stated in every prediction that uses it and checked on the held-out #4167 pp512 rows.
APPLE_M1_FLOPS_PER_S = 2.6e12
APPLE_M1_BANDWIDTH_BYTES_PER_S = 66.6e9
APPLE_FLOPS_NOTE = N_(
    "Prefill uses GPU flop/s estimated from the memory bandwidth (scaled from the M1's 2.6\u00a0TFLOPS on "
    "66.6\u00a0GB/s): Apple publishes no figure for this chip."
)


def apple_flops_from_bandwidth(bandwidth_bytes_per_s: float) -> float:
    """Estimated GPU flop/s of an Apple M-series chip from its memory bandwidth (bytes/s), see APPLE_M1_FLOPS_PER_S."""
    return bandwidth_bytes_per_s * APPLE_M1_FLOPS_PER_S / APPLE_M1_BANDWIDTH_BYTES_PER_S


class Accelerator(_Frozen):
    """What the speed model needs of the hardware: peak bandwidth (bytes/s), dense 16-bit flop/s, class.

    `flops_per_s` is BF16 with FP32 accumulate (what PyTorch-based engines run); an engine whose prompt kernels
    accumulate in FP16 or int32 runs at `fp16_acc_flops_per_s` instead: which rate a step uses is part of the
    engine's speed parameters (`SpeedParams.fp16_accumulate`), read only through `tensor_flops_per_s`.
    """

    hardware_class: Literal["consumer-gddr", "datacenter-hbm", "apple-unified", "cpu"]
    memory_bandwidth_bytes_per_s: float = Field(gt=0)
    flops_per_s: float | None = Field(default=None, gt=0, description="dense 16-bit tensor flop/s; None = unknown")
    fp16_acc_flops_per_s: float | None = Field(
        default=None, gt=0,
        description="dense FP16 tensor flop/s with FP16 accumulate where it differs from flops_per_s (GeForce cards "
                    "run FP32 accumulate at half rate); None = the same as flops_per_s",
    )
    label: str = ""
    flops_note: str = Field(default="", description="how flops_per_s was obtained when it is not a published figure")


class ModelShape(_Frozen):
    """What one forward pass of the model reads and computes (bytes, parameters, layers)."""

    weights_read_bytes: float = Field(gt=0, description="weight bytes one single-sequence decode step streams")
    expert_weights_bytes: float = Field(
        default=0.0, ge=0, description="MoE: bytes of all routed experts (0 for a dense model)"
    )
    expert_share_per_token: float = Field(
        default=0.0, ge=0, le=1, description="MoE: share of the routed experts one token uses (active / total)"
    )
    params_active: float = Field(gt=0, description="parameters used per token (MoE: active)")
    n_layers: int = Field(gt=0)
    attention_q_dim: int = Field(gt=0, description="query heads x head dim")
    kv_bytes_per_token: float = Field(ge=0, description="K+V bytes per cached token")
    label: str = ""


class Band(_Frozen):
    """Relative spread of measured / predicted - 1 seen where the parameters were fitted (fractions)."""

    low: float = Field(le=0, description="10th percentile of the relative residual, e.g. -0.12")
    high: float = Field(ge=0, description="90th percentile of the relative residual, e.g. +0.15")
    median_abs: float = Field(ge=0, description="median absolute relative residual")
    n_points: int = Field(ge=0, description="measurements the residuals come from")
    group_points: int | None = Field(
        default=None, ge=0,
        description="set when the group had too few measurements of its own for a spread: how many it had (the "
                    "residuals are then those of every group on the same hardware class)",
    )


class SpeedParams(_Frozen):
    """Fitted or calibrated efficiencies and overheads for one engine family on one hardware class."""

    memory_efficiency: float = Field(gt=0, le=1)
    decode_overhead_s: float = Field(ge=0, description="fixed seconds per decode step")
    compute_efficiency: float = Field(gt=0, le=1)
    prefill_overhead_s: float = Field(ge=0, description="fixed seconds per prefill (includes request handling)")
    per_sequence_overhead_s: float = Field(
        default=0.0,
        ge=0,
        description="host seconds per scheduled sequence per step (only a serving calibration fits it)",
    )
    graphless_launch_s: float = Field(
        default=0.0,
        ge=0,
        description="host seconds per kernel launch of a decode step that replays no GPU graph (fitted where the "
                    "measurements include builds without CUDA graphs; 0 elsewhere)",
    )
    eager_host_scale: float = Field(
        default=1.0,
        gt=0,
        description="factor on the engine's host time to launch an eager forward pass (SchedulerSpec."
                    "eager_host_s_per_layer, a sourced figure): 1 unless a serving calibration measured a level whose "
                    "decode batches ran above the engine's CUDA-graph cap",
    )
    fp16_accumulate: bool = Field(
        default=False,
        description="the engine's matmuls accumulate in FP16 (llama.cpp's kernels): compute_efficiency is a share of "
                    "the card's FP16-accumulate rate, not of its BF16/FP32-accumulate one (see tensor_flops_per_s)",
    )
    decode_band: Band
    prefill_band: Band | None = None


#: Said with every prediction whose prefill uses the FP16-accumulate rate instead of the catalog's BF16 figure.
FP16_ACCUMULATE_NOTE = N_(
    "Prefill uses the card's FP16-accumulate tensor rate, which this engine's prompt kernels run at (twice the "
    "FP32-accumulate figure on GeForce cards)."
)


def tensor_flops_per_s(hw: Accelerator, fp16_accumulate: bool) -> float | None:
    """The dense tensor flop/s an engine's steps run at on `hw` (None when unknown).

    The one place that chooses the rate: the card's FP16-accumulate figure when the engine's kernels accumulate
    in FP16 (`SpeedParams.fp16_accumulate`) and the catalog gives one, else its BF16 (FP32-accumulate) figure.
    """
    if fp16_accumulate and hw.fp16_acc_flops_per_s is not None:
        return hw.fp16_acc_flops_per_s
    return hw.flops_per_s


def flops_note(hw: Accelerator, params: SpeedParams) -> str:
    """How the flop/s a step of `params` runs at on `hw` were obtained (msgids joined; empty for a catalog figure)."""
    rate = tensor_flops_per_s(hw, params.fp16_accumulate)
    # the msgid itself: renderings translate flops_note (reports/speed_text.py)
    fp16 = FP16_ACCUMULATE_NOTE if rate is not None and rate != hw.flops_per_s else ""
    return " ".join(n for n in (hw.flops_note, fp16) if n)


class SpeedBasis(_Frozen):
    """Which parameters a prediction used and why: a default fit group or a named calibration."""

    kind: SpeedBasisKind
    engine_family: str
    hardware_class: str
    group: str = Field(description="the fit group used, e.g. 'vllm / datacenter-hbm' or a fallback")
    note: str = ""
    flops_note: str = Field(default="", description="how the accelerator's flop/s were obtained, when estimated")


#: What people read for each hardware class (translated where shown; the ids stay in links, JSON and fit groups).
HARDWARE_CLASS_NAMES: dict[str, str] = {
    "consumer-gddr": N_("consumer GPUs (GDDR)"),
    "datacenter-hbm": N_("data-centre GPUs (HBM)"),
    "apple-unified": N_("Apple silicon (unified memory)"),
    "cpu": N_("CPUs"),
}


def hardware_class_name(hardware_class: str) -> str:
    """A hardware class id in the reader's words (an unknown id is returned as it is)."""
    return translated_word(HARDWARE_CLASS_NAMES, hardware_class)


def family_name(family: str) -> str:
    """An engine family id (the engine ids of calculators.engines) as the engine's name."""
    from calculators.engines import display_name  # the engine adapters import this module

    return display_name(family)


def group_name(group: str) -> str:
    """A fit group ('vllm / datacenter-hbm', 'calibration: LABEL') in the reader's words: names, not ids."""
    if group.startswith("calibration: "):
        return group.removeprefix("calibration: ")
    family, _slash, hardware_class = group.partition(" / ")
    if not hardware_class:
        return group
    return _("{engine} on {hardware_class}").format(engine=family_name(family),
                                                     hardware_class=hardware_class_name(hardware_class))


class Prediction(_Frozen):
    """A predicted value with the band its basis implies (same unit as `value`)."""

    value: float
    low: float
    high: float
    basis: SpeedBasis


def weights_read_for_tokens(model: ModelShape, tokens: int) -> float:
    """Weight bytes a step of `tokens` tokens streams: the dense part, plus the routed experts its tokens pick.

    `weights_read_bytes` is the single-token figure (dense part + one token's share of the experts); each
    further token picks its experts independently (an estimate), so a large batch reads every expert.
    """
    if model.expert_weights_bytes <= 0 or tokens <= 1:
        return model.weights_read_bytes
    dense = model.weights_read_bytes - model.expert_weights_bytes * model.expert_share_per_token
    return dense + model.expert_weights_bytes * experts_touched_share(model.expert_share_per_token, tokens)


def _check_batch(batch: int, context_tokens: float) -> None:
    if batch < 1:
        raise ServewiseInputError(_("batch must be at least 1 sequence"))
    if context_tokens < 0:
        raise ServewiseInputError(_("context must be zero or more tokens"))


def decode_step_seconds(
    model: ModelShape, hw: Accelerator, params: SpeedParams, batch: int = 1, context_tokens: float = 0.0,
    graphless_launches: float = 0.0,
) -> float:
    """Seconds one decode step of `batch` sequences takes, each with `context_tokens` already cached.

    `graphless_launches`: kernels the host launches for the step when the build replays no GPU graph (an engine's
    `EngineSpeed.graphless_launches_per_token`); each adds `params.graphless_launch_s`. Today's builds replay graphs
    for one-sequence decode on the cards that support them, so predictions for a team's own runs leave it at 0.
    """
    _check_batch(batch, context_tokens)
    bytes_read = weights_read_for_tokens(model, batch) + batch * context_tokens * model.kv_bytes_per_token
    memory_s = bytes_read / (hw.memory_bandwidth_bytes_per_s * params.memory_efficiency)
    compute_s = 0.0
    rate = tensor_flops_per_s(hw, params.fp16_accumulate)
    if rate is not None:
        flops = (
            2.0 * model.params_active * batch + 4.0 * model.n_layers * model.attention_q_dim * batch * context_tokens
        )
        compute_s = flops / (rate * params.compute_efficiency)
    launches_s = params.graphless_launch_s * graphless_launches
    return params.decode_overhead_s + params.per_sequence_overhead_s * batch + launches_s + max(memory_s, compute_s)


def prefill_seconds(model: ModelShape, hw: Accelerator, params: SpeedParams, prompt_tokens: int,
                    steps: PrefillSteps = ONE_PASS) -> float | None:
    """Seconds from a prompt of `prompt_tokens` reaching an idle engine to its first token, the engine cutting it
    into `steps` (its chunk size; default one pass); None when the hardware's flop/s are unknown.

    Request handling plus the simulator's steps for the prompt alone (`roofline.lone_prefill_seconds` on
    `step_cost_model`): each chunk pays a step's overhead and attends over the keys cached before it, so the
    Simulator page and the users readout give one request on an idle server this same time.
    """
    if prompt_tokens < 1:
        raise ServewiseInputError(_("a prompt has at least 1\u00a0token"))
    if tensor_flops_per_s(hw, params.fp16_accumulate) is None:
        return None
    cost = step_cost_model(model, hw, params)
    return cost.request_overhead_s + lone_prefill_seconds(cost.rates, prompt_tokens, steps)


def step_cost_model(model: ModelShape, hw: Accelerator, params: SpeedParams) -> StepCostModel:
    """The simulator's step-cost inputs from the speed model's parameters (flop/s unknown: compute not limiting).

    A MoE model's routed experts are passed apart from the dense weights (the simulator reads as many as a
    step's tokens pick); prefill attention FLOPs are passed per (query, key) pair; the prefill overhead
    beyond one step's overhead is request handling, added to each request's first-token time.
    """
    rate = tensor_flops_per_s(hw, params.fp16_accumulate)
    flops = rate if rate is not None else hw.memory_bandwidth_bytes_per_s * 1e6
    dense_bytes = model.weights_read_bytes - model.expert_weights_bytes * model.expert_share_per_token
    return StepCostModel(
        per_sequence_overhead_s=params.per_sequence_overhead_s,
        memory_bandwidth_bytes_per_s=hw.memory_bandwidth_bytes_per_s,
        flops_per_s=flops,
        weights_bytes=max(0.0, dense_bytes),
        expert_weights_bytes=model.expert_weights_bytes,
        expert_share_per_token=model.expert_share_per_token,
        attention_flops_per_pair=4.0 * model.n_layers * model.attention_q_dim,
        active_params=model.params_active,
        kv_bytes_per_token=model.kv_bytes_per_token,
        memory_efficiency=params.memory_efficiency,
        compute_efficiency=params.compute_efficiency,
        step_overhead_s=params.decode_overhead_s,
        request_overhead_s=max(0.0, params.prefill_overhead_s - params.decode_overhead_s),
        n_layers=model.n_layers,
        eager_host_scale=params.eager_host_scale,
    )


def with_band(value: float, band: Band, basis: SpeedBasis) -> Prediction:
    """Wrap `value` with the band [value x (1 + low), value x (1 + high)]."""
    return Prediction(value=value, low=value * (1.0 + band.low), high=value * (1.0 + band.high), basis=basis)
