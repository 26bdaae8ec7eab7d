"""The accuracy ledger: how close the speed model comes to every public measurement it was built from.

- Single-stream decode and prefill, uncalibrated: each measurement is predicted by its group's fit made
  *without* that measurement (leave-one-out), so the error is an out-of-sample figure.
- The held-out Apple scoreboard (discussion #4167), uncalibrated: predicted by the default fit, which
  never saw it.
- Serving sweeps: every load level predicted by the default fit through the simulator (uncalibrated),
  and calibrated on one load level then predicting the others (leave-one-load-level-out), for TTFT and
  ITL medians.
"""

from __future__ import annotations

import dataclasses
import itertools
import random
from dataclasses import dataclass

import numpy as np

from calculators.simulator.engines import policy_for_gpu
from calculators.simulator.policy import PrefixReuse
from calculators.simulator.workload import ArrivalProcess, RequestSet, WorkloadSpec, draw_requests
from calculators.speed.calibrate import (
    PER_SEQUENCE_PRIOR_CANDIDATES_S,
    PER_SEQUENCE_PRIOR_S,
    ServingObservation,
    fit_serving,
    simulate_medians,
)
from calculators.speed.families import speed_family
from calculators.speed.fit import (
    DECODE_METRICS,
    MIN_POINTS,
    PREFILL_METRICS,
    FitTable,
    accelerator_of,
    fit_rows,
    measured_seconds,
    observation_seconds,
    observations,
    shape_of,
)
from calculators.speed.model import Accelerator
from knowledge.speed import LengthShape, SpeedMeasurementSet, SpeedSweep

#: Requests simulated per sweep level in the ledger.
LEDGER_REQUESTS = 300
#: GPU memory share given to weights + KV when estimating a sweep's KV capacity (both engines' defaults
#: are about 0.9), minus this much for activations and graphs: an assumption stated in the ledger.
MEMORY_SHARE = 0.9
RESERVED_BYTES = 2 * 2**30


@dataclass(frozen=True)
class LedgerRow:
    """One prediction against one measurement (rates in tokens/s or times in s; error = predicted / measured - 1)."""

    check: str  # "single-stream (leave-one-out)", "held-out #4167", "serving uncalibrated", "serving calibrated ..."
    engine: str
    hardware_class: str
    metric: str
    measured: float
    predicted: float
    source: str
    item: str

    @property
    def error(self) -> float:
        return self.predicted / self.measured - 1.0


def _rate(metric: str, seconds: float, prompt_tokens: int, batch: int) -> tuple[str, float]:
    """Seconds as a rate: decode tokens/s (tg rates and TPOT alike) or prefill tokens/s (pp rates and TTFT)."""
    if metric in DECODE_METRICS:
        return "decode_tokens_per_s", batch / seconds
    return "prefill_tokens_per_s", prompt_tokens / seconds


def _measured_rate(point) -> float:
    return _rate(point.metric, measured_seconds(point), point.prompt_tokens, point.batch)[1]


def single_stream_rows(data: SpeedMeasurementSet) -> list[LedgerRow]:
    """Leave-one-out predictions of every single-stream point, grouped as the default fit groups them."""
    rows: list[LedgerRow] = []
    for metrics in (DECODE_METRICS, PREFILL_METRICS):
        obs = observations(data, metrics)
        for key in sorted({(o.family, o.hardware_class) for o in obs}):
            group = [o for o in obs if (o.family, o.hardware_class) == key]
            if len(group) < MIN_POINTS:
                continue
            for i, o in enumerate(group):
                line = fit_rows(group[:i] + group[i + 1:])
                metric, predicted = _rate(o.point.metric, line.seconds(o), o.point.prompt_tokens, o.point.batch)
                rows.append(LedgerRow("single-stream (leave-one-out)", o.point.engine, o.hardware_class, metric,
                                      _measured_rate(o.point), predicted, o.point.source, o.point.id))
    return rows


def holdout_rows(holdout: SpeedMeasurementSet, table: FitTable) -> list[LedgerRow]:
    """The default fit's predictions of the held-out points (it was made without them)."""
    rows = []
    for metrics in (DECODE_METRICS, PREFILL_METRICS):
        for o in observations(holdout, metrics):
            params, _unused = table.lookup(o.family, o.hardware_class)
            metric, predicted = _rate(o.point.metric, observation_seconds(params, o), o.point.prompt_tokens,
                                      o.point.batch)
            rows.append(LedgerRow("held-out #4167", o.point.engine, o.hardware_class, metric, _measured_rate(o.point),
                                  predicted, o.point.source, o.point.id))
    return rows


def _lengths(shape: LengthShape, n: int, rng: random.Random) -> list[int]:
    if shape.kind == "fixed":
        return [shape.value] * n
    cap = shape.cap or 10**9
    return [max(1, min(cap, round(rng.lognormvariate(np.log(shape.median), shape.sigma)))) for _ in range(n)]


def _sweep_pairs(sweep: SpeedSweep, n: int, seed: int) -> tuple[tuple[int, int], ...]:
    """(prompt, output) tokens of the sweep's first `n` requests: the published prompt lengths in the order the
    run sent them when known, else drawn from `prompt`; outputs drawn from `output` (same seed at every level)."""
    rng = random.Random(seed)
    drawn = _lengths(sweep.prompt, n, rng)
    prompts = list(sweep.prompt_lengths[:n]) if sweep.prompt_lengths else drawn
    return tuple(zip(prompts, _lengths(sweep.output, len(prompts), rng), strict=True))


def sweep_workload(sweep: SpeedSweep, load: float, n_requests: int = LEDGER_REQUESTS, seed: int = 0) -> WorkloadSpec:
    """The sweep's workload at one load level, lengths drawn once (same seed at every level)."""
    n = min(n_requests, sweep.n_requests, len(sweep.prompt_lengths) or sweep.n_requests)
    pairs = _sweep_pairs(sweep, n, seed)
    if sweep.arrival == "poisson":
        return WorkloadSpec(
            n_requests=n, arrival=ArrivalProcess.POISSON, rate_per_s=load, length_pairs=pairs, seed=seed
        )
    clients = max(1, round(load))
    return WorkloadSpec(
        n_requests=max(n, clients), arrival=ArrivalProcess.CLOSED, n_clients=clients, length_pairs=pairs, seed=seed
    )


def sweep_requests(workload: WorkloadSpec) -> RequestSet:
    """The workload's requests with its length pairs taken in order (request i gets pair i, as the benchmark sent
    them), arrivals or think times drawn from its seed; `draw_requests` alone would pick pairs at random."""
    drawn = draw_requests(workload)
    pairs = workload.length_pairs or ()
    if len(pairs) < workload.n_requests:
        return drawn
    return dataclasses.replace(drawn, prompt_tokens=[p for p, _o in pairs[: workload.n_requests]],
                               output_tokens=[o for _p, o in pairs[: workload.n_requests]],
                               prefix_tokens=[0] * workload.n_requests)


#: Idle seconds between two simulated passes of a sweep that repeats its requests: the harness awaits every request
#: of a pass before it sends the next, and the simulator keeps nothing across idle time but the prefix cache, so a
#: gap longer than any pass takes to drain stands for that wait.
PASS_GAP_S = 1e6


def harness_arrivals_s(sweep: SpeedSweep, index: int, pass_index: int) -> list[float]:
    """Arrival times (s from the start of the pass) the run drew for pass `pass_index` of level `index` of a sweep
    with `arrival_seed`: one random.Random(arrival_seed) stream, n_requests expovariate(load) draws per pass, passes
    then levels in order (AccelMark loadgen/loadgen.py@3ae358a _run_online_async)."""
    rng = random.Random(sweep.arrival_seed)
    for k, level in enumerate(sweep.levels):
        for p in range(sweep.passes_per_level):
            gaps = [rng.expovariate(level.load) for _unused in range(sweep.n_requests)]
            if (k, p) == (index, pass_index):
                return list(itertools.accumulate(gaps))
    raise ValueError(f"{sweep.id} has no pass {pass_index} at level {index}")


def _with_arrivals(requests: RequestSet, arrival_s: list[float]) -> RequestSet:
    return dataclasses.replace(requests, arrival_s=arrival_s)


def level_observation(sweep: SpeedSweep, index: int, caches_prompts: bool) -> ServingObservation:
    """Load level `index` of the sweep as the simulator runs it. A sweep whose run sent its requests several times
    per level (`passes_per_level`) to an engine with a shared prefix cache is two passes of the same prompts: at the
    first level a cold pass (counted once) then a warm one standing for the others; at later levels, whose engine
    has served these prompts before, the previous level's last pass (which only warms the cache) then a counted one
    standing for all. With `arrival_seed` every pass arrives as the run drew it; else from the ledger's seed."""
    level = sweep.levels[index]
    workload = sweep_workload(sweep, level.load)
    requests = sweep_requests(workload)
    label = f"{sweep.id} @ {level.load:g}"
    ttft = level.ttft_ms_p50 / 1000 if level.ttft_ms_p50 else None
    itl = level.itl_ms_p50 / 1000 if level.itl_ms_p50 else None
    passes = sweep.passes_per_level
    exact = sweep.arrival_seed is not None and requests.arrival_s is not None
    if exact and len(requests.prompt_tokens) != sweep.n_requests:
        raise ValueError(f"{sweep.id}: the run's arrival draws need all its {sweep.n_requests} requests simulated")
    if passes == 1 or not caches_prompts or requests.arrival_s is None:
        if exact:
            requests = _with_arrivals(requests, harness_arrivals_s(sweep, index, 0))
        return ServingObservation(label, workload, ttft, itl, requests)
    if exact:
        before = harness_arrivals_s(sweep, 0, 0) if index == 0 else harness_arrivals_s(sweep, index - 1, passes - 1)
        after = harness_arrivals_s(sweep, index, 1 if index == 0 else 0)
    else:
        second = sweep_requests(workload.model_copy(update={"seed": workload.seed + 1}))  # same lengths, new arrivals
        assert second.arrival_s is not None  # same open-loop workload
        before, after = requests.arrival_s, second.arrival_s
    n = len(requests.prompt_tokens)
    offset = before[-1] + PASS_GAP_S
    both = RequestSet(
        prompt_tokens=requests.prompt_tokens * 2, output_tokens=requests.output_tokens * 2, prefix_tokens=[0] * 2 * n,
        arrival_s=before + [t + offset for t in after], think_s=[0.0] * 2 * n, prompt_keys=list(range(n)) * 2,
    )
    counts = (1,) * n + (passes - 1,) * n if index == 0 else (0,) * n + (passes,) * n
    return ServingObservation(label, workload.model_copy(update={"n_requests": 2 * n}), ttft, itl, both, counts)


def sweep_kv_capacity_tokens(data: SpeedMeasurementSet, sweep: SpeedSweep, catalog_memory_bytes: dict[str, int]) -> int:
    """KV tokens the run's engine would have had: MEMORY_SHARE x memory - weights - RESERVED_BYTES (an estimate)."""
    hw = data.hardware_by_id()[sweep.hardware]
    model = data.models_by_id()[sweep.model]
    memory = hw.memory_bytes or catalog_memory_bytes.get(hw.id)
    if memory is None:
        return 10_000_000
    free = MEMORY_SHARE * memory - model.weights_bytes - RESERVED_BYTES
    return max(1024, int(free / model.kv_bytes_per_token))


def flops_per_byte_by_class(data: SpeedMeasurementSet) -> dict[str, float]:
    """Median dense FLOP/s per byte/s of memory bandwidth of the set's accelerators with a published flop/s
    figure, per hardware class (Apple chips left out: their GPU figures are estimates already)."""
    ratios: dict[str, list[float]] = {}
    for hw in data.hardware:
        acc = accelerator_of(hw)
        if acc.flops_per_s is not None and not acc.flops_note and hw.hardware_class != "apple-unified":
            ratios.setdefault(hw.hardware_class, []).append(acc.flops_per_s / acc.memory_bandwidth_bytes_per_s)
    return {cls: float(np.median(values)) for cls, values in ratios.items()}


def sweep_accelerator(data: SpeedMeasurementSet, sweep: SpeedSweep, ratios: dict[str, float]) -> Accelerator:
    """The sweep's accelerator; without a published flop/s figure, bandwidth x its class's median FLOP per byte
    (an estimate, so that prefill takes time and the prefill scale of a calibration has something to scale)."""
    hw = accelerator_of(data.hardware_by_id()[sweep.hardware])
    ratio = ratios.get(hw.hardware_class)
    if hw.flops_per_s is not None or ratio is None:
        return hw
    return hw.model_copy(update={"flops_per_s": hw.memory_bandwidth_bytes_per_s * ratio,
                                 "flops_note": FLOPS_FROM_CLASS_NOTE})


#: How a sweep accelerator's flop/s were obtained when no figure is published (shown with the ledger's rows).
FLOPS_FROM_CLASS_NOTE = "flop/s estimated as bandwidth x the median FLOP per byte of its class's published cards"


def sweep_policy(data: SpeedMeasurementSet, sweep: SpeedSweep, catalog_memory_bytes: dict[str, int]):
    """The scheduler the sweep's engine ran with: what it picks on the run's GPU (knobs sized by the GPU, such as
    SGLang's chunked prefill and CUDA-graph batch cap, vLLM's max_num_seqs and token budget), then the settings the
    sweep records."""
    hw = data.hardware_by_id()[sweep.hardware]
    base = policy_for_gpu(sweep.engine, hw.memory_bytes or catalog_memory_bytes.get(hw.id), hw.id)
    known = {k: v for k, v in sweep.policy.items() if k in type(base).model_fields}
    return base.model_copy(update=known)


def sweep_rows(
    data: SpeedMeasurementSet, table: FitTable, catalog_memory_bytes: dict[str, int], *, calibrated: bool = True,
    max_evals: int = 50, sweeps: list[SpeedSweep] | None = None, uncalibrated: bool = True,
    per_sequence_prior_s: float = PER_SEQUENCE_PRIOR_S,
) -> list[LedgerRow]:
    """Uncalibrated predictions of every sweep level, and leave-one-load-level-out calibrated ones (a calibration
    starting from `per_sequence_prior_s` seconds of host time per running sequence where the engine has it)."""
    rows: list[LedgerRow] = []
    models = data.models_by_id()
    ratios = flops_per_byte_by_class(data)
    for sweep in sweeps if sweeps is not None else list(data.sweeps):
        hw = sweep_accelerator(data, sweep, ratios)
        model = shape_of(models[sweep.model])
        policy = sweep_policy(data, sweep, catalog_memory_bytes)
        capacity = sweep_kv_capacity_tokens(data, sweep, catalog_memory_bytes)
        params, _unused = table.lookup(speed_family(sweep.engine, sweep.engine_version), hw.hardware_class)
        caches_prompts = policy.scheduler_spec(capacity).prefix_reuse is PrefixReuse.SHARED
        levels = [level_observation(sweep, k, caches_prompts) for k in range(len(sweep.levels))]

        # called only within this iteration; the defaults bind this iteration's sweep and hardware (B023)
        def record(check: str, obs: ServingObservation, predicted: tuple[float | None, float | None],
                   sweep: SpeedSweep = sweep, hw=hw) -> None:
            for metric, measured, value in (("ttft_p50_s", obs.ttft_s, predicted[0]),
                                            ("itl_p50_s", obs.itl_s, predicted[1])):
                if measured and value:
                    rows.append(LedgerRow(check, sweep.engine, hw.hardware_class, metric, measured, value,
                                          sweep.source, obs.label))

        if uncalibrated:
            for obs in levels:
                record("serving uncalibrated", obs, simulate_medians(obs, model, hw, params, policy, capacity))
        if not calibrated:
            continue
        for k, anchor in enumerate(levels):
            fitted = fit_serving([anchor], model, hw, params, policy, capacity, max_evals=max_evals,
                                 per_sequence_prior_s=per_sequence_prior_s)
            for j, obs in enumerate(levels):
                if j != k:
                    record(
                        CALIBRATED_CHECK,
                        obs,
                        simulate_medians(obs, model, hw, fitted, policy, capacity),
                    )
    return rows


CALIBRATED_CHECK = "serving calibrated (one level -> others)"


def sweep_folds(sweeps: tuple[SpeedSweep, ...] | list[SpeedSweep]) -> tuple[list[SpeedSweep], list[SpeedSweep]]:
    """Two halves of the sweeps, split by accelerator (sorted ids, alternating), so no machine is in both."""
    hardware = sorted({s.hardware for s in sweeps})
    first = set(hardware[0::2])
    return [s for s in sweeps if s.hardware in first], [s for s in sweeps if s.hardware not in first]


def _median_abs(rows: list[LedgerRow]) -> float:
    return float(np.median(np.abs([r.error for r in rows]))) if rows else float("inf")


@dataclass(frozen=True)
class CrossFit:
    """Calibrated ledger rows judged with a per-sequence host overhead prior chosen on the other half of the sweeps."""

    rows: list[LedgerRow]
    #: per half: (its sweeps' hardware ids, the prior (s) chosen on the other half, that half's error per candidate)
    choices: list[tuple[tuple[str, ...], float, dict[float, float]]]
    #: the candidate with the lowest error over every sweep (what a team's own calibration uses)
    overall_best: float
    overall_errors: dict[float, float]


def cross_fitted_calibrated_rows(
    data: SpeedMeasurementSet, table: FitTable, catalog_memory_bytes: dict[str, int], *,
    candidates: tuple[float, ...] = PER_SEQUENCE_PRIOR_CANDIDATES_S, max_evals: int = 50,
) -> CrossFit:
    """Leave-one-load-level-out calibrated rows; each half of the sweeps uses the per-sequence host overhead prior
    that did best (median absolute TTFT and ITL error) on the other half, so no judged row took part in choosing it."""
    folds = sweep_folds(data.sweeps)
    by_candidate: dict[float, list[list[LedgerRow]]] = {
        w: [sweep_rows(data, table, catalog_memory_bytes, max_evals=max_evals, sweeps=fold, uncalibrated=False,
                       per_sequence_prior_s=w) for fold in folds]
        for w in candidates
    }
    rows: list[LedgerRow] = []
    choices = []
    for judged in (0, 1):
        chooser = 1 - judged
        errors = {w: _median_abs(by_candidate[w][chooser]) for w in candidates}
        chosen = min(candidates, key=lambda w: (errors[w], w))
        rows += by_candidate[chosen][judged]
        choices.append((tuple(sorted({s.hardware for s in folds[judged]})), chosen, errors))
    overall = {w: _median_abs(by_candidate[w][0] + by_candidate[w][1]) for w in candidates}
    return CrossFit(rows, choices, min(candidates, key=lambda w: (overall[w], w)), overall)


@dataclass(frozen=True)
class Summary:
    """Median and 90th-percentile absolute error of a set of ledger rows (fractions)."""

    check: str
    engine: str
    hardware_class: str
    metric: str
    n: int
    median_abs_error: float
    p90_abs_error: float


def summarize(rows: list[LedgerRow], by_engine: bool = True, by_class: bool = True) -> list[Summary]:
    """Median / p90 absolute error per check, engine (optional), hardware class (optional) and metric."""
    keys = sorted({(r.check, r.engine if by_engine else "all", r.hardware_class if by_class else "all", r.metric)
                   for r in rows})
    out = []
    for check, engine, cls, metric in keys:
        errs = np.abs([r.error for r in rows if r.check == check and (not by_engine or r.engine == engine)
                       and (not by_class or r.hardware_class == cls) and r.metric == metric])
        out.append(
            Summary(check, engine, cls, metric, len(errs), float(np.median(errs)), float(np.quantile(errs, 0.9)))
        )
    return out
