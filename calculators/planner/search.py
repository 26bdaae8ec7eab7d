"""Search engine x accelerator x GPUs per instance x weights x KV type x concurrency for the cheapest plan.

Each instance shape is first planned for memory (the engine's own plan must start and, for slot
engines, hold the longest request in every slot); survivors are simulated and their best rate within
the SLO found by bisection. The replicas needed follow from the load (requests are assumed spread
evenly over replicas by a load balancer), and the cost from the GPUs they take. Shapes whose cheapest
possible cost (at the throughput upper bound) cannot beat an engine's current best are skipped.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from calculators.engines import ENGINE_IDS, adapter
from calculators.engines.base import EngineAdapter
from calculators.errors import ServewiseInputError
from calculators.hardware.catalog import catalog_gpu, machine_for_gpu
from calculators.hardware.machine import Machine
from calculators.i18n import _, ngettext
from calculators.memory.compare import (
    ComparisonInputs,
    Workload,
    compare_engine,
    model_weights,
    valid_tensor_parallel_sizes,
    why_not_held,
)
from calculators.memory.kv import raw_kv_estimate
from calculators.memory.plan import MemoryPlan
from calculators.model.architecture import ModelArchitecture
from calculators.model.catalog import architecture_from_catalog
from calculators.planner.cost import CostBreakdown, cost_of, on_premises_usd_per_gpu_hour
from calculators.planner.rate_search import RatePoint, RateSearch, search_max_rate, throughput_upper_bound_per_s
from calculators.planner.spec import CostBasis, HardwareOption, PlannerSpec
from calculators.planner.weights_options import engine_accepts
from calculators.simulator.policy import SchedulerSpec
from calculators.simulator.roofline import StepCostModel
from calculators.speed.calibration import CalibrationProfile
from calculators.speed.inputs import hardware_class_of_machine, model_shape
from calculators.speed.model import Accelerator, group_name
from calculators.speed.predict import speed_params, step_cost_model, unfitted_params
from calculators.units import compact, number, percent, significant, with_unit
from knowledge.formats import CompatStatus
from knowledge.gpus import Gpu
from knowledge.loader import KnowledgeBase


@dataclass(frozen=True)
class Shape:
    """One instance of one engine: which GPU, how many per instance, weights and KV cache type."""

    engine: str
    gpu_id: str
    gpus_per_instance: int
    weights: str
    kv_cache_type: str


@dataclass(frozen=True)
class Candidate:
    """A shape at one concurrency setting that fits in memory, with its best rate and what it costs."""

    shape: Shape
    concurrency: int
    concurrency_setting: str
    settings: BaseModel
    plan: MemoryPlan
    weights_bytes: int
    kv_capacity_tokens: int | None
    max_rate_per_instance: float
    at_max_rate: RatePoint | None
    probes: tuple[RatePoint, ...]
    replicas: int | None  # None when no rate meets the SLO
    hosts: int | None
    cost: CostBreakdown | None
    meets_load: bool
    users_per_instance: float | None  # users the instance serves at its best rate (think time + mean e2e)
    reason: str | None = None  # why it does not meet the load


@dataclass(frozen=True)
class Rejection:
    """A configuration the planner did not keep, at which stage and why."""

    engine: str
    stage: str  # engine | weights | hardware | memory | slo | limit | price | pruned
    reason: str
    gpu_id: str | None = None
    gpus_per_instance: int | None = None
    weights: str | None = None
    kv_cache_type: str | None = None
    concurrency: int | None = None


@dataclass(frozen=True)
class PlannerResult:
    """Everything the search found: winners, every evaluated candidate, every rejection (estimates)."""

    spec: PlannerSpec
    model_name: str
    load_rate_per_s: float
    context_tokens: int
    mean_output_tokens: float
    candidates: tuple[Candidate, ...]
    rejections: tuple[Rejection, ...]
    best_by_engine: dict[str, Candidate]
    best: Candidate | None
    n_simulations: int
    notes: tuple[str, ...] = field(default_factory=tuple)


@dataclass(frozen=True)
class GpuPrice:
    """What one GPU-hour costs (US dollars) and whose figure it is; on premises, its two parts."""

    usd_per_gpu_hour: float
    source: str
    amortisation_usd_per_hour: float | None = None
    power_usd_per_hour: float | None = None
    source_url: str | None = None  # the page a listed price was read from, and its title
    source_title: str = ""


def _prices(spec: PlannerSpec, kb) -> dict[str, GpuPrice | str]:
    """Per GPU id: its price per GPU-hour (US dollars), or why it cannot be priced."""
    by_gpu: dict[str, GpuPrice | str] = {}
    for option in spec.hardware:
        gpu = catalog_gpu(kb, option.gpu_id)
        if spec.cost_basis is CostBasis.ON_PREMISES:
            assert spec.on_premises is not None
            if not isinstance(gpu.tdp_watts, (int, float)):
                by_gpu[gpu.id] = _("{gpu}: the catalog has no board power (TDP), so power cannot be priced").format(
                    gpu=gpu.name)
                continue
            amortisation, power = on_premises_usd_per_gpu_hour(spec.on_premises, gpu.tdp_watts)
            by_gpu[gpu.id] = GpuPrice(amortisation + power, _("your purchase price, period and tariff"),
                                      amortisation, power)
        elif option.usd_per_gpu_hour is not None:
            by_gpu[gpu.id] = GpuPrice(option.usd_per_gpu_hour, _("your price"))
        else:
            listed = kb.prices.cloud_prices_for(gpu.id)
            if not listed:
                by_gpu[gpu.id] = _("{gpu}: no example price in the knowledge base; enter your price per "
                                   "GPU-hour").format(gpu=gpu.name)
                continue
            cheapest = listed[0]
            source = _("{provider} list price: {version}").format(
                provider=cheapest.provider, version=_(cheapest.verified.version))
            by_gpu[gpu.id] = GpuPrice(cheapest.usd_per_gpu_hour, source, source_url=cheapest.source,
                                      source_title=cheapest.source_title)
    return by_gpu


def _gpu_counts(engine: EngineAdapter, arch, option: HardwareOption, machine_one: Machine) -> list[int]:
    """GPUs per instance the engine can use: TP degrees that divide the heads, all counts for layer splits."""
    if engine.multi_gpu_split == "single" or machine_one.unified_memory:
        return [1]
    if engine.multi_gpu_split == "tensor":
        return valid_tensor_parallel_sizes(arch, option.max_gpus_per_host)
    return list(range(1, option.max_gpus_per_host + 1))


def instance_step_cost(
    machine: Machine, engine: EngineAdapter, gpus: int, weights_bytes: int, arch,
    calibration: CalibrationProfile | None = None,
) -> StepCostModel | str:
    """The roofline step-time model of one instance on `gpus` GPUs, or why the catalog cannot give one (a
    calibration for this engine on this machine's hardware class replaces the default fit)."""
    if machine.memory_bandwidth_bytes_per_s is None or machine.dense_bf16_flops_per_s is None:
        return _("the catalog lacks this GPU's memory bandwidth or dense BF16 throughput")
    parallel = gpus if engine.multi_gpu_split == "tensor" else 1
    per_token = raw_kv_estimate(arch, 1, 1, 2).bytes_per_token_unbounded_layers
    # the speed model's shape: a MoE model's routed experts apart (a step reads those its tokens pick)
    shape = model_shape(arch, weights_bytes, per_token)
    accelerator = Accelerator(
        hardware_class="consumer-gddr",  # only the step-cost figures below are read from it
        memory_bandwidth_bytes_per_s=machine.memory_bandwidth_bytes_per_s * parallel,
        flops_per_s=machine.dense_bf16_flops_per_s * parallel,
        fp16_acc_flops_per_s=(machine.dense_fp16_acc_flops_per_s * parallel
                              if machine.dense_fp16_acc_flops_per_s is not None else None),
    )
    if engine.speed is None:  # an engine without a speed model: the roofline's stated default efficiencies
        cost = step_cost_model(shape, accelerator, unfitted_params())
    else:
        params, _basis = instance_speed_params(machine, engine, calibration)
        cost = step_cost_model(shape, accelerator, params)
    link = link_bytes_per_s_per_direction(machine.gpu_id) if parallel > 1 else None
    if link is None:
        return cost
    return cost.model_copy(update={"allreduce_s_per_token": allreduce_seconds_per_token(arch, parallel, link)})


#: Bytes of one activation element all-reduced between tensor-parallel ranks (BF16).
ACTIVATION_BYTES = 2


def link_bytes_per_s_per_direction(gpu_id: str | None) -> float | None:
    """The fastest peer link the catalog gives a bandwidth for, per direction (bytes/s); None when none has one.

    A figure stated as bidirectional, or with its basis unknown, is halved (the slower reading).
    """
    if gpu_id is None:
        return None
    from knowledge.loader import load_knowledge

    try:
        gpu = load_knowledge().gpus.get(gpu_id)
    except KeyError:  # a GPU outside the catalog has no link figure
        return None
    rates = [
        link.bandwidth_gb_per_s * 1e9 / (1 if link.bandwidth_basis == "per-direction" else 2)
        for link in gpu.interconnects
        if isinstance(link.bandwidth_gb_per_s, int | float)
    ]
    return max(rates) if rates else None


def allreduce_seconds_per_token(arch, tp: int, link_bytes_per_s: float) -> float:
    """Seconds of tensor-parallel all-reduce traffic per token of a step: two all-reduces per layer (attention and
    MLP outputs) of hidden x ACTIVATION_BYTES, a ring moving 2 (tp - 1) / tp of each over one link direction.
    The per-message latency is not included (no sourced figure): an optimistic estimate."""
    per_token_bytes = 2 * max(1, arch.n_layers) * arch.hidden_size * ACTIVATION_BYTES
    return per_token_bytes * 2.0 * (tp - 1) / tp / link_bytes_per_s


def _speed_basis_notes(engine: EngineAdapter, spec: PlannerSpec, kb) -> list[str]:
    """One note per hardware class the spec's GPUs fall in: which fitted speed parameters this engine used."""
    if engine.speed is None:
        return []
    seen: dict[str, str] = {}
    for option in spec.hardware:
        try:
            gpu = catalog_gpu(kb, option.gpu_id)
        except ServewiseInputError:
            continue
        _params, basis = instance_speed_params(machine_for_gpu(gpu, 1, working_set=kb.gpus.apple_working_set), engine)
        seen.setdefault(basis.group, _("{display_name}: speed basis default fit ({group}). {note}").format(
            display_name=engine.display_name, group=group_name(basis.group), note=basis.note))
    return [note.strip() for note in seen.values()]


def instance_speed_params(machine: Machine, engine: EngineAdapter, calibration: CalibrationProfile | None = None):
    """The speed model's parameters and basis for an engine on this machine's hardware class: the calibration
    when it was fitted for this engine and class, else the default fit."""
    gpu = None
    if machine.gpu_id is not None:
        from knowledge.loader import load_knowledge

        gpu = load_knowledge().gpus.get(machine.gpu_id)
    hardware_class = hardware_class_of_machine(machine, gpu)
    usable = calibration if calibration is not None and calibration.applies_to(engine.id, hardware_class) else None
    return speed_params(engine.id, hardware_class, usable)


def _context_tokens(spec: PlannerSpec) -> tuple[int, float]:
    """(longest prompt + output among the drawn requests, mean output tokens) of the spec's workload."""
    rng = random.Random(spec.seed)
    longest, outputs = 0, 0
    for _unused in range(spec.requests_per_simulation):
        prompt, output = spec.prompt.sample(rng), spec.output.sample(rng)
        longest = max(longest, prompt + output)
        outputs += output
    return longest, outputs / spec.requests_per_simulation


@dataclass
class _Search:
    """One planner run's inputs and what it has found so far (candidates, rejections, each engine's best)."""

    spec: PlannerSpec
    kb: KnowledgeBase
    arch: ModelArchitecture
    context_tokens: int
    mean_output_tokens: float
    load_rate_per_s: float
    candidates: list[Candidate] = field(default_factory=list)
    rejections: list[Rejection] = field(default_factory=list)
    best_by_engine: dict[str, Candidate] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class _ShapeChoice:
    """The engine x GPU x weights x KV type being searched over GPU counts and concurrency, with its price."""

    engine: EngineAdapter
    option: HardwareOption
    gpu: Gpu
    machine_one: Machine
    weights: str
    weights_bytes: int
    kv_cache_type: str
    price: GpuPrice


def plan_capacity(spec: PlannerSpec, kb) -> PlannerResult:
    """The cheapest configuration meeting `spec.slo` at `spec.load`, per engine and overall (US dollars)."""
    arch = architecture_from_catalog(spec.model_id, kb)
    if not arch.params_total:
        raise ServewiseInputError(_("{name}: the parameter count is unknown, so weights cannot be sized").format(
                                    name=arch.name))
    engines = spec.engines or ENGINE_IDS
    unknown = [e for e in engines if e not in ENGINE_IDS]
    if unknown:
        raise ServewiseInputError(ngettext("unknown engine {unknown}; use {engine_ids}",
                                           "unknown engines {unknown}; use {engine_ids}", len(unknown)).format(
                                    unknown=', '.join(unknown), engine_ids=', '.join(ENGINE_IDS)))
    load = spec.load.rate_per_s
    context, mean_output = _context_tokens(spec)
    prices = _prices(spec, kb)
    search = _Search(spec, kb, arch, context, mean_output, load)
    simulations = 0
    notes = [
        _("Replicas are assumed to share the load evenly (a load balancer in front); each instance runs on one "
          "host."),
        _("Step times come from the speed model: a roofline of the GPU's bandwidth and dense BF16 throughput with "
          "each engine's efficiencies and step overhead fitted to public measurements for its hardware class "
          "(knowledge/speed_measurements.yaml; accuracy per class in the README). Tensor-parallel instances add "
          "their all-reduce traffic over the fastest peer link the catalog gives a bandwidth for (none: not "
          "modelled); per-message latency is not, so TP instances are still estimated optimistic."),
    ]
    if spec.load.users is not None:
        notes.append(_("{users} users pausing {think_time_s}\u00a0s between requests are planned as "
                       "{load}\u00a0requests/s, the most they could send: answers take time, so real demand "
                       "is lower.").format(users=number(spec.load.users),
                           think_time_s=compact(spec.load.think_time_s, 3),
                                         load=significant(load)))

    for engine in engines:
        engine_adapter = adapter(engine)
        notes += _speed_basis_notes(engine_adapter, spec, kb)
        if engine_adapter.policy_from_plan is None:
            search.rejections.append(Rejection(engine, "engine", _("servewise has no scheduler model for this "
                                               "engine's server yet, so its latency under load cannot be "
                                               "simulated")))
            continue
        for option in spec.hardware:
            gpu = catalog_gpu(kb, option.gpu_id)
            price = prices[gpu.id]
            if isinstance(price, str):
                search.rejections.append(Rejection(engine, "price", price, gpu_id=gpu.id))
                continue
            machine_one = machine_for_gpu(gpu, 1, working_set=kb.gpus.apple_working_set)
            for weights in spec.weights:
                accepted = engine_accepts(kb.formats, engine, weights)
                if accepted.status is not CompatStatus.NATIVE:
                    search.rejections.append(Rejection(engine, "weights", accepted.reason, gpu_id=gpu.id,
                                                       weights=weights))
                    continue
                weights_bytes = model_weights(kb.formats, arch, weights).bytes
                for kv_type in spec.kv_cache_types:
                    simulations += _search_shape(search, _ShapeChoice(
                        engine_adapter, option, gpu, machine_one, weights, weights_bytes, kv_type, price))
    notes += search.notes
    best = min(search.best_by_engine.values(), key=_cost_key, default=None)
    return PlannerResult(
        spec=spec, model_name=arch.name, load_rate_per_s=load, context_tokens=context, mean_output_tokens=mean_output,
        candidates=tuple(search.candidates), rejections=tuple(search.rejections),
        best_by_engine=search.best_by_engine, best=best, n_simulations=simulations, notes=tuple(notes),
    )


def _note_graph_cap(search: _Search, engine: EngineAdapter, gpu_name: str, scheduler: SchedulerSpec,
                    cost_model: StepCostModel) -> None:
    """Say once per engine and GPU when decode batches above the engine's CUDA-graph cap are simulated eagerly."""
    cap = scheduler.graph_max_batch
    if cap is None or scheduler.max_running <= cap:
        return
    floor_ms = scheduler.eager_host_s_per_layer * cost_model.n_layers * 1000
    note = _("{engine} on {gpu}: decode batches above {knob} = {cap} run without a CUDA graph; the simulation gives "
             "each such step at least {floor}\u00a0ms (the host's launch time of an eager forward pass).").format(
                 engine=engine.display_name, gpu=gpu_name, knob=f"`{scheduler.graph_max_batch_knob}`",
                 cap=number(cap), floor=compact(floor_ms, 1))
    if note not in search.notes:
        search.notes.append(note)


def _cost_key(candidate: Candidate) -> tuple[float, float]:
    assert candidate.cost is not None
    return candidate.cost.usd_per_hour, -candidate.max_rate_per_instance


def _search_shape(search: _Search, choice: _ShapeChoice) -> int:
    """Plan and simulate one engine x GPU x weights x KV type over GPU counts and concurrency; return sims run."""
    spec, arch, context = search.spec, search.arch, search.context_tokens
    engine_adapter, gpu, kv_type = choice.engine, choice.gpu, choice.kv_cache_type
    engine = engine_adapter.id
    rejections = search.rejections
    simulations = 0
    fitted_layer_split = False
    for gpus in _gpu_counts(engine_adapter, arch, choice.option, choice.machine_one):
        if engine_adapter.multi_gpu_split == "layer" and fitted_layer_split:
            break  # more GPUs only add cost to a layer split that already fits
        machine = machine_for_gpu(gpu, gpus, working_set=search.kb.gpus.apple_working_set)
        cost_model = instance_step_cost(machine, engine_adapter, gpus, choice.weights_bytes, arch)
        where: dict[str, Any] = {"gpu_id": gpu.id, "gpus_per_instance": gpus, "weights": choice.weights,
                                 "kv_cache_type": kv_type}
        if isinstance(cost_model, str):
            rejections.append(Rejection(engine, "hardware", cost_model, **where))
            break
        instances_per_host = choice.option.max_gpus_per_host // gpus
        for concurrency in spec.concurrency_options:
            where_n = {**where, "concurrency": concurrency}
            overrides = {engine_adapter.tensor_parallel_key: gpus} if engine_adapter.tensor_parallel_key else {}
            inputs = ComparisonInputs(arch=arch, machine=machine, weights_bytes=choice.weights_bytes,
                                      overrides={engine: overrides})
            comparison = compare_engine(inputs, engine, Workload(context, concurrency, kv_type))
            if comparison.not_applicable or comparison.error:
                rejections.append(Rejection(engine, "engine", comparison.not_applicable or comparison.error or "",
                                            **where_n))
                return simulations
            plan = comparison.plan
            assert plan is not None and comparison.settings is not None
            if plan.refusal is not None or (not engine_adapter.pooled_kv_cache and not comparison.holds):
                rejections.append(Rejection(engine, "memory", why_not_held(engine, plan, Workload(
                    context, concurrency, kv_type), machine) or plan.refusal or _("does not fit"), **where_n))
                continue
            fitted_layer_split = True
            assert engine_adapter.policy_from_plan is not None
            policy, kv_tokens = engine_adapter.policy_from_plan(comparison.settings, plan)
            scheduler = policy.scheduler_spec(kv_tokens)
            _note_graph_cap(search, engine_adapter, gpu.name, scheduler, cost_model)
            if scheduler.kv_capacity_tokens < context:
                rejections.append(Rejection(engine, "memory", _("the KV cache holds {kv_capacity_tokens}\u00a0"
                    "tokens, less than one {context}-token request").format(
                    kv_capacity_tokens=number(scheduler.kv_capacity_tokens), context=number(context)), **where_n))
                continue
            bound = throughput_upper_bound_per_s(cost_model, scheduler.max_running, search.mean_output_tokens)
            floor_replicas = math.ceil(search.load_rate_per_s / bound) if bound > 0 else math.inf
            floor_cost = floor_replicas * gpus * choice.price.usd_per_gpu_hour
            incumbent = search.best_by_engine.get(engine)
            if incumbent is not None and incumbent.cost is not None and floor_cost >= incumbent.cost.usd_per_hour:
                floor = f"${incumbent.cost.usd_per_hour:.2f}/h"
                rejections.append(Rejection(engine, "pruned", _("cannot cost less than the {floor} already "
                    "found, even at its throughput upper bound").format(floor=floor), **where_n))
                continue
            found = search_max_rate(policy, cost_model, kv_tokens, spec.slo, spec.prompt, spec.output,
                                    spec.shared_prefix_fraction, spec.requests_per_simulation, spec.seed,
                                    scheduler.max_running, search.mean_output_tokens)
            simulations += len(found.probes)
            candidate = _candidate(search, choice, _Simulated(
                Shape(engine, gpu.id, gpus, choice.weights, kv_type), concurrency, comparison.settings, plan,
                kv_tokens, found, instances_per_host))
            search.candidates.append(candidate)
            if not candidate.meets_load:
                rejections.append(Rejection(engine, "slo" if candidate.replicas is None else "limit",
                                            candidate.reason or "", **where_n))
                continue
            if incumbent is None or _cost_key(candidate) < _cost_key(incumbent):
                search.best_by_engine[engine] = candidate
    return simulations


@dataclass(frozen=True)
class _Simulated:
    """One instance shape at one concurrency setting that fits, with its rate search's outcome."""

    shape: Shape
    concurrency: int
    settings: BaseModel
    plan: MemoryPlan
    kv_capacity_tokens: int | None
    found: RateSearch
    instances_per_host: int


def _candidate(search: _Search, choice: _ShapeChoice, simulated: _Simulated) -> Candidate:
    """Replicas, hosts and cost for one simulated shape (or why it cannot meet the load)."""
    spec, found, price, load = search.spec, simulated.found, choice.price, search.load_rate_per_s
    rate = found.max_rate_per_s
    common: dict[str, Any] = {"shape": simulated.shape, "concurrency": simulated.concurrency,
              "concurrency_setting": choice.engine.concurrency_key or "", "settings": simulated.settings,
              "plan": simulated.plan, "weights_bytes": choice.weights_bytes,
              "kv_capacity_tokens": simulated.kv_capacity_tokens, "max_rate_per_instance": rate,
              "at_max_rate": found.best, "probes": found.probes}
    if rate <= 0 or found.best is None:
        worst = found.probes[0]
        return Candidate(**common, replicas=None, hosts=None, cost=None, meets_load=False, users_per_instance=None,
                         reason=_slo_miss(spec, worst))
    replicas = max(1, math.ceil(load / rate - 1e-9))
    hosts = math.ceil(replicas / simulated.instances_per_host)
    total_gpus = replicas * simulated.shape.gpus_per_instance
    cost = cost_of(total_gpus, price.usd_per_gpu_hour, price.source, load * search.mean_output_tokens,
                   spec.cost_basis, price.amortisation_usd_per_hour, price.power_usd_per_hour,
                   source_url=price.source_url, source_title=price.source_title)
    e2e = found.best.mean_e2e_s or 0.0
    users = rate * (spec.load.think_time_s + e2e)
    if hosts > spec.max_hosts:
        return Candidate(**common, replicas=replicas, hosts=hosts, cost=cost, meets_load=False,
                         users_per_instance=users,
                         reason=ngettext("needs {replicas} instances ({total_gpus} GPUs on {hosts} hosts), more "
                                         "than the {max_hosts} host allowed",
                                         "needs {replicas} instances ({total_gpus} GPUs on {hosts} hosts), more "
                                         "than the {max_hosts} hosts allowed", spec.max_hosts).format(
                                  replicas=number(replicas), total_gpus=number(total_gpus), hosts=number(hosts),
                                  max_hosts=number(spec.max_hosts)))
    return Candidate(**common, replicas=replicas, hosts=hosts, cost=cost, meets_load=True, users_per_instance=users)


def _slo_miss(spec: PlannerSpec, point: RatePoint) -> str:
    """Why even the lowest simulated rate misses the SLO, in the SLO's own terms."""
    slo = spec.slo
    if point.ttft_s is None or point.ttft_s > slo.ttft_s:
        shown = _("no first token") if point.ttft_s is None else with_unit(significant(point.ttft_s), "s")
        return _("p{percentile} time to first token is {shown} even at {rate}\u00a0requests/s (target "
                 "{target}\u00a0s)").format(percentile=compact(slo.ttft_percentile, 2), shown=shown,
                                       rate=significant(point.rate_per_s), target=compact(slo.ttft_s, 3))
    if point.itl_s is not None and point.itl_s > slo.itl_s:
        return _("p{percentile} inter-token latency is {itl_ms}\u00a0ms even at {rate}\u00a0requests/s (target "
                 "{target_ms}\u00a0ms)").format(percentile=compact(slo.itl_percentile, 2),
                     itl_ms=significant(point.itl_s * 1000),
                                           rate=significant(point.rate_per_s), target_ms=compact(slo.itl_s * 1000, 3))
    if point.kv_overflow:
        return _("the KV cache outgrows the memory it has even at {rate}\u00a0requests/s (the engine does not queue on "
                 "memory: it would swap or fail)").format(rate=significant(point.rate_per_s))
    if point.failed_share > slo.max_failed_share:
        return _("{failed} of requests fail even at {rate}\u00a0requests/s").format(
            failed=percent(point.failed_share, 1), rate=significant(point.rate_per_s))
    return _("the queue keeps growing even at {rate}\u00a0requests/s").format(rate=significant(point.rate_per_s))
