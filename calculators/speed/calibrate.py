"""Calibrate the speed model on a team's own imported runs, and compare predicted with measured.

Single-stream rates (llama-bench, Ollama, MLX LM) are fitted in closed form, like the default fit.
Serving runs (vLLM, SGLang, GuideLLM load levels) are fitted through the simulator, minimising the squared
log error of the simulated TTFT and ITL medians (Nelder-Mead). One load level gives two numbers, so it fits
two: a decode scale (every decode-step cost of the starting parameters: weight and KV streaming, the fixed
step overhead and the per-sequence host overhead) and a prefill scale (prefill compute and request handling).
How those costs grow with the batch stays the starting model's: the default fit, plus a per-sequence host
overhead for engines whose steps process every sequence's output on the host (`PER_SEQUENCE_PRIOR_S`). With
two or more levels the per-sequence host overhead is fitted too.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np
from pydantic import BaseModel, ConfigDict

from calculators.errors import ServewiseInputError
from calculators.i18n import _
from calculators.simulator.engines import default_policy
from calculators.simulator.run import simulate
from calculators.simulator.workload import (
    ArrivalProcess,
    LengthDistribution,
    LengthKind,
    RequestSet,
    WorkloadSpec,
    draw_requests,
)
from calculators.speed.calibration import CalibrationProfile
from calculators.speed.fit import band_from, decode_feature_s, fit_line, prefill_feature_s
from calculators.speed.imports.run import ImportedRun, SkippedLine
from calculators.speed.model import Accelerator, Band, ModelShape, SpeedParams, tensor_flops_per_s
from calculators.speed.predict import speed_params, step_cost_model
from calculators.units import compact, number

#: Requests simulated per load level (more costs time, the medians barely move past this).
MAX_SIMULATED_REQUESTS = 200
#: KV capacity used when neither a start-up log nor a memory plan gives one: effectively unlimited.
UNLIMITED_KV_TOKENS = 10_000_000
#: Candidate per-sequence host overheads (seconds per running sequence per step) a serving calibration starts
#: from on engines whose steps process every sequence's output on the host (`host_work_per_sequence_in_step`):
#: a doubling grid fixed before the split below was run.
PER_SEQUENCE_PRIOR_CANDIDATES_S = (0.0, 100e-6, 200e-6, 400e-6)
#: The value used for a team's own calibration: the candidate whose one-level-to-the-others error is lowest over
#: all public serving sweeps (bench/bench_speed_accuracy.py prints the choice). The accuracy ledger does not use
#: this value for its own rows: each half of the sweeps is judged with the candidate chosen on the other half
#: (calculators/speed/accuracy.py `cross_fitted_calibrated_rows`).
PER_SEQUENCE_PRIOR_S = 200e-6

@dataclass(frozen=True)
class ServingObservation:
    """One measured load level and the workload that produced it (medians in seconds)."""

    label: str
    workload: WorkloadSpec
    ttft_s: float | None
    itl_s: float | None
    requests: RequestSet | None = None
    #: how many times each request counts in the medians (a benchmark pooling repeated passes: a pass simulated
    #: once stands for several, 0 for a pass simulated only to warm the cache); None: each request once
    counts: tuple[int, ...] | None = None


class Comparison(BaseModel):
    """Predicted against measured for one metric of one imported run (same unit; error = predicted / measured - 1)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    label: str
    metric: str
    unit: str
    measured: float
    predicted: float
    error: float


class CalibrationResult(BaseModel):
    """The profile and, for every measured value it was fitted on, how close the calibrated model comes."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    profile: CalibrationProfile
    comparisons: tuple[Comparison, ...]
    notes: tuple[str, ...] = ()
    #: lines of the benchmark outputs no reader used, verbatim with the reason (nothing pasted is lost)
    skipped: tuple[SkippedLine, ...] = ()


def serving_observation(run: ImportedRun, label: str) -> ServingObservation | None:
    """A serving run as a workload + medians (fixed prompt/output lengths at the run's means)."""
    if run.load_kind == "single" or run.load is None:
        return None
    ttft = run.ttft_ms_p50 / 1000 if run.ttft_ms_p50 else None
    itl_ms = run.itl_ms_p50 or run.tpot_ms_p50
    itl = itl_ms / 1000 if itl_ms else None
    if ttft is None and itl is None:
        return None
    prompt = max(1, round(run.prompt_tokens or 512))
    output = max(1, round(run.output_tokens or 256))
    n = min(MAX_SIMULATED_REQUESTS, run.n_requests or MAX_SIMULATED_REQUESTS)
    if run.load_kind == "rate":
        spec = WorkloadSpec(n_requests=n, arrival=ArrivalProcess.POISSON, rate_per_s=run.load,
                            prompt=LengthDistribution(kind=LengthKind.FIXED, value=prompt),
                            output=LengthDistribution(kind=LengthKind.FIXED, value=output))
    else:
        clients = max(1, min(n, round(run.load)))
        spec = WorkloadSpec(n_requests=max(n, clients), arrival=ArrivalProcess.CLOSED, n_clients=clients,
                            prompt=LengthDistribution(kind=LengthKind.FIXED, value=prompt),
                            output=LengthDistribution(kind=LengthKind.FIXED, value=output))
    return ServingObservation(label, spec, ttft, itl)


def simulate_medians(
    obs: ServingObservation, model: ModelShape, hw: Accelerator, params: SpeedParams, policy, kv_capacity_tokens: int
) -> tuple[float | None, float | None]:
    """Simulated (TTFT median, ITL median) in seconds (request handling is in the step cost's TTFT)."""
    result = simulate(
        obs.workload, policy, step_cost_model(model, hw, params), kv_capacity_tokens, requests=obs.requests
    )
    if obs.counts is not None:
        return _pooled_median([r.ttft_s for r in result.records], obs.counts), _pooled_median(
            [r.itl_s for r in result.records], obs.counts)
    summary = result.summary
    ttft = summary.ttft.p50 if summary.ttft is not None else None
    itl = summary.itl.p50 if summary.itl is not None else None
    return ttft, itl


def _pooled_median(values: list[float | None], counts: tuple[int, ...]) -> float | None:
    """Median (np.percentile's, linear) of the values that exist, value i taken counts[i] times."""
    pooled = np.repeat([v if v is not None else np.nan for v in values], counts)
    pooled = pooled[~np.isnan(pooled)]
    return float(np.percentile(pooled, 50)) if pooled.size else None


def _scaled(base: SpeedParams, u: np.ndarray, axes: tuple[str, ...] | None = None) -> SpeedParams:
    """`base` with each entry of u applied to its axis: "decode" multiplies the decode-step costs by e^u, "prefill"
    the prefill costs, "per_sequence" replaces the per-sequence host overhead by e^u - 1e-5 s, "eager" multiplies the
    eager launch time (efficiencies stay at most 1). Without `axes`: decode, prefill and, for a third entry,
    per_sequence."""
    axes = axes if axes is not None else ("decode", "prefill", "per_sequence")[: len(u)]
    values = dict(zip(axes, (float(x) for x in u), strict=True))
    decode, prefill = math.exp(values.get("decode", 0.0)), math.exp(values.get("prefill", 0.0))
    per_sequence = (base.per_sequence_overhead_s * decode if "per_sequence" not in values
                    else max(0.0, math.exp(values["per_sequence"]) - 1e-5))
    return base.model_copy(update={
        "eager_host_scale": base.eager_host_scale * math.exp(values.get("eager", 0.0)),
        "memory_efficiency": min(1.0, base.memory_efficiency / decode),
        "decode_overhead_s": base.decode_overhead_s * decode,
        "per_sequence_overhead_s": per_sequence,
        "compute_efficiency": min(1.0, base.compute_efficiency / prefill),
        "prefill_overhead_s": base.prefill_overhead_s * prefill,
    })


def serving_start(start: SpeedParams, policy, per_sequence_prior_s: float = PER_SEQUENCE_PRIOR_S) -> SpeedParams:
    """The parameters a serving calibration scales: `start`, with the per-sequence host overhead prior (s) when
    the engine's steps process every sequence's output on the host and `start` has none."""
    if start.per_sequence_overhead_s or not getattr(policy, "host_work_per_sequence_in_step", False):
        return start
    return start.model_copy(update={"per_sequence_overhead_s": per_sequence_prior_s})


def nelder_mead(f, x0: np.ndarray, max_evals: int = 80, steps: np.ndarray | None = None) -> np.ndarray:
    """Minimise f from x0 with the Nelder-Mead simplex (small, dependency-free); `steps` sizes the first simplex."""
    n = len(x0)
    steps = np.full(n, 0.5) if steps is None else steps
    simplex = [x0] + [x0 + steps[i] * np.eye(n)[i] for i in range(n)]
    values = [f(x) for x in simplex]
    evals = n + 1
    while evals < max_evals:
        order = np.argsort(values)
        simplex = [simplex[i] for i in order]
        values = [values[i] for i in order]
        centroid = np.mean(simplex[:-1], axis=0)
        reflected = centroid + (centroid - simplex[-1])
        fr = f(reflected); evals += 1  # noqa: E702
        if fr < values[0]:
            expanded = centroid + 2.0 * (centroid - simplex[-1])
            fe = f(expanded); evals += 1  # noqa: E702
            simplex[-1], values[-1] = (expanded, fe) if fe < fr else (reflected, fr)
        elif fr < values[-2]:
            simplex[-1], values[-1] = reflected, fr
        else:
            contracted = centroid + 0.5 * (simplex[-1] - centroid)
            fc = f(contracted); evals += 1  # noqa: E702
            if fc < values[-1]:
                simplex[-1], values[-1] = contracted, fc
            else:
                best = simplex[0]
                simplex = [best] + [best + 0.5 * (x - best) for x in simplex[1:]]
                values = [values[0]] + [f(x) for x in simplex[1:]]
                evals += n
    return simplex[int(np.argmin(values))]


def measured_running(obs: ServingObservation) -> float | None:
    """Requests a measured level kept decoding on average, by Little's law from its own medians: arrivals per second
    x each request's decode time ((mean output - 1) x ITL) open loop; closed loop, clients x that time / (that time
    + TTFT + think time). Queued requests are not in the decode batch, so TTFT counts only as time out of it. Medians
    stand in for means and an overloaded level finishes fewer requests than arrive: an estimate. None without an ITL
    or requests."""
    if not obs.itl_s or obs.requests is None or not obs.requests.output_tokens:
        return None
    outputs = obs.requests.output_tokens
    decoding_s = max(0.0, sum(outputs) / len(outputs) - 1.0) * obs.itl_s
    workload = obs.workload
    if workload.arrival is ArrivalProcess.CLOSED:
        cycle_s = decoding_s + (obs.ttft_s or 0.0) + workload.think_time_s
        return workload.n_clients * decoding_s / cycle_s if cycle_s > 0 else 0.0
    return workload.rate_per_s * decoding_s


def above_graph_cap(
    observations: list[ServingObservation], policy, kv_capacity_tokens: int
) -> list[ServingObservation]:
    """The levels whose measured running batch (`measured_running`) was above the engine's CUDA-graph batch cap, so
    their ITL measures eager decode steps (none when the engine has no cap)."""
    cap = policy.scheduler_spec(kv_capacity_tokens).graph_max_batch if policy is not None else None
    if cap is None:
        return []
    return [o for o in observations if (running := measured_running(o)) is not None and running > cap]


def fit_serving(
    observations: list[ServingObservation], model: ModelShape, hw: Accelerator, start: SpeedParams, policy,
    kv_capacity_tokens: int, max_evals: int = 80, per_sequence_prior_s: float = PER_SEQUENCE_PRIOR_S,
) -> SpeedParams:
    """Parameters whose simulated medians best match `observations` (squared log error): a decode and a prefill
    scale of `serving_start(start, ...)`, plus the per-sequence host overhead (s) when two or more levels are given.
    One level whose running batch was above the engine's CUDA-graph cap (`above_graph_cap`) measured eager steps,
    not the graph-replayed ones lighter levels run: its decode number fits the eager launch time instead of the
    decode scale; with two or more levels and one of them above the cap, the eager launch time is fitted as well."""
    obs = [
        o if o.requests is not None else dataclasses.replace(o, requests=draw_requests(o.workload))
        for o in observations
    ]
    base = serving_start(start, policy, per_sequence_prior_s)
    eager_levels = above_graph_cap(obs, policy, kv_capacity_tokens)
    if len(obs) < 2:
        axes: tuple[str, ...] = ("eager" if eager_levels else "decode", "prefill")
    else:
        axes = ("decode", "prefill", "per_sequence") + (("eager",) if eager_levels else ())
    # an eager step is max(GPU step, launch time): below the GPU step the launch time changes nothing, so its search
    # starts where an eager level's ITL says it is (that ITL, when longer than the sourced launch time)
    floor_s = policy.scheduler_spec(kv_capacity_tokens).eager_host_s_per_layer * model.n_layers if eager_levels else 0
    eager_start = math.log(max(1.0, max(o.itl_s or 0.0 for o in eager_levels) / floor_s)) if floor_s > 0 else 0.0
    u0 = np.array([math.log(base.per_sequence_overhead_s + 1e-5) if axis == "per_sequence"
                   else eager_start if axis == "eager" else 0.0 for axis in axes])

    def loss(u: np.ndarray) -> float:
        params = _scaled(base, u, axes)
        total = 0.0
        for o in obs:
            ttft, itl = simulate_medians(o, model, hw, params, policy, kv_capacity_tokens)
            for measured, predicted in ((o.ttft_s, ttft), (o.itl_s, itl)):
                if measured and predicted:
                    total += math.log(predicted / measured) ** 2
        return total

    # scales start at 1 and move by a factor of two; a per-sequence overhead's first step spans two decades
    steps = np.array([4.0 if axis == "per_sequence" else 0.7 for axis in axes])
    return _scaled(base, nelder_mead(loss, u0, max_evals=max_evals, steps=steps), axes)


def _run_label(number_in_file: int, run: ImportedRun) -> str:
    """How the reader names one imported run: its place in the files, its tool and its load."""
    if not run.load:
        return _("run {n}").format(n=number_in_file)
    if run.load_kind == "rate":
        return _("run {n} ({tool}, {rate}\u00a0requests/s)").format(n=number_in_file, tool=run.tool,
                                                                rate=compact(run.load))
    return _("run {n} ({tool}, concurrency {load})").format(n=number_in_file, tool=run.tool, load=compact(run.load))


def _line_label(run: ImportedRun) -> str:
    """How the reader names a single-stream run: its tool and the pasted line it starts on."""
    return _("{tool}, line {n}").format(tool=run.tool, n=number(run.line_no))


def calibrate(
    runs: list[ImportedRun],
    model: ModelShape,
    hw: Accelerator,
    engine: str,
    *,
    kv_capacity_tokens: int | None = None,
    label: str = "",
    policy=None,
    max_evals: int = 80,
) -> CalibrationResult:
    """Fit a calibration profile for `engine` + `model` + `hw` from imported runs and compare every point."""
    if not runs:
        raise ServewiseInputError(_("calibration needs at least one imported run"))
    start, _unused = speed_params(engine, hw.hardware_class)
    notes: list[str] = []
    decode = [
        (r, decode_feature_s(model, hw, r.context_tokens + (r.output_tokens or 0) / 2), 1.0 / r.decode_tokens_per_s)
        for r in runs
        if r.decode_tokens_per_s and r.load_kind == "single"
    ]
    prefill = [(r, prefill_feature_s(model, hw, int(r.prompt_tokens), start.fp16_accumulate),
                r.prompt_tokens / r.prefill_tokens_per_s)
               for r in runs if r.prefill_tokens_per_s and r.prompt_tokens]
    prefill = [row for row in prefill if row[1] is not None]
    serving = [
        o
        for i, r in enumerate(runs)
        if (
            o := serving_observation(r, _run_label(i + 1, r))
        )
    ]
    params = start
    fitted_parameters = 0  # how many numbers the fit chose (a band from as many measured values is zero by design)
    if decode:
        x = np.array([d[1] for d in decode]); y = np.array([d[2] for d in decode])  # noqa: E702
        if len(decode) >= 2 and np.ptp(x) > 0:
            slope, overhead = fit_line(x, y)
            fitted_parameters += 2
        else:  # one size measured: keep the default overhead, fit the efficiency
            overhead = min(start.decode_overhead_s, 0.5 * float(np.min(y)))
            slope = max(1.0, float(np.mean((y - overhead) / x)))
            fitted_parameters += 1
        params = params.model_copy(update={"memory_efficiency": 1.0 / slope, "decode_overhead_s": overhead})
    if prefill:
        x = np.array([p[1] for p in prefill]); y = np.array([p[2] for p in prefill])  # noqa: E702
        if len(prefill) >= 2 and np.ptp(x) > 0:
            slope, overhead = fit_line(x, y)
            fitted_parameters += 2
        else:
            overhead = min(start.prefill_overhead_s, 0.5 * float(np.min(y)))
            slope = max(1.0, float(np.mean((y - overhead) / x)))
            fitted_parameters += 1
        params = params.model_copy(update={"compute_efficiency": 1.0 / slope, "prefill_overhead_s": overhead})
    elif any(r.prefill_tokens_per_s for r in runs) and tensor_flops_per_s(hw, start.fp16_accumulate) is None:
        notes.append(_("prefill rates were given but the accelerator's flop/s are unknown: prefill not calibrated"))
    pol = policy if policy is not None else (default_policy(engine) if serving else None)
    capacity = kv_capacity_tokens or UNLIMITED_KV_TOKENS
    if serving:
        if kv_capacity_tokens is None:
            notes.append(_("no start-up log: the KV cache was taken as unlimited while fitting the serving runs"))
        params = fit_serving(serving, model, hw, params, pol, capacity, max_evals=max_evals)
        drawn = [o if o.requests is not None else dataclasses.replace(o, requests=draw_requests(o.workload))
                 for o in serving]
        assert pol is not None  # serving runs always get a policy (the engine's default when none is given)
        spec = pol.scheduler_spec(capacity)
        eager_levels = above_graph_cap(drawn, pol, capacity)
        # fit_serving's axes: decode (or eager) and prefill; from two levels the per-sequence overhead, and eager
        fitted_parameters += 2 if len(serving) < 2 else 3 + (1 if eager_levels else 0)
        for o in eager_levels:
            notes.append(_("{run}: about {running} requests were decoding at once (Little's law on its own medians), "
                           "above {knob} = {cap}, so its decode steps ran without CUDA graphs; the calibration fitted "
                           "the host's eager launch time from it ({scale} times servewise's sourced figure) rather "
                           "than the GPU's decode step.").format(
                               run=o.label, running=number(round(measured_running(o) or 0)),
                               knob=f"`{spec.graph_max_batch_knob}`", cap=number(spec.graph_max_batch or 0),
                               scale=compact(params.eager_host_scale, 2)))
    comparisons: list[Comparison] = []
    unfinished: list[str] = []  # serving runs whose simulated requests never finished on this launch
    decode_res: list[float] = []
    prefill_res: list[float] = []
    for r, feature_s, _y in decode:
        decode_rate = r.decode_tokens_per_s
        assert decode_rate is not None  # `decode` keeps only runs with a decode rate
        predicted = 1.0 / (feature_s / params.memory_efficiency + params.decode_overhead_s)
        comparisons.append(
            _compare(_line_label(r), "decode_tokens_per_s", "tokens/s", decode_rate, predicted)
        )
        decode_res.append(decode_rate / predicted - 1)
    for r, prompt_feature_s, _y in prefill:
        prefill_rate = r.prefill_tokens_per_s
        assert prefill_rate is not None and prompt_feature_s is not None and r.prompt_tokens  # `prefill`'s filters
        predicted = r.prompt_tokens / (prompt_feature_s / params.compute_efficiency + params.prefill_overhead_s)
        comparisons.append(
            _compare(_line_label(r), "prefill_tokens_per_s", "tokens/s", prefill_rate, predicted)
        )
        prefill_res.append(prefill_rate / predicted - 1)
    for o in serving:
        o = ServingObservation(o.label, o.workload, o.ttft_s, o.itl_s, draw_requests(o.workload))
        ttft, itl = simulate_medians(o, model, hw, params, pol, capacity)
        if o.ttft_s and ttft:
            comparisons.append(_compare(o.label, "ttft_p50", "s", o.ttft_s, ttft))
            prefill_res.append(o.ttft_s / ttft - 1)
        if o.itl_s and itl:
            comparisons.append(_compare(o.label, "itl_p50", "s", o.itl_s, itl))
            decode_res.append(o.itl_s / itl - 1)
        if (o.ttft_s and not ttft) or (o.itl_s and not itl):
            unfinished.append(_unfinished_note(o))
    n = len(comparisons)
    if n == 0 and unfinished:
        raise ServewiseInputError(unfinished[0])
    if n == 0:
        raise ServewiseInputError(_("none of the imported runs has a rate or latency servewise can calibrate on"))
    notes += unfinished
    at_limit = _limit_notes(params, memory_fitted=bool(decode or serving), compute_fitted=bool(prefill or serving))
    notes += at_limit
    if n <= fitted_parameters and not at_limit:  # (a fit stopped at a limit misses, and says so above)
        notes.append(_(
            "the fit has as many free parameters as measured values ({n}), so its errors on them are near zero by "
            "construction and its band says nothing about other loads: import two or more load levels or sizes"
        ).format(n=number(n)))
    profile = CalibrationProfile(
        engine=engine, hardware_class=hw.hardware_class, label=label[:120],
        memory_efficiency=params.memory_efficiency, decode_overhead_s=params.decode_overhead_s,
        compute_efficiency=params.compute_efficiency, prefill_overhead_s=params.prefill_overhead_s,
        per_sequence_overhead_s=params.per_sequence_overhead_s,
        eager_host_scale=params.eager_host_scale,
        decode_band=band_from(decode_res) if decode_res else start.decode_band,
        prefill_band=band_from(prefill_res) if prefill_res else start.prefill_band,
        kv_capacity_tokens=kv_capacity_tokens, n_measurements=n,
    )
    return CalibrationResult(profile=profile, comparisons=tuple(comparisons), notes=tuple(notes))


#: An efficiency this close to 1 is at its cap: the fit wanted the accelerator to go faster than its peak.
_AT_CAP = 1.0 - 1e-9


def _limit_notes(params: SpeedParams, *, memory_fitted: bool, compute_fitted: bool) -> list[str]:
    """Notes for an efficiency the fit pushed to its cap of 1 (the accelerator's peak bandwidth or flop/s): the
    measured run is at least as fast as this model can go on this accelerator, which real engines never reach, so
    the benchmark most likely ran another model, quantization, GPU or GPU count than the one given."""
    notes = []
    if memory_fitted and params.memory_efficiency >= _AT_CAP:
        notes.append(_(
            "the measured decode is at least as fast as this model can go at the accelerator's peak memory bandwidth "
            "(the fitted memory efficiency stopped at its cap of 1): check that the model, quantization, GPU and GPU "
            "count are those of the benchmarked run"))
    if compute_fitted and params.compute_efficiency >= _AT_CAP:
        notes.append(_(
            "the measured prefill is at least as fast as this model can go at the accelerator's peak flop/s (the "
            "fitted compute efficiency stopped at its cap of 1): check that the model, quantization, GPU and GPU "
            "count are those of the benchmarked run"))
    return notes


def _unfinished_note(o: ServingObservation) -> str:
    """Why a serving run has no prediction: its simulated requests never finished on the launch given."""
    return _("{run}: no simulated request of {prompt} prompt + {output} output tokens finished on this launch (longer "
             "than its context length or its KV cache?): give the launch's context length or its start-up log").format(
        run=o.label, prompt=number(o.workload.prompt.value), output=number(o.workload.output.value))


def _compare(label: str, metric: str, unit: str, measured: float, predicted: float) -> Comparison:
    return Comparison(
        label=label, metric=metric, unit=unit, measured=measured, predicted=predicted, error=predicted / measured - 1.0
    )


__all__ = [
    "Band",
    "CalibrationResult",
    "Comparison",
    "ServingObservation",
    "calibrate",
    "fit_serving",
    "serving_observation",
    "simulate_medians",
]
