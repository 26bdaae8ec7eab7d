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

from calculators.engines.registry import ENGINE_MODULES, EngineModule
from calculators.errors import ServewiseInputError
from calculators.hardware.machine import Machine
from calculators.memory.plan import MemoryPlan
from calculators.model.architecture import LayerGeometry, ModelArchitecture
from calculators.model.weights import WeightsEstimate, estimate_weights, moe_expert_params
from knowledge.formats import FormatsSection

ENGINES: tuple[str, ...] = ("ollama", "llama-cpp", "vllm", "sglang", "mlx-lm")

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
            raise ServewiseInputError("the context per sequence must be at least 1 token")
        if self.sequences < 1:
            raise ServewiseInputError("the number of concurrent sequences must be at least 1")
        if self.kv_cache_type not in KV_CACHE_TYPES:
            raise ServewiseInputError(
                f"unknown KV cache type '{self.kv_cache_type}'; use one of {', '.join(KV_CACHE_TYPES)}"
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


# Each engine's spelling of the workload's KV cache type; None = the engine has no such cache type.
_KV_SETTINGS: dict[str, dict[str, dict[str, Any] | None]] = {
    "llama-cpp": {
        "16-bit": {"cache_type_k": "f16", "cache_type_v": "f16"},
        "8-bit": {"cache_type_k": "q8_0", "cache_type_v": "q8_0"},
        "4-bit": {"cache_type_k": "q4_0", "cache_type_v": "q4_0"},
    },
    "ollama": {
        "16-bit": {},
        # Ollama applies OLLAMA_KV_CACHE_TYPE only with flash attention on
        "8-bit": {"kv_cache_type": "q8_0", "flash_attention": True},
        "4-bit": {"kv_cache_type": "q4_0", "flash_attention": True},
    },
    "vllm": {"16-bit": {"kv_cache_dtype": "auto"}, "8-bit": {"kv_cache_dtype": "fp8"}, "4-bit": None},
    "sglang": {"16-bit": {"kv_cache_dtype": "auto"}, "8-bit": {"kv_cache_dtype": "fp8_e4m3"}, "4-bit": None},
    "mlx-lm": {"16-bit": {}, "8-bit": {"kv_bits": 8}, "4-bit": {"kv_bits": 4}},
}

#: The setting keys each engine's workload mapping writes (searches vary these, overrides keep the rest).
WORKLOAD_KEYS: dict[str, tuple[str, ...]] = {
    "llama-cpp": ("ctx_size", "parallel", "cache_type_k", "cache_type_v"),
    "ollama": ("context_length", "num_parallel", "kv_cache_type", "flash_attention"),
    "vllm": ("max_model_len", "max_num_seqs", "kv_cache_dtype"),
    "sglang": ("context_length", "max_running_requests", "kv_cache_dtype"),
    "mlx-lm": ("kv_bits", "decode_concurrency"),
}


def workload_settings(engine: str, workload: Workload) -> dict[str, Any]:
    """The engine's own setting keys and values that express `workload` (before user overrides).

    Raises EngineNotApplicable when the engine has no cache type matching the workload's.
    """
    kv = _KV_SETTINGS[_known(engine)][workload.kv_cache_type]
    if kv is None:
        raise EngineNotApplicable(f"{engine} has no {workload.kv_cache_type} KV cache type")
    ctx, n = workload.context_tokens, workload.sequences
    by_engine: dict[str, dict[str, Any]] = {
        # llama-server splits -c over its -np slots: each slot gets ctx-size / parallel
        "llama-cpp": {"ctx_size": ctx * n, "parallel": n},
        # Ollama passes -c = context_length x num_parallel to its llama-server
        "ollama": {"context_length": ctx, "num_parallel": n},
        "vllm": {"max_model_len": ctx, "max_num_seqs": n},
        "sglang": {"context_length": ctx, "max_running_requests": n},
        # MLX LM has no context setting; max_kv_size would drop old tokens, so it stays unset
        "mlx-lm": {"decode_concurrency": max(n, 1)},
    }
    return {**by_engine[engine], **kv}


def _known(engine: str) -> str:
    if engine not in ENGINES:
        raise ServewiseInputError(f"unknown engine '{engine}'; use one of {', '.join(ENGINES)}")
    return engine


def _engine_module(engine: str) -> EngineModule:
    """The engine's settings type and plan function."""
    return ENGINE_MODULES[_known(engine)]


def settings_class(engine: str) -> type[BaseModel]:
    """The engine's Settings model (field names are the shared setting keys)."""
    return _engine_module(engine).settings_type


def engine_settings(engine: str, workload: Workload, overrides: Mapping[str, Any] | None = None) -> BaseModel:
    """The engine's Settings for `workload`, with `overrides` (setting key -> value) replacing mapped keys."""
    values = {**workload_settings(engine, workload), **(overrides or {})}
    try:
        return settings_class(engine).model_validate(values)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "settings"
        raise ServewiseInputError(f"{engine} setting '{where}': {first['msg']}") from exc


def applicability(engine: str, machine: Machine) -> str | None:
    """Why `engine` cannot run on `machine` (None when it can)."""
    if engine == "mlx-lm" and not machine.unified_memory:
        return "MLX LM runs on Apple silicon (Metal, unified memory); this machine is not Apple silicon."
    if engine == "vllm" and machine.unified_memory:
        return "vLLM has no Metal backend: on a Mac it runs on the CPU only, which servewise does not plan."
    if engine == "sglang" and machine.unified_memory:
        return "SGLang serves on NVIDIA/AMD GPUs (and a few accelerators); it has no Apple silicon path planned here."
    return None


def run_plan(
    engine: str, arch: ModelArchitecture, machine: Machine, weights_bytes: int | None, settings: BaseModel,
    workload: Workload,
) -> MemoryPlan:
    """The engine's own plan for `settings` (bytes per device). MLX LM also needs the workload's lengths."""
    plan = _engine_module(engine).plan
    if engine == "mlx-lm":
        return plan(arch, settings, machine, weights_bytes, prompt_tokens=workload.context_tokens,
                    n_sequences=workload.sequences, working_set_bytes=machine.device_memory_bytes)
    return plan(arch, settings, machine, weights_bytes)


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
    n, ctx = workload.sequences, workload.context_tokens
    gib = 1 << 30
    if engine == "vllm":
        if plan.max_num_seqs < n:
            return f"max_num_seqs {plan.max_num_seqs} runs fewer than {n} sequences at once"
        if plan.max_concurrency < n:
            return (f"the KV cache holds {plan.max_concurrency:.2f} requests of {plan.max_model_len:,} tokens, "
                    f"fewer than {n}")
        return None
    if engine == "sglang":
        if plan.max_total_num_tokens < n * ctx:
            return f"the pool holds {plan.max_total_num_tokens:,} tokens, fewer than {n} x {ctx:,}"
        if plan.max_running_requests < n:
            return f"max_running_requests is {plan.max_running_requests}"
        return None
    if engine == "mlx-lm":
        capacity = plan.device_capacity_bytes
        if capacity is not None and plan.used_bytes > capacity:
            return f"weights and cache need {plan.used_bytes / gib:.2f} GiB of a {capacity / gib:.2f} GiB working set"
        return None
    if plan.n_seq < n or plan.n_ctx_slot < ctx:
        return f"{plan.n_seq} slots of {plan.n_ctx_slot:,} tokens each cannot hold {n} x {ctx:,}"
    if engine == "ollama" and not plan.fits_preflight:
        return (f"Ollama's own estimate ({plan.predicted_for_load_bytes / gib:.2f} GiB) is over its load headroom "
                f"of the {plan.available_bytes / gib:.2f} GiB it sees free, so it would not load it this way")
    for device in plan.devices:
        used = device.kv_cache_bytes + (device.weights_bytes or 0)
        if device.device == "host" and (device.repeating_layers or device.kv_cache_bytes):
            if machine.unified_memory:
                return f"{device.repeating_layers} layers sit on the CPU side of the same unified memory"
            if machine.host_ram_bytes is None:
                return f"{device.repeating_layers} layers stay in host RAM; give the host RAM to count them"
            if used > machine.host_ram_bytes:
                return f"host RAM is short: {used / gib:.2f} GiB needed"
        elif device.device != "host" and used > machine.device_memory_bytes:
            return f"{device.device} needs {used / gib:.2f} GiB of {machine.device_memory_bytes / gib:.2f} GiB"
    return None


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

    def __post_init__(self) -> None:
        # Equal layers become one object: engine modules key dicts by layer geometry, and a lookup that finds
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
        plan = run_plan(engine, inputs.arch, inputs.machine, inputs.weights_bytes, settings, workload)
    except EngineNotApplicable as exc:
        return EngineComparison(engine=engine, not_applicable=str(exc))
    except ServewiseInputError as exc:
        return EngineComparison(engine=engine, error=str(exc))
    return EngineComparison(engine=engine, settings=settings, plan=plan,
                            holds=plan_holds(engine, plan, workload, inputs.machine))


def compare_engines(
    inputs: ComparisonInputs, workload: Workload, engines: Sequence[str] = ENGINES
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
            f"{arch.name}: the parameter count is unknown, so weight bytes cannot be estimated; "
            "give the exact file size instead"
        )
    experts = None
    if arch.moe is not None and arch.moe.expert_intermediate_size > 0:
        experts = moe_expert_params(arch)
    return estimate_weights(formats, arch.params_total, scheme_id, expert_params=experts)
