"""Least-squares fit of the speed model's efficiencies to the public measurements (knowledge/speed_measurements.yaml).

Decode: seconds per token y = x / memory_efficiency + decode_overhead_s (+ graphless_launch_s x L for a build that
replays no GPU graph, L the kernels its host launches per token), where x is the bytes a step reads divided by peak
bandwidth. Prefill: seconds y = f / compute_efficiency + prefill_overhead_s, where f
is the prefill's FLOPs divided by peak flop/s (only hardware whose flop/s are known). Both are fitted by
weighted least squares on relative error (rows divided by y), per engine family and hardware class, with
the efficiency capped at 1 and overheads at >= 0. Bands come from leave-one-out residuals of each group,
so they describe how well the group predicts a measurement it has not seen.

numpy is used for the small least-squares solves (it is already installed as a pandas dependency).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from calculators.i18n import _
from calculators.speed.families import decode_family, fp16_accumulate, graphless_launches, speed_family
from calculators.speed.model import (
    APPLE_FLOPS_NOTE,
    Accelerator,
    Band,
    ModelShape,
    SpeedBasis,
    SpeedParams,
    apple_flops_from_bandwidth,
    family_name,
    hardware_class_name,
    tensor_flops_per_s,
)
from knowledge.speed import (
    FIT_FILE,
    SpeedHardware,
    SpeedMeasurementSet,
    SpeedModelArtefact,
    SpeedPoint,
    load_speed_measurements,
)

#: A group needs this many measurements to get its own parameters; smaller groups borrow (see `lookup`).
MIN_POINTS = 3
#: Used when no measurement at all constrains prefill for a group: stated as assumed, never as fitted.
ASSUMED_COMPUTE_EFFICIENCY = 0.5
DECODE_METRICS = ("decode_tokens_per_s", "tpot_ms")
PREFILL_METRICS = ("prefill_tokens_per_s", "ttft_ms")


def accelerator_of(hw: SpeedHardware) -> Accelerator:
    """The speed model's view of a measurement's hardware entry."""
    flops = hw.dense_fp16_tflops
    bandwidth = hw.memory_bandwidth_gb_per_s * 1e9
    if not isinstance(flops, (int, float)) and hw.hardware_class == "apple-unified" and hw.name.startswith("Apple"):
        return Accelerator(hardware_class=hw.hardware_class, memory_bandwidth_bytes_per_s=bandwidth,
                           flops_per_s=apple_flops_from_bandwidth(bandwidth), label=hw.name,
                           flops_note=APPLE_FLOPS_NOTE)
    fp16_acc = hw.dense_fp16_acc_tflops
    return Accelerator(
        hardware_class=hw.hardware_class,
        memory_bandwidth_bytes_per_s=bandwidth,
        flops_per_s=flops * 1e12 if isinstance(flops, (int, float)) else None,
        fp16_acc_flops_per_s=fp16_acc * 1e12 if isinstance(fp16_acc, (int, float)) else None,
        label=hw.name,
    )


def shape_of(model: SpeedModelArtefact) -> ModelShape:
    """The speed model's view of a measured model artefact."""
    return ModelShape(
        weights_read_bytes=model.weights_read_bytes,
        params_active=model.params_active,
        n_layers=model.n_layers,
        attention_q_dim=model.attention_q_dim,
        kv_bytes_per_token=model.kv_bytes_per_token,
        label=model.name,
    )


@dataclass(frozen=True)
class Observation:
    """One measurement turned into (feature seconds, measured seconds) for one fit."""

    point: SpeedPoint
    hardware_class: str
    family: str
    x_s: float  # bytes / peak bandwidth (decode) or FLOPs / peak flop/s (prefill)
    y_s: float  # measured seconds per token (decode) or per prefill
    launches: float = 0.0  # kernels the host launches per decode token of a build without graph replay (else 0)


def point_launches(point: SpeedPoint, model: SpeedModelArtefact) -> float:
    """Host kernel launches per token of a decode point whose build replays no GPU graph (`graph_replay` False), else 0.

    Grouped-query attention is read from the artefact: a 16-bit cache holding fewer K/V channels than the queries use.
    """
    if point.graph_replay is not False or point.metric not in DECODE_METRICS:
        return 0.0
    if model.weights_quantized is None:
        raise ValueError(f"point {point.id}: graph-less step needs weights_quantized on model {model.id}")
    grouped = model.kv_bytes_per_token < 2 * 2 * model.n_layers * model.attention_q_dim
    return float(graphless_launches(point.engine, model.n_layers, model.weights_quantized, grouped))


def measured_seconds(point: SpeedPoint) -> float:
    """Seconds per decode token (decode metrics) or per prefill (prefill metrics) a point reports."""
    if point.metric == "decode_tokens_per_s":
        return point.batch / point.value if point.batch > 1 else 1.0 / point.value
    if point.metric == "prefill_tokens_per_s":
        return point.prompt_tokens / point.value
    return point.value / 1000.0


def decode_feature_s(model: ModelShape, hw: Accelerator, context_tokens: float, batch: int = 1) -> float:
    """Seconds a decode step's bytes take at 100 % of peak bandwidth."""
    return (
        model.weights_read_bytes + batch * context_tokens * model.kv_bytes_per_token
    ) / hw.memory_bandwidth_bytes_per_s


def prefill_feature_s(model: ModelShape, hw: Accelerator, prompt_tokens: int, fp16_accumulate: bool) -> float | None:
    """Seconds a prefill's FLOPs take at 100 % of the peak flop/s the engine's kernels run at (`fp16_accumulate`:
    see model.tensor_flops_per_s); None when flop/s are unknown."""
    rate = tensor_flops_per_s(hw, fp16_accumulate)
    if rate is None:
        return None
    n = float(prompt_tokens)
    flops = 2.0 * model.params_active * n + 2.0 * model.n_layers * model.attention_q_dim * n * n
    return flops / rate


def observation_family(point: SpeedPoint, model: SpeedModelArtefact | None = None) -> str:
    """The fit family a point belongs to: decode by the engine version's (and its weight kernel path's) family,
    prefill by the engine's family.

    An engine version that changed the per-step host work (vLLM's V1 engine core: "re-architects the scheduler,
    KV cache manager, worker, sampler, and API server" while it "retains ... the models, GPU kernels", vLLM V1
    user guide, docs.vllm.ai/en/v0.8.0/getting_started/v1_user_guide.html) keeps its decode points apart;
    prefill, which the kernels bound, pools every version of the engine.
    """
    if point.metric in DECODE_METRICS:
        quantized = model.weights_quantized if model is not None else None
        return decode_family(point.engine, point.engine_version, point.backend, quantized)
    return speed_family(point.engine)


def observations(data: SpeedMeasurementSet, metrics: tuple[str, ...]) -> list[Observation]:
    """Every point of `data` with one of `metrics`, as fit rows (prefill rows need known flop/s)."""
    hardware = data.hardware_by_id()
    models = data.models_by_id()
    rows = []
    for point in data.points:
        if point.metric not in metrics:
            continue
        hw = accelerator_of(hardware[point.hardware])
        artefact = models[point.model]
        model = shape_of(artefact)
        if point.metric in DECODE_METRICS:
            x = decode_feature_s(model, hw, point.context_tokens, point.batch)
        else:
            feature = prefill_feature_s(model, hw, point.prompt_tokens, fp16_accumulate(point.engine))
            if feature is None:
                continue
            x = feature
        family = observation_family(point, artefact)
        rows.append(Observation(point, hw.hardware_class, family, x, measured_seconds(point),
                                point_launches(point, artefact)))
    return rows


def observation_seconds(params: SpeedParams, row: Observation) -> float:
    """Seconds `params` predict for one fit row (a decode token or a whole prefill)."""
    if row.point.metric in DECODE_METRICS:
        return row.x_s / params.memory_efficiency + params.decode_overhead_s + params.graphless_launch_s * row.launches
    return row.x_s / params.compute_efficiency + params.prefill_overhead_s


def fit_line(x: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """(slope >= 1, intercept >= 0) minimising the relative error of slope * x + intercept against y."""
    weights = 1.0 / y
    design = np.column_stack([x * weights, weights])
    if len(x) >= 2 and np.ptp(x) > 0:
        slope, intercept = np.linalg.lstsq(design, np.ones_like(y), rcond=None)[0]
    else:
        slope, intercept = 1.0, -1.0  # one distinct x: no overhead can be told apart, fit the slope alone
    if intercept < 0:
        intercept = 0.0
        slope = float(np.sum(x * weights**2 * y) / np.sum((x * weights) ** 2))
    if slope < 1.0:
        slope = 1.0
        intercept = max(0.0, float(np.sum((y - x) * weights**2) / np.sum(weights**2)))
    return float(slope), float(intercept)


@dataclass(frozen=True)
class LineFit:
    """A group's fitted line: seconds = slope x x_s + intercept + per_launch_s x launches."""

    slope: float
    intercept: float
    per_launch_s: float = 0.0

    def seconds(self, row: Observation) -> float:
        """Predicted seconds of one fit row."""
        return self.slope * row.x_s + self.intercept + self.per_launch_s * row.launches


def _constrained_fit(x: np.ndarray, launches: np.ndarray, y: np.ndarray) -> LineFit:
    """slope >= 1, intercept >= 0, per-launch seconds >= 0 minimising the relative error, by trying every active set
    (three unknowns: eight small weighted least-squares solves)."""
    weights = 1.0 / y
    columns = (x * weights, weights, launches * weights)
    best: tuple[float, LineFit] | None = None
    for slope_at_bound in (False, True):
        for intercept_zero in (False, True):
            for launch_zero in (False, True):
                fixed = np.asarray([1.0 if slope_at_bound else np.nan, 0.0 if intercept_zero else np.nan,
                                    0.0 if launch_zero else np.nan])
                free = [i for i in range(3) if np.isnan(fixed[i])]
                target = np.ones_like(y) - sum((columns[i] * fixed[i] for i in range(3) if i not in free),
                                               np.zeros_like(y))
                coef = fixed.copy()
                if free:
                    design = np.column_stack([columns[i] for i in free])
                    coef[free] = np.linalg.lstsq(design, target, rcond=None)[0]
                if coef[0] < 1.0 - 1e-12 or coef[1] < -1e-15 or coef[2] < -1e-15:
                    continue
                loss = float(np.sum((sum(columns[i] * coef[i] for i in range(3)) - 1.0) ** 2))
                if best is None or loss < best[0]:
                    best = (loss, LineFit(float(coef[0]), max(0.0, float(coef[1])), max(0.0, float(coef[2]))))
    assert best is not None  # slope 1 with both others 0 is always feasible
    return best[1]


def fit_rows(rows: list[Observation]) -> LineFit:
    """The group's line: `fit_line` on (x, y), with a per-launch term only when some row launches without graphs."""
    x = np.asarray([r.x_s for r in rows])
    y = np.asarray([r.y_s for r in rows])
    launches = np.asarray([r.launches for r in rows])
    if not np.any(launches > 0):
        return LineFit(*fit_line(x, y))
    return _constrained_fit(x, launches, y)


def band_from(residuals: list[float]) -> Band:
    """Band from relative residuals (measured rate / predicted rate - 1)."""
    if not residuals:
        return Band(low=0.0, high=0.0, median_abs=0.0, n_points=0)
    r = np.asarray(residuals)
    return Band(
        low=min(0.0, float(np.quantile(r, 0.1))),
        high=max(0.0, float(np.quantile(r, 0.9))),
        median_abs=float(np.median(np.abs(r))),
        n_points=len(residuals),
    )


def loo_residuals(rows: list[Observation]) -> list[float]:
    """Leave-one-out relative residuals of the rate (measured / predicted - 1) within one group."""
    residuals = []
    for i, row in enumerate(rows):
        line = fit_rows(rows[:i] + rows[i + 1:])
        residuals.append(line.seconds(row) / row.y_s - 1.0)  # rate ratio: (1/y) / (1/pred) - 1
    return residuals


@dataclass(frozen=True)
class GroupFit:
    """Parameters of one (engine family, hardware class) group and what they were fitted on."""

    family: str
    hardware_class: str
    params: SpeedParams
    decode_points: tuple[str, ...]
    prefill_points: tuple[str, ...]
    prefill_fitted: bool


@dataclass(frozen=True)
class FitTable:
    """Every fitted group, keyed by (engine family, hardware class)."""

    groups: dict[tuple[str, str], GroupFit]

    def lookup(self, family: str, hardware_class: str, fallback: str | None = None) -> tuple[SpeedParams, SpeedBasis]:
        """Parameters for a family on a class, with the basis saying which group (or fallback) gave them.

        Order: the group itself; else the `fallback` family (a similar runtime) on the same class; else any
        family on the same class; else the same family on another class (each fallback is stated). Raises
        when nothing at all is fitted.
        """
        exact = self.groups.get((family, hardware_class))
        if exact is not None:
            band = exact.params.decode_band
            few = "" if band.group_points is None else _(
                "Only {own} measurements of {family} on {hardware_class}: the band is the spread of all {n} "
                "on the class.").format(own=band.group_points, family=family_name(family),
                                        hardware_class=hardware_class_name(hardware_class), n=band.n_points)
            return exact.params, SpeedBasis(
                kind="default-fit",
                engine_family=family,
                hardware_class=hardware_class,
                group=f"{family} / {hardware_class}",
                note=few,
            )
        ordered = sorted(self.groups.items(), key=lambda kv: (kv[0][0] != fallback, kv[0]))
        for (fam, cls), fit in ordered:
            if cls == hardware_class:
                return fit.params, SpeedBasis(
                    kind="default-fit",
                    engine_family=family,
                    hardware_class=hardware_class,
                    group=f"{fam} / {cls}",
                    note=_("No measurements of {family} on {hardware_class}: parameters of {fam} on the "
                           "same class.").format(family=family_name(family),
                                                 hardware_class=hardware_class_name(hardware_class),
                                                 fam=family_name(fam)),
                )
        for (fam, cls), fit in sorted(self.groups.items()):
            if fam == family:
                return fit.params, SpeedBasis(
                    kind="default-fit",
                    engine_family=family,
                    hardware_class=hardware_class,
                    group=f"{fam} / {cls}",
                    note=_("No measurements on {hardware_class}: parameters of {family} on {cls}.").format(
                           hardware_class=hardware_class_name(hardware_class), family=family_name(family),
                           cls=hardware_class_name(cls)),
                )
        raise LookupError(_("the speed fit has no groups"))


#: A group with fewer leave-one-out residuals of its own than this gets the spread of its whole hardware class: three
#: points that agree say little about a machine the fit has not seen.
BAND_MIN_POINTS = 10


def _band_for(own: list[float], class_residuals: list[float]) -> Band:
    """The group's band, or its class's (all groups' residuals on the class) when it has too few of its own."""
    if len(own) >= BAND_MIN_POINTS or len(class_residuals) <= len(own):
        return band_from(own)
    return band_from(class_residuals).model_copy(update={"group_points": len(own)})


def _group_fp16_accumulate(rows: list[Observation]) -> bool:
    """The tensor rate a group's prefill features were computed at: its engines' (a family is one set of kernels)."""
    rates = {fp16_accumulate(r.point.engine) for r in rows}
    if len(rates) > 1:
        raise ValueError(f"fit family {rows[0].family} mixes engines whose kernels run at different tensor rates")
    return rates.pop()


def _fit_groups(data: SpeedMeasurementSet) -> dict[tuple[str, str], GroupFit]:
    decode = observations(data, DECODE_METRICS)
    prefill = observations(data, PREFILL_METRICS)
    keys = sorted({(r.family, r.hardware_class) for r in decode})
    fitted_rows: dict[tuple[str, str], tuple[list[Observation], list[Observation]]] = {}
    for key in keys:
        rows = [r for r in decode if (r.family, r.hardware_class) == key]
        if len(rows) < MIN_POINTS:
            continue
        engine_family = speed_family(rows[0].point.engine)  # prefill pools the engine's versions
        prow = [r for r in prefill if (r.family, r.hardware_class) == (engine_family, key[1])]
        fitted_rows[key] = (rows, prow if len(prow) >= MIN_POINTS else [])
    decode_res = {key: loo_residuals(rows) for key, (rows, _p) in fitted_rows.items()}
    # Prefill groups pool an engine's versions: keyed by (engine family, class) so a pool counts once on its class.
    prefill_res = {(prow[0].family, key[1]): loo_residuals(prow) for key, (_r, prow) in fitted_rows.items() if prow}

    def on_class(residuals: dict[tuple[str, str], list[float]], hardware_class: str) -> list[float]:
        return [r for (_fam, cls), values in sorted(residuals.items()) if cls == hardware_class for r in values]

    groups = {}
    for key, (rows, prow) in fitted_rows.items():
        line = fit_rows(rows)
        slope, overhead = line.slope, line.intercept
        fitted = bool(prow)
        if fitted:
            p_slope, p_overhead = fit_line(np.asarray([r.x_s for r in prow]), np.asarray([r.y_s for r in prow]))
            compute_eff = 1.0 / p_slope
            prefill_band: Band | None = _band_for(prefill_res[(prow[0].family, key[1])], on_class(prefill_res, key[1]))
        else:
            compute_eff, p_overhead, prefill_band = ASSUMED_COMPUTE_EFFICIENCY, overhead, None
        params = SpeedParams(
            memory_efficiency=1.0 / slope,
            decode_overhead_s=overhead,
            graphless_launch_s=line.per_launch_s,
            compute_efficiency=compute_eff,
            prefill_overhead_s=p_overhead,
            fp16_accumulate=_group_fp16_accumulate(rows + prow),
            decode_band=_band_for(decode_res[key], on_class(decode_res, key[1])),
            prefill_band=prefill_band,
        )
        groups[key] = GroupFit(
            key[0],
            key[1],
            params,
            tuple(r.point.id for r in rows),
            tuple(r.point.id for r in prow),
            fitted,
        )
    return groups


def fit_table(data: SpeedMeasurementSet) -> FitTable:
    """Fit every (engine family, hardware class) group of `data` that has enough decode measurements."""
    return FitTable(_fit_groups(data))


@functools.lru_cache(maxsize=1)
def default_fit() -> FitTable:
    """The default fit, made once per process from knowledge/speed_measurements.yaml (never the held-out file)."""
    return fit_table(load_speed_measurements(FIT_FILE))
