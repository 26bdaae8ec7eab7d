"""One model, one machine, one workload: every engine's memory plan side by side, and each engine's capacity.

A `Workload` (tokens retained per sequence, concurrent active sequences, KV cache type) is written in each
engine's own settings (llama-server -c = context x slots with -np = slots; Ollama's OLLAMA_CONTEXT_LENGTH
and OLLAMA_NUM_PARALLEL; vLLM max_model_len / max_num_seqs / kv_cache_dtype; SGLang context_length /
max_running_requests / kv_cache_dtype; MLX LM kv_bits and its batch). User overrides per engine replace
any of those keys. Capacity searches vary the workload keys and keep the other overrides.

Capacity is found by searching over the engines' own plans (never by a separate formula): each engine
reads a first guess from one plan (vLLM's "Maximum concurrency", SGLang's token pool, free bytes over
bytes per sequence elsewhere) and the search only checks the neighbourhood of that guess.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from math import floor
from typing import Any

from pydantic import BaseModel, ValidationError

from calculators.architecture import ModelArchitecture
from calculators.engines.registry import ENGINE_MODULES, EngineModule
from calculators.errors import ServewiseInputError
from calculators.machine import Machine
from calculators.plan import ComponentKind, MemoryPlan
from calculators.weights import WeightsEstimate, estimate_weights, moe_expert_params
from knowledge.formats import FormatsSection

ENGINES: tuple[str, ...] = ("ollama", "llama-cpp", "vllm", "sglang", "mlx-lm")

#: KV cache element types a workload can ask for (URL slugs). Each engine spells them its own way below.
KV_CACHE_TYPES: tuple[str, ...] = ("16-bit", "8-bit", "4-bit")

#: Upper bound for context searches when the model states no trained context (tokens).
CONTEXT_SEARCH_CAP_TOKENS = 1 << 21
#: Resolution of the longest-context search (tokens): llama.cpp pads each stream to 256 cells, and shared
#: settings are written in round numbers; searching whole steps keeps the search to a few plans.
CONTEXT_STEP_TOKENS = 256


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
    """The engine's settings type and plan function; EngineNotApplicable when this build has no model of it."""
    module = ENGINE_MODULES.get(_known(engine))
    if module is None:
        raise EngineNotApplicable(f"the {engine} memory model is not part of this build yet")
    return module


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


def _free_bytes(plan: MemoryPlan, machine: Machine) -> int:
    """Bytes the plan leaves unassigned: over every GPU for plans that place layers per device, else per device."""
    devices = getattr(plan, "devices", None)
    if devices:
        gpus = [d for d in devices if d.device != "host"]
        unused_gpus = max(0, machine.n_devices - len(gpus))  # Ollama pins a small model to one GPU
        return unused_gpus * machine.device_memory_bytes + sum(
            max(0, machine.device_memory_bytes - d.kv_cache_bytes - (d.weights_bytes or 0)) for d in gpus)
    return sum(c.bytes for c in plan.components if c.kind is ComponentKind.FREE)


def _sequences_guess(engine: str, plan: MemoryPlan, workload: Workload, machine: Machine) -> int:
    """Guess of the most sequences at this context from a plan made for `workload.sequences` of them.

    Engines that report capacity answer directly (vLLM's concurrency, SGLang's pool); the others add the
    sequences the remaining (or missing, when negative) bytes are worth at this plan's bytes per sequence.
    """
    ctx, n = workload.context_tokens, workload.sequences
    if engine == "vllm":
        return floor(plan.max_concurrency)
    if engine == "sglang":
        return plan.max_total_num_tokens // ctx
    gpus = [d for d in getattr(plan, "devices", None) or [] if d.device != "host" and d.kv_cache_bytes]
    if gpus and len(gpus) == machine.n_devices:
        # layers are split over every GPU: the GPU that runs out first decides
        guess = n + min((machine.device_memory_bytes - d.kv_cache_bytes - (d.weights_bytes or 0))
                        * n // d.kv_cache_bytes for d in gpus)
    elif gpus or plan.device_capacity_bytes is None:
        guess = n + _free_bytes(plan, machine) * n // max(plan.kv_cache_bytes, 1)
    else:
        guess = n + (plan.device_capacity_bytes - plan.used_bytes) * n // max(plan.kv_cache_bytes, 1)
    if engine == "ollama":
        # Ollama's own pre-flight estimate (file + an f16 KV guess) must stay within its load headroom too;
        # Ollama spreads a model over every GPU once it no longer fits one
        from calculators.engines.ollama import LOAD_HEADROOM_PERCENT

        kv_guess = max(plan.predicted_vram_bytes - (plan.weights_bytes or 0), 1)
        room = plan.available_bytes * machine.n_devices * LOAD_HEADROOM_PERCENT // 100 - plan.predicted_for_load_bytes
        guess = min(guess, n + room * n // kv_guess)
    return guess


#: Engines whose first guess is the engine's own answer: vLLM's "Maximum concurrency" depends on the context
#: only (max_num_seqs, which the search sets to the sequence count, changes no block).
_EXACT_SEQUENCE_GUESS = frozenset({"vllm"})
#: Engines whose guess is checked once and searched around only if it does not hold: SGLang's is its own pool
#: divided by the context; llama.cpp's and MLX LM's divide free bytes by a per-sequence cache that does not
#: change with the sequence count (the llama.cpp guess matched the full search at all 150 points of a
#: 25-context grid over three catalog models on one and two H100s). A guess that holds but is low would
#: under-report by the difference; none was seen. Ollama's is not trusted: its pre-flight surcharge grows
#: with the batch, so its guess runs high.
_TRUSTED_SEQUENCE_GUESS = frozenset({"sglang", "llama-cpp", "mlx-lm"})


def _context_guess(engine: str, plan: MemoryPlan, workload: Workload, machine: Machine) -> int:
    """Guess of the longest context for the workload's sequence count, from a plan made at its context.

    Engines that report a token pool divide it by the sequences; the others scale the context by the bytes
    the plan leaves (or misses, when negative) against its cache bytes.
    """
    ctx, n = workload.context_tokens, workload.sequences
    if engine == "vllm":
        return plan.kv_tokens // n if plan.refusal is None else (plan.estimated_max_model_len or 1) // n
    if engine == "sglang":
        return plan.max_total_num_tokens // n
    gpus = [d for d in getattr(plan, "devices", None) or [] if d.device != "host" and d.kv_cache_bytes]
    if gpus and len(gpus) == machine.n_devices:
        guess = ctx + min((machine.device_memory_bytes - d.kv_cache_bytes - (d.weights_bytes or 0))
                          * ctx // d.kv_cache_bytes for d in gpus)
    elif gpus or plan.device_capacity_bytes is None:
        guess = ctx + _free_bytes(plan, machine) * ctx // max(plan.kv_cache_bytes, 1)
    else:
        guess = ctx + (plan.device_capacity_bytes - plan.used_bytes) * ctx // max(plan.kv_cache_bytes, 1)
    if engine == "ollama":
        from calculators.engines.ollama import LOAD_HEADROOM_PERCENT

        kv_guess = max(plan.predicted_vram_bytes - (plan.weights_bytes or 0), 1)
        room = plan.available_bytes * machine.n_devices * LOAD_HEADROOM_PERCENT // 100 - plan.predicted_for_load_bytes
        guess = min(guess, plan.per_request_context + room * plan.per_request_context // kv_guess)
    return guess


def _largest_true(holds: Callable[[int], bool], guess: int, low: int, high: int, first_step: int = 1) -> int:
    """Largest x in [low, high] with holds(x), given holds is monotone (True then False); low - 1 if none.

    Starts at `guess` and gallops away from it (steps of `first_step`, doubling), then bisects the bracket,
    so a good guess costs two or three evaluations. Each point is evaluated at most once.
    """
    if high < low:
        return low - 1
    guess = min(max(guess, low), high)
    step = max(1, first_step)
    if holds(guess):
        good = guess
        while True:
            probe = good + step
            if probe > high:
                bad = high + 1
                break
            if not holds(probe):
                bad = probe
                break
            good, step = probe, step * 2
    else:
        bad = guess
        while True:
            probe = bad - step
            if probe < low:
                good = low - 1  # sentinel: nothing below `bad` is known to hold
                break
            if holds(probe):
                good = probe
                break
            bad, step = probe, step * 2
    while bad - good > 1:
        middle = (good + bad) // 2
        if holds(middle):
            good = middle
        else:
            bad = middle
    return good


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


@dataclass
class ComparisonInputs:
    """What every engine is planned for: model, machine, weight bytes (whole model), per-engine overrides."""

    arch: ModelArchitecture
    machine: Machine
    weights_bytes: int | None
    overrides: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)


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


class _Prober:
    """Plans one engine for workload variants, keeping the user's overrides except the workload keys."""

    def __init__(self, inputs: ComparisonInputs, engine: str, workload: Workload):
        self.inputs, self.engine, self.workload = inputs, engine, workload
        kept = dict(inputs.overrides.get(engine) or {})
        for key in WORKLOAD_KEYS[engine]:
            kept.pop(key, None)
        if engine == "llama-cpp":
            # --fit would move layers to the host to make each probe start; the search asks what fits with the
            # layers -ngl puts on the GPU, so it plans without --fit (and several times faster)
            kept.setdefault("fit", False)
        self.overrides = kept
        self.plans = 0
        self._held: dict[tuple[int, int], bool] = {}

    def plan(self, workload: Workload) -> MemoryPlan | None:
        """The engine's plan for this workload variant (None when the engine rejects the settings)."""
        self.plans += 1
        try:
            settings = engine_settings(self.engine, workload, self.overrides)
            return run_plan(self.engine, self.inputs.arch, self.inputs.machine, self.inputs.weights_bytes,
                            settings, workload)
        except ServewiseInputError:
            return None

    def plan_and_holds(self, workload: Workload) -> tuple[MemoryPlan | None, bool]:
        """The plan for this variant and whether it holds the variant (remembered per context and count)."""
        plan = self.plan(workload)
        held = plan is not None and plan_holds(self.engine, plan, workload, self.inputs.machine)
        self._held[workload.context_tokens, workload.sequences] = held
        return plan, held

    def holds(self, workload: Workload) -> bool:
        """Whether the engine holds this variant (each variant is planned once)."""
        key = (workload.context_tokens, workload.sequences)
        if key not in self._held:
            self.plan_and_holds(workload)
        return self._held[key]


@dataclass(frozen=True)
class Capacity:
    """An engine's capacity for a workload: longest context for its sequences, most sequences at its context.

    0 means not even one token / one sequence fits; None means the engine is not applicable (see `reason`).
    """

    engine: str
    max_context_tokens: int | None
    max_sequences: int | None
    context_limit_tokens: int
    sequences_limit: int
    reason: str | None = None


def _context_limit(arch: ModelArchitecture) -> int:
    return arch.max_context_tokens or CONTEXT_SEARCH_CAP_TOKENS


#: Guesses refined from the plan at the previous guess before falling back to a gallop-and-bisect search.
_REFINEMENTS = 3


def max_sequences(prober: _Prober, context_tokens: int, limit: int, below: int | None = None) -> int:
    """Most sequences of `context_tokens` the engine holds at once (0..limit), by searching its plans.

    A guess from the plan for one sequence is refined from the plan at each guess (the bytes it misses or
    leaves, at its bytes per sequence), then confirmed, so most answers cost two to four plans.
    """
    one = prober.workload.with_(context_tokens=context_tokens, sequences=1)
    plan, held = prober.plan_and_holds(one)
    if not held:
        return 0
    high = max(1, limit if below is None else min(limit, below))
    guess = min(max(_sequences_guess(prober.engine, plan, one, prober.inputs.machine), 1), high)
    if prober.engine in _EXACT_SEQUENCE_GUESS:
        return guess
    for _ in range(_REFINEMENTS):
        plan, held = prober.plan_and_holds(one.with_(sequences=guess))
        if held or plan is None:
            break
        guess = min(max(_sequences_guess(prober.engine, plan, one.with_(sequences=guess), prober.inputs.machine),
                        1), guess - 1)
    if held and (prober.engine in _TRUSTED_SEQUENCE_GUESS or guess == high):
        return guess
    return _largest_true(lambda n: prober.holds(one.with_(sequences=n)), guess, 1, high)


def max_context(prober: _Prober, sequences: int) -> int:
    """Longest context per sequence (tokens, a multiple of CONTEXT_STEP_TOKENS or the trained context) the engine
    holds for `sequences` sequences; 0 if not even one step fits.

    The guess from the plan at the workload's context is refined from the plan at each guess; the steps known
    to hold and to fail then bound a bisection.
    """
    limit = _context_limit(prober.inputs.arch)
    high = -(-limit // CONTEXT_STEP_TOKENS)  # the last step is the trained context itself

    def at(steps: int) -> Workload:
        return prober.workload.with_(context_tokens=min(steps * CONTEXT_STEP_TOKENS, limit), sequences=sequences)

    good, bad = 0, high + 1  # largest step known to hold, smallest known to fail
    steps = min(max(prober.workload.context_tokens // CONTEXT_STEP_TOKENS, 1), high)
    for _ in range(_REFINEMENTS):
        plan, held = prober.plan_and_holds(at(steps))
        if held:
            good = max(good, steps)
        else:
            bad = min(bad, steps)
        if plan is None:
            break
        guessed = _context_guess(prober.engine, plan, at(steps), prober.inputs.machine) // CONTEXT_STEP_TOKENS
        guessed = min(max(guessed, good + 1 if good < high else high), bad - 1 if bad > 1 else 1)
        if guessed in (steps, good) or not good < guessed < bad:
            break
        steps = guessed
    if bad - good == 1:
        return min(good * CONTEXT_STEP_TOKENS, limit)
    if good:
        steps = _largest_true(lambda k: prober.holds(at(k)), good + 1, good + 1, bad - 1)
        steps = max(steps, good)
    else:
        steps = _largest_true(lambda k: prober.holds(at(k)), min(bad - 1, steps), 1, bad - 1)
    return min(max(steps, 0) * CONTEXT_STEP_TOKENS, limit)


def capacity(
    inputs: ComparisonInputs, engine: str, workload: Workload, sequences_limit: int = 1024
) -> Capacity:
    """Longest context for the workload's sequences and most sequences at its context, for one engine."""
    limit = _context_limit(inputs.arch)
    reason = applicability(engine, inputs.machine)
    if reason is None:
        try:
            workload_settings(engine, workload)
            _engine_module(engine)
        except EngineNotApplicable as exc:
            reason = str(exc)
    if reason:
        return Capacity(engine, None, None, limit, sequences_limit, reason)
    prober = _Prober(inputs, engine, workload)
    return Capacity(
        engine=engine,
        max_context_tokens=max_context(prober, workload.sequences),
        max_sequences=max_sequences(prober, workload.context_tokens, sequences_limit),
        context_limit_tokens=limit,
        sequences_limit=sequences_limit,
    )


def most_sequences(
    inputs: ComparisonInputs, engine: str, workload: Workload, sequences_limit: int = 1024
) -> int | None:
    """Most sequences of the workload's context one engine holds at once (None when it is not applicable)."""
    if applicability(engine, inputs.machine):
        return None
    try:
        workload_settings(engine, workload)
        _engine_module(engine)
    except EngineNotApplicable:
        return None
    return max_sequences(_Prober(inputs, engine, workload), workload.context_tokens, sequences_limit)


@dataclass(frozen=True)
class CapacityCurve:
    """Most concurrent sequences (capped at `sequences_limit`) at each context length, for one engine."""

    engine: str
    context_tokens: tuple[int, ...]
    max_sequences: tuple[int, ...]
    sequences_limit: int
    plans_evaluated: int
    reason: str | None = None


def capacity_curve(
    inputs: ComparisonInputs, engine: str, workload: Workload, contexts: Sequence[int], sequences_limit: int = 256
) -> CapacityCurve:
    """Max concurrent sequences vs context length for one engine (contexts in tokens, any order).

    Walks the contexts from shortest to longest: capacity never grows with context, so each search is
    bounded by the previous answer.
    """
    ordered = sorted(set(contexts))
    reason = applicability(engine, inputs.machine)
    if reason is None:
        try:
            workload_settings(engine, workload)
            _engine_module(engine)
        except EngineNotApplicable as exc:
            reason = str(exc)
    if reason:
        return CapacityCurve(engine, tuple(ordered), (), sequences_limit, 0, reason)
    prober = _Prober(inputs, engine, workload)
    results: list[int] = []
    bound = sequences_limit
    for ctx in ordered:
        bound = max_sequences(prober, ctx, sequences_limit, below=bound) if bound else 0
        results.append(bound)
    return CapacityCurve(engine, tuple(ordered), tuple(results), sequences_limit, prober.plans)


def context_grid(max_tokens: int, points: int, min_tokens: int = 512) -> list[int]:
    """`points` context lengths spread geometrically from `min_tokens` to `max_tokens` (whole tokens)."""
    if points < 2 or max_tokens <= min_tokens:
        return [max(min(min_tokens, max_tokens), 1)]
    ratio = (max_tokens / min_tokens) ** (1 / (points - 1))
    return sorted({min(max_tokens, round(min_tokens * ratio**i)) for i in range(points)})


def valid_tensor_parallel_sizes(arch: ModelArchitecture, max_devices: int) -> list[int]:
    """TP degrees up to `max_devices` that split the model's attention heads evenly (vLLM's own check)."""
    return [tp for tp in range(1, max_devices + 1) if arch.n_heads % tp == 0]


def model_weights(formats: FormatsSection, arch: ModelArchitecture, scheme_id: str) -> WeightsEstimate:
    """Weight bytes of `arch` stored as `scheme_id` (params x bits; see calculators.weights.estimate_weights).

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
