"""One model, one machine, one workload: every engine's memory plan side by side, and each engine's capacity.

A `Workload` (tokens retained per sequence, concurrent active sequences, KV cache type) is written in each
engine's own settings (llama-server -c = context x slots with -np = slots; Ollama's OLLAMA_CONTEXT_LENGTH
and OLLAMA_NUM_PARALLEL; vLLM max_model_len / max_num_seqs / kv_cache_dtype; SGLang context_length /
max_running_requests / kv_cache_dtype; MLX LM kv_bits and its batch). User overrides per engine replace
any of those keys. Capacity searches vary the workload keys and keep the other overrides.

Capacity searches over these plans live in `calculators.memory.capacity`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from pydantic import BaseModel, ValidationError

from calculators.engines import ENGINE_IDS, adapter
from calculators.engines.base import DraftModel
from calculators.errors import ServewiseInputError, validation_problem
from calculators.hardware.machine import Machine
from calculators.i18n import _
from calculators.memory.plan import MemoryPlan
from calculators.model.architecture import LayerGeometry, ModelArchitecture
from calculators.model.weights import WeightsEstimate, estimate_weights, moe_expert_params
from knowledge.formats import FormatsSection

#: KV cache element types a workload can ask for (URL slugs). Each engine spells them its own way below.
KV_CACHE_TYPES: tuple[str, ...] = ("16-bit", "8-bit", "4-bit")



@dataclass(frozen=True)
class Workload:
    """What the service must hold at once: `sequences` active sequences of `context_tokens` each.

    `context_tokens` counts prompt plus generated output retained in the cache, per sequence.
    """

    context_tokens: int
    sequences: int = 1
    kv_cache_type: str = "16-bit"

    def __post_init__(self) -> None:
        if self.context_tokens < 1:
            raise ServewiseInputError(_("the context per sequence must be at least 1\u00a0token"))
        if self.sequences < 1:
            raise ServewiseInputError(_("the number of concurrent sequences must be at least 1"))
        if self.kv_cache_type not in KV_CACHE_TYPES:
            raise ServewiseInputError(
                _("unknown KV cache type '{kv_cache_type}'; use one of {kv_cache_types}").format(
                  kv_cache_type=self.kv_cache_type, kv_cache_types=', '.join(KV_CACHE_TYPES))
            )

    def with_(self, *, context_tokens: int | None = None, sequences: int | None = None) -> Workload:
        """The same workload with another context or sequence count."""
        return Workload(
            context_tokens=self.context_tokens if context_tokens is None else context_tokens,
            sequences=self.sequences if sequences is None else sequences,
            kv_cache_type=self.kv_cache_type,
        )


class EngineNotApplicable(ServewiseInputError):
    """This engine cannot serve this model/workload on this machine; the message says why."""


def workload_settings(engine: str, workload: Workload) -> dict[str, Any]:
    """The engine's own setting keys and values that express `workload` (before user overrides).

    Raises EngineNotApplicable when the engine has no cache type matching the workload's.
    """
    spec = adapter(engine)
    kv = spec.kv_settings[workload.kv_cache_type]
    if kv is None:
        raise EngineNotApplicable(_("{engine} has no {kv_cache_type} KV cache type").format(
                                    engine=engine, kv_cache_type=workload.kv_cache_type))
    return {**spec.workload_settings(workload.context_tokens, workload.sequences), **kv}


def settings_class(engine: str) -> type[BaseModel]:
    """The engine's Settings model (field names are the shared setting keys)."""
    return adapter(engine).settings_type


def engine_settings(engine: str, workload: Workload, overrides: Mapping[str, Any] | None = None) -> BaseModel:
    """The engine's Settings for `workload`, with `overrides` (setting key -> value) replacing mapped keys."""
    values = {**workload_settings(engine, workload), **(overrides or {})}
    try:
        return settings_class(engine).model_validate(values)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "settings"
        raise ServewiseInputError(_("{engine} setting '{where}': {msg}").format(
                                    engine=engine, where=where, msg=validation_problem(first))) from exc


def applicability(engine: str, machine: Machine) -> str | None:
    """Why `engine` cannot run on `machine` (None when it can)."""
    return adapter(engine).not_applicable(machine)


def run_plan(
    engine: str, arch: ModelArchitecture, machine: Machine, weights_bytes: int | None, settings: BaseModel,
    workload: Workload, draft: DraftModel | None = None,
) -> MemoryPlan:
    """The engine's own plan for `settings` (bytes per device); some engines also need the workload's lengths.

    `draft` is the speculative drafter's checkpoint when the user gives one: engines that load a drafter plan its
    weights and cache with it (the others, and settings without a drafter, ignore it).
    """
    spec = adapter(engine)
    if draft is not None and spec.draft_plan is not None:
        return spec.draft_plan(arch, settings, machine, weights_bytes, workload, draft)
    if spec.run_plan is not None:
        return spec.run_plan(arch, settings, machine, weights_bytes, workload)
    return spec.plan(arch, settings, machine, weights_bytes)


def plan_without_speculation(
    engine: str, arch: ModelArchitecture, machine: Machine, weights_bytes: int | None, settings: BaseModel,
    workload: Workload,
) -> MemoryPlan | None:
    """The same run without its speculative drafter (None when the settings use none or the engine has none).

    Shown next to the run with it: the drafter's weights and KV (or state) are what the difference is made of.
    """
    strip = adapter(engine).without_speculation
    plain = strip(settings) if strip is not None else None
    if plain is None:
        return None
    return run_plan(engine, arch, machine, weights_bytes, plain, workload)


# ---------------------------------------------------------------------------------------------------
# Does a plan hold the workload?
# ---------------------------------------------------------------------------------------------------


def plan_holds(engine: str, plan: MemoryPlan, workload: Workload, machine: Machine) -> bool:
    """True when the engine would start with this plan and keep `workload` resident without preemption."""
    return why_not_held(engine, plan, workload, machine) is None


def why_not_held(engine: str, plan: MemoryPlan, workload: Workload, machine: Machine) -> str | None:
    """Why `plan` does not hold `workload` (None when it does), in the engine's own terms."""
    if plan.refusal is not None:
        return plan.refusal
    return adapter(engine).why_not_held(plan, workload, machine)


# ---------------------------------------------------------------------------------------------------
# Results
# ---------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class EngineComparison:
    """One engine's plan for the workload, or why there is none.

    `not_applicable` is set when the engine cannot run here (platform, missing cache type); `error` when
    the settings or model cannot be planned (a message the user can act on). Otherwise `plan` is set and
    `holds` says whether that plan keeps the whole workload resident.
    """

    engine: str
    settings: BaseModel | None = None
    plan: MemoryPlan | None = None
    holds: bool = False
    not_applicable: str | None = None
    error: str | None = None


@dataclass(frozen=True)
class ComparisonInputs:
    """What every engine is planned for: model, machine, weight bytes (whole model), per-engine overrides."""

    arch: ModelArchitecture
    machine: Machine
    weights_bytes: int | None
    overrides: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    #: the speculative drafter checkpoint a pasted command loads, when the user gives it (catalog or config.json)
    draft: DraftModel | None = None

    def __post_init__(self) -> None:
        # Equal layers become one object: engine plans key dicts by layer geometry, and a lookup that finds
        # the very same object skips the field-by-field comparison (a third of a llama.cpp plan's time).
        shared: dict[LayerGeometry, LayerGeometry] = {}
        layers = tuple(shared.setdefault(layer, layer) for layer in self.arch.layers)
        object.__setattr__(self, "arch", replace(self.arch, layers=layers))


def compare_engine(inputs: ComparisonInputs, engine: str, workload: Workload) -> EngineComparison:
    """One engine's settings and plan for `workload` under the user's overrides."""
    reason = applicability(engine, inputs.machine)
    if reason:
        return EngineComparison(engine=engine, not_applicable=reason)
    try:
        settings = engine_settings(engine, workload, inputs.overrides.get(engine))
        plan = run_plan(engine, inputs.arch, inputs.machine, inputs.weights_bytes, settings, workload, inputs.draft)
    except EngineNotApplicable as exc:
        return EngineComparison(engine=engine, not_applicable=str(exc))
    except ServewiseInputError as exc:
        return EngineComparison(engine=engine, error=str(exc))
    return EngineComparison(engine=engine, settings=settings, plan=plan,
                            holds=plan_holds(engine, plan, workload, inputs.machine))


def compare_engines(
    inputs: ComparisonInputs, workload: Workload, engines: Sequence[str] = ENGINE_IDS
) -> list[EngineComparison]:
    """Every engine's plan for the same model, machine and workload, in `engines` order (none dropped)."""
    return [compare_engine(inputs, engine, workload) for engine in engines]


def valid_tensor_parallel_sizes(arch: ModelArchitecture, max_devices: int) -> list[int]:
    """TP degrees up to `max_devices` that split the model's attention heads evenly (vLLM's own check)."""
    return [tp for tp in range(1, max_devices + 1) if arch.n_heads % tp == 0]


def model_weights(formats: FormatsSection, arch: ModelArchitecture, scheme_id: str) -> WeightsEstimate:
    """Weight bytes of `arch` stored as `scheme_id` (params x bits; see calculators.model.weights.estimate_weights).

    MoE experts are passed on for schemes that cover only the experts (MXFP4 as gpt-oss uses it).
    """
    if not arch.params_total:
        raise ServewiseInputError(
            _("{name}: the parameter count is unknown, so weight bytes cannot be estimated; give the exact "
              "file size instead").format(name=arch.name)
        )
    experts = None
    if arch.moe is not None and arch.moe.expert_intermediate_size > 0:
        experts = moe_expert_params(arch)
    return estimate_weights(formats, arch.params_total, scheme_id, expert_params=experts)
