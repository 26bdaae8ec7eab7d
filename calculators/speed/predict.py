"""Predictions a page, the CLI or the capacity planner asks for: rates and TTFT with basis and band.

`speed_params` picks the parameters once (a calibration when given, else the default fit's group for
the engine family and hardware class); everything after that is a few multiplications, so a planner can
call `estimate_speed` or `step_cost_model` for thousands of candidates.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from calculators.i18n import ngettext
from calculators.simulator.roofline import (
    DEFAULT_COMPUTE_EFFICIENCY,
    DEFAULT_MEMORY_EFFICIENCY,
    ONE_PASS,
    PrefillSteps,
    StepCostModel,
)
from calculators.speed.calibration import CalibrationProfile
from calculators.speed.families import engine_params, speed_family
from calculators.speed.fit import default_fit
from calculators.speed.model import (
    Accelerator,
    Band,
    ModelShape,
    Prediction,
    SpeedBasis,
    SpeedParams,
    decode_step_seconds,
    flops_note,
    prefill_seconds,
    step_cost_model,
    with_band,
)


def speed_params(engine: str, hardware_class: str,
                 calibration: CalibrationProfile | None = None) -> tuple[SpeedParams, SpeedBasis]:
    """Parameters and basis for `engine` on `hardware_class`: the calibration when given, else the default fit,
    with the engine's own tensor rate (`families.engine_params`) whichever group they come from."""
    family = speed_family(engine)
    if calibration is not None:
        return engine_params(engine, calibration.params()), SpeedBasis(
            kind="calibration",
            engine_family=family,
            hardware_class=hardware_class,
            group=f"calibration: {calibration.label or calibration.engine}",
            note=ngettext("fitted on {n_measurements} measurement of the team's own run",
                          "fitted on {n_measurements} measurements of the team's own run",
                          calibration.n_measurements).format(n_measurements=calibration.n_measurements),
        )
    from calculators.engines import ENGINES

    found = ENGINES.get(engine)
    fallback = found.speed.fallback_family if found is not None and found.speed is not None else None
    params, basis = default_fit().lookup(family, hardware_class, fallback)
    return engine_params(engine, params), basis


def params_on(engine: str, hw: Accelerator,
              calibration: CalibrationProfile | None = None) -> tuple[SpeedParams, SpeedBasis]:
    """`speed_params` for `engine` on accelerator `hw`, the basis noting when `hw`'s flop/s are unknown."""
    params, basis = speed_params(engine, hw.hardware_class, calibration)
    if note := flops_note(hw, params):
        basis = basis.model_copy(update={"flops_note": note})
    return params, basis


def unfitted_params(memory_efficiency: float = DEFAULT_MEMORY_EFFICIENCY,
                    compute_efficiency: float = DEFAULT_COMPUTE_EFFICIENCY) -> SpeedParams:
    """Efficiencies with no overheads and no band: the roofline's stated defaults for an engine without a speed
    model, or the ones a user typed (fractions of peak bandwidth and flop/s)."""
    return SpeedParams(
        memory_efficiency=memory_efficiency, compute_efficiency=compute_efficiency,
        decode_overhead_s=0.0, prefill_overhead_s=0.0, decode_band=Band(low=0.0, high=0.0, median_abs=0.0, n_points=0),
    )


class SpeedEstimate(BaseModel):
    """Decode and prefill speed of one model on one accelerator with one engine (rates in tokens/s, times in s)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    decode_tokens_per_s_batch1: Prediction = Field(description="one sequence's generation rate")
    concurrency: int = Field(ge=1)
    decode_tokens_per_s_at_concurrency: Prediction = Field(description="all sequences together at `concurrency`")
    per_sequence_tokens_per_s_at_concurrency: Prediction
    context_tokens: int = Field(ge=0)
    prompt_tokens: int = Field(ge=1)
    prefill_tokens_per_s: Prediction | None = Field(description="None when the accelerator's flop/s are unknown")
    ttft_s: Prediction | None = Field(description="time to first token of one prompt on an idle server")
    basis: SpeedBasis


def _rate(tokens: float, seconds: float, params_band, basis: SpeedBasis) -> Prediction:
    return with_band(tokens / seconds, params_band, basis)


def estimate_speed(
    model: ModelShape,
    hw: Accelerator,
    engine: str,
    *,
    concurrency: int = 1,
    prompt_tokens: int = 512,
    context_tokens: int | None = None,
    calibration: CalibrationProfile | None = None,
    prefill_steps: PrefillSteps = ONE_PASS,
) -> SpeedEstimate:
    """Decode rate at batch 1 and at `concurrency`, prefill rate and TTFT for `prompt_tokens`.

    Decode sequences are taken to hold `context_tokens` of KV each (default: the prompt). The prompt is
    prefilled in the engine's steps (`simulator.policy.lone_prompt_steps`; default one pass), so the TTFT is the
    simulator's for one request on an idle server.
    """
    params, basis = params_on(engine, hw, calibration)
    context = prompt_tokens if context_tokens is None else context_tokens
    one = decode_step_seconds(model, hw, params, 1, context)
    many = decode_step_seconds(model, hw, params, concurrency, context)
    prefill = prefill_seconds(model, hw, params, prompt_tokens, prefill_steps)
    prefill_band = params.prefill_band
    prefill_rate: Prediction | None
    ttft: Prediction | None
    if prefill is not None and prefill_band is not None:
        prefill_rate = with_band(prompt_tokens / prefill, prefill_band, basis)
        # TTFT is a time: a rate 20 % high means a time 1/1.2 of the prediction, so the band inverts
        ttft = Prediction(
            value=prefill,
            low=prefill / (1.0 + prefill_band.high),
            high=prefill / (1.0 + prefill_band.low) if prefill_band.low > -1 else prefill * 10,
            basis=basis,
        )
    else:
        prefill_rate = ttft = None
    return SpeedEstimate(
        decode_tokens_per_s_batch1=_rate(1.0, one, params.decode_band, basis),
        concurrency=concurrency,
        decode_tokens_per_s_at_concurrency=_rate(float(concurrency), many, params.decode_band, basis),
        per_sequence_tokens_per_s_at_concurrency=_rate(1.0, many, params.decode_band, basis),
        context_tokens=context,
        prompt_tokens=prompt_tokens,
        prefill_tokens_per_s=prefill_rate,
        ttft_s=ttft,
        basis=basis,
    )


class DecodePoint(BaseModel):
    """Decode speed with `concurrency` sequences generating at once (rates in tokens/s, each with its band)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    concurrency: int = Field(ge=1)
    all_sequences: Prediction = Field(description="tokens/s of all sequences together")
    per_sequence: Prediction = Field(description="tokens/s each sequence gets")


#: Most concurrent sequences a decode sweep goes to (the Concurrent sequences input's own maximum).
MAX_SWEEP_CONCURRENCY = 4096


def sweep_concurrencies(chosen: int, least_top: int = 256) -> list[int]:
    """Concurrencies to draw decode speed at: powers of two from 1 to at least `least_top` and four times
    `chosen` (at most MAX_SWEEP_CONCURRENCY), plus `chosen` itself, ascending."""
    top = min(MAX_SWEEP_CONCURRENCY, max(least_top, 4 * chosen))
    powers = [2**k for k in range(13) if 2**k <= top]
    return sorted({*powers, min(max(1, chosen), MAX_SWEEP_CONCURRENCY)})


def decode_by_concurrency(
    model: ModelShape,
    hw: Accelerator,
    engine: str,
    concurrencies: list[int],
    *,
    context_tokens: int,
    calibration: CalibrationProfile | None = None,
) -> list[DecodePoint]:
    """Decode rate (tokens/s, all sequences and per sequence, with bands) at each of `concurrencies`, every
    sequence holding `context_tokens` of KV. Speed only: whether that many sequences fit in memory is the
    memory calculators' question."""
    params, basis = params_on(engine, hw, calibration)
    points = []
    for concurrency in concurrencies:
        step_s = decode_step_seconds(model, hw, params, concurrency, context_tokens)
        points.append(DecodePoint(
            concurrency=concurrency,
            all_sequences=_rate(float(concurrency), step_s, params.decode_band, basis),
            per_sequence=_rate(1.0, step_s, params.decode_band, basis),
        ))
    return points


class EngineStepCost(BaseModel):
    """One engine's simulator step-cost inputs and the speed basis they come from."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    engine: str
    cost: StepCostModel
    basis: SpeedBasis
    params: SpeedParams


def engine_step_costs(
    engines: tuple[str, ...], model: ModelShape, hw: Accelerator, calibration: CalibrationProfile | None = None
) -> tuple[EngineStepCost, ...]:
    """Step costs per engine from the speed model (a calibration applies to its own engine and class only)."""
    out = []
    for engine in engines:
        usable = calibration if calibration is not None and calibration.applies_to(engine, hw.hardware_class) else None
        params, basis = params_on(engine, hw, usable)
        out.append(EngineStepCost(engine=engine, cost=step_cost_model(model, hw, params), basis=basis, params=params))
    return tuple(out)
