"""Per-engine reconciliation: which printed figure each plan field predicts, and the inputs taken from the log.

Each builder runs the engine's plan from `calculators.engines.registry` on the log's own settings and
printed inputs, then judges every figure the plan predicts (`reconcile_model.judge`). Figures the plan
does not predict are passed through as `not_compared`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace

from pydantic import BaseModel

from calculators.engines.registry import ENGINE_MODULES, EngineModule
from calculators.errors import ServewiseInputError
from calculators.hardware.machine import Machine
from calculators.model.architecture import LayerKind, ModelArchitecture
from calculators.reconcile.log.figures import Figure, ParsedLog
from calculators.reconcile.result import Alternative, Prediction, ReconcileRow, Rule, judge
from calculators.units import GIB

# Stand-in device size when neither the log nor the user gives one; it only picks engine defaults
# (vLLM batch limits, SGLang chunk sizes), never a compared figure's budget.
_DEFAULT_DEVICE_BYTES = 80 * GIB


def engine_module(engine: str) -> EngineModule | None:
    """The registry's entry for `engine` (None when servewise has no plan for it)."""
    return ENGINE_MODULES.get(engine)


@dataclass
class EngineRun:
    """The inputs of one reconciliation."""

    parsed: ParsedLog
    arch: ModelArchitecture
    settings: BaseModel
    machine: Machine | None


@dataclass
class Outcome:
    """What a builder returns: rows, the figures it left alone, and what it assumed."""

    settings: BaseModel
    rows: list[ReconcileRow] = field(default_factory=list)
    not_compared: list[Figure] = field(default_factory=list)
    assumptions: list[str] = field(default_factory=list)
    plan_notes: list[str] = field(default_factory=list)
    refusal: str | None = None


def _point(value: int | float, basis: str) -> Prediction:
    return Prediction(low=value, high=value, basis=basis)


def _unused(parsed: ParsedLog, used: list[Figure]) -> list[Figure]:
    """Figures not compared; a figure every worker reprinted with the same value counts as compared."""
    seen = {(f.name, f.cache, f.printed) for f in used}
    return [f for f in parsed.figures if (f.name, f.cache, f.printed) not in seen]


def _ranks(settings: BaseModel) -> int:
    """GPUs one instance spans by its own parallelism settings (TP x PP x DP)."""
    n = 1
    keys = ("tensor_parallel_size", "pipeline_parallel_size", "data_parallel_size", "tp_size", "pp_size", "dp_size")
    for key in keys:
        n *= int(getattr(settings, key, 1) or 1)
    return n


def _machine(run: EngineRun, total_bytes: int | None, assumptions: list[str], why: str) -> Machine:
    """The given machine, else one of the log's printed device size, else an 80 GiB stand-in (noted)."""
    n_devices = _ranks(run.settings)
    if run.machine is not None:
        return run.machine if run.machine.n_devices >= n_devices else run.machine.model_copy(
            update={"n_devices": n_devices})
    if total_bytes:
        return Machine(device_memory_bytes=total_bytes, n_devices=n_devices)
    assumptions.append(f"no GPU given: servewise assumed an 80 GiB device ({why})")
    return Machine(device_memory_bytes=_DEFAULT_DEVICE_BYTES, n_devices=n_devices)


# ---------------------------------------------------------------------------------------------------
# llama.cpp (and Ollama's relayed llama-server)
# ---------------------------------------------------------------------------------------------------

_CACHE_FIGURES = (
    ("kv_cache_bytes", "K+V size", "total_bytes"),
    ("recurrent_state_bytes", "R+S state size", "total_bytes"),
    ("k_bytes", "K size", "k_bytes"),
    ("v_bytes", "V size", "v_bytes"),
    ("cells", "cells", "cells"),
    ("layers", "layers", "layers"),
    ("seqs", "sequences", "seqs"),
    ("streams", "KV streams", "n_stream"),
)


def llamacpp_rows(run: EngineRun, engine: str = "llama-cpp") -> Outcome:
    """llama.cpp's cache lines (`llama_kv_cache: size = …`) and slot figures against `plan_llamacpp`."""
    parsed = run.parsed
    out = Outcome(settings=run.settings)
    inputs = _llamacpp_context_from_cache(run, out) if engine == "llama-cpp" else []
    file_bytes = parsed.figure("model_file_bytes")
    weights = int(file_bytes.value) if file_bytes else None
    plan = engine_module(engine).plan(run.arch, out.settings, run.machine, weights)
    out.refusal = plan.refusal
    out.plan_notes = [note.message for note in plan.notes]
    state_known = any(layer.recurrent_state_elements for layer in run.arch.layers_of(LayerKind.RECURRENT))
    used: list[Figure] = []
    for cache_name in parsed.caches():
        cache = next((c for c in plan.caches if c.name == cache_name), None)
        if cache is None:
            out.plan_notes.append(f"the log prints a '{cache_name}' cache that servewise's plan does not allocate")
            continue
        for name, label, attribute in _CACHE_FIGURES:
            figure = parsed.figure(name, cache=cache_name)
            if figure is None or figure in inputs:
                continue
            if cache_name == "recurrent" and figure.unit == "bytes" and not state_known:
                note = "recurrent state sizes are not in the log's geometry: add the model's config.json to check " \
                       "the R/S figures"
                if note not in out.plan_notes:
                    out.plan_notes.append(note)
                continue
            predicted = getattr(plan if attribute == "n_stream" else cache, attribute)
            used.append(figure)
            out.rows.append(judge(figure, f"{label} ({cache_name} cache)",
                                  _point(predicted, f"plan cache '{cache_name}'.{attribute}")))
    for name, label, attribute in (("slots", "server slots", "n_seq"), ("slot_ctx_tokens", "context per slot",
                                                                          "n_ctx_slot")):
        for figure in parsed.figures_named(name)[-1:]:
            used.append(figure)
            out.rows.append(judge(figure, label, _point(getattr(plan, attribute), f"plan.{attribute}")))
    if engine == "llama-cpp" and not any(c.name == "recurrent" for c in plan.caches if not state_known):
        used += _device_rows(run, out, file_bytes)
    out.not_compared = _unused(parsed, used + inputs)
    return out


def _is_host(device: str) -> bool:
    return device.startswith("CPU") or device.endswith("_Host") or device == "host"


def _device_rows(run: EngineRun, out: Outcome, file_bytes: Figure | None) -> list[Figure]:
    """Each device's KV buffers (all caches summed) against the plan's layer split over the log's devices."""
    parsed = run.parsed
    last: dict[tuple[str, str | None], Figure] = {}
    for figure in parsed.figures_named("kv_buffer_bytes") + parsed.figures_named("recurrent_buffer_bytes"):
        if figure.device:
            last[(figure.device, figure.cache)] = figure
    if not last:
        return []
    devices = list(dict.fromkeys(device for device, _ in last))
    accelerators = [d for d in devices if not _is_host(d)]
    settings = out.settings
    offloaded = parsed.figure("offloaded_layers")
    if accelerators and "n_gpu_layers" not in settings.model_fields_set:
        if offloaded is None and len(accelerators) == len(devices):
            offloaded = Figure(name="offloaded_layers", value=run.arch.n_layers + 1, unit="layers",
                               printed=str(run.arch.n_layers + 1), line=0)
            out.assumptions.append("every KV buffer the log prints is on an accelerator: all layers offloaded")
        if offloaded is None:
            out.plan_notes.append("the log states neither -ngl nor 'offloaded N/M layers', so the KV buffers per "
                                  "device are not compared")
            return []
        settings = settings.model_copy(update={"n_gpu_layers": int(offloaded.value)})
        if offloaded.line:
            out.assumptions.append(f"-ngl {int(offloaded.value)} read from 'offloaded {offloaded.printed}/… layers'")
    if not accelerators:
        settings = settings.model_copy(update={"n_gpu_layers": 0})  # every buffer the log prints is in host memory
    machine = None
    if accelerators:
        machine = (run.machine or Machine(device_memory_bytes=1 << 40)).model_copy(
            update={"n_devices": len(accelerators)})
    plan = engine_module("llama-cpp").plan(run.arch, settings.model_copy(update={"fit": False}), machine,
                                           int(file_bytes.value) if file_bytes else None)
    shares = {share.device: share for share in plan.devices}
    names = {device: ("host" if _is_host(device) else f"gpu{accelerators.index(device)}") for device in devices}
    rows_in: list[tuple[Figure, tuple[int, int], int]] = []
    for device in devices:
        parts = [f for (d, _), f in last.items() if d == device]
        share = shares.get(names[device])
        if share is None:
            continue
        summed = _summed(parts, device)
        rows_in.append((summed, _sum_interval(parts), share.kv_cache_bytes))
    total_low = sum(i[0] for _, i, _ in rows_in)
    total_high = sum(i[1] for _, i, _ in rows_in)
    total_predicted = sum(p for _, _, p in rows_in)
    whole_matches = total_low <= total_predicted <= total_high
    split_stated = "tensor_split" in run.parsed.settings or "tensor_split" in run.parsed.runner_settings
    for summed, interval, predicted in rows_in:
        alternatives: tuple[Alternative, ...] = ()
        if whole_matches and len(accelerators) > 1 and not split_stated and not _is_host(summed.device or ""):
            alternatives = (Alternative(rule=Rule.DEVICE_SPLIT, low=summed.value, high=summed.value,
                                        explanation="the devices together hold what servewise predicts; llama.cpp "
                                        "shares layers out in proportion to each device's free memory by default, "
                                        "servewise evenly (the log does not state the free memory of each)"),)
        out.rows.append(judge(summed, "KV buffers on this device", _point(predicted, "plan.devices[].kv_cache_bytes "
                              "(even layer split over the log's devices)"), alternatives, interval))
    return [f for f in last.values()]


def _summed(parts: list[Figure], device: str) -> Figure:
    """One figure standing for the sum of a device's per-cache buffer prints (same unit and decimals)."""
    first = parts[0]
    decimals = max(len(p.printed.split(".")[1]) if "." in p.printed else 0 for p in parts)
    total = sum(float(p.printed.replace(",", "")) for p in parts)
    return first.model_copy(update={"printed": f"{total:.{decimals}f}", "value": sum(p.value for p in parts),
                                    "device": device, "cache": None, "name": "kv_buffer_bytes"})


def _sum_interval(parts: list[Figure]) -> tuple[int, int]:
    lows, highs = zip(*(p.interval() for p in parts), strict=True)
    return int(sum(lows)), int(sum(highs))


def _llamacpp_context_from_cache(run: EngineRun, out: Outcome) -> list[Figure]:
    """-c and -np read from the KV cache line when the log lost the llama_context lines; those figures become inputs."""
    parsed = run.parsed
    fields_set = run.settings.model_fields_set
    cells, seqs = parsed.figure("cells", cache="kv"), parsed.figure("seqs", cache="kv")
    streams = parsed.figure("streams", cache="kv")
    update: dict[str, object] = {}
    inputs: list[Figure] = []
    if "parallel" not in fields_set and seqs is not None:
        update["parallel"] = int(seqs.value)
        inputs.append(seqs)
        out.assumptions.append(f"-np {int(seqs.value)} read from the KV cache line's seqs (no llama_context lines)")
    if "ctx_size" not in fields_set and cells is not None:
        n_streams = int(streams.value) if streams is not None else 1
        update["ctx_size"] = int(cells.value) * n_streams
        inputs.append(cells)
        out.assumptions.append(f"-c {update['ctx_size']} read from the KV cache line's cells (no llama_context lines)")
    if "kv_unified" not in fields_set and streams is not None:
        update["kv_unified"] = int(streams.value) == 1
        inputs.append(streams)
        out.assumptions.append(f"kv_unified {'on' if update['kv_unified'] else 'off'} read from the KV cache line's "
                               f"{int(streams.value)} stream(s)")
    if update:
        out.settings = run.settings.model_copy(update=update)
    return inputs


# ---------------------------------------------------------------------------------------------------
# vLLM
# ---------------------------------------------------------------------------------------------------


def _first(parsed: ParsedLog, name: str) -> Figure | None:
    """The first print of a per-worker figure (every worker prints the same numbers)."""
    found = parsed.figures_named(name)
    return found[0] if found else None


def _setting_from_figure(out: Outcome, key: str, figure: Figure | None, where: str) -> BaseModel:
    """out.settings with `key` taken from a printed figure when the settings leave it unset (noted)."""
    if getattr(out.settings, key) is None and figure is not None:
        out.settings = out.settings.model_copy(update={key: int(figure.value)})
        out.assumptions.append(f"{key} {int(figure.value)} read from {where}")
    return out.settings


def vllm_rows(run: EngineRun) -> Outcome:
    """vLLM's blocks, token capacity, concurrency and budget against `plan_vllm`, fed the log's printed figures."""
    from calculators.engines.vllm.plan import VllmOverheads

    parsed, plan_fn = run.parsed, engine_module("vllm").plan
    out = Outcome(settings=run.settings)
    settings = _setting_from_figure(out, "max_model_len", _first(parsed, "concurrency_request_tokens"),
                                    "the 'Maximum concurrency for … tokens per request' line")
    if settings.max_model_len is None and run.arch.max_context_tokens is None:
        raise ServewiseInputError("the log does not print max_model_len: add it as a setting (max_model_len=…)")
    total = _first(parsed, "device_total_bytes")
    machine = _machine(run, int(total.value) if total else None, out.assumptions, "it only sets vLLM's default "
                       "batch limits")
    used: list[Figure] = []

    available = _first(parsed, "available_kv_cache_bytes")
    pool = _first(parsed, "num_gpu_blocks") or _first(parsed, "kv_tokens")
    if available is not None or pool is not None:
        if available is not None:
            budgets = available.interval()
            rounded: tuple[str, ...] = (f"Available KV cache memory {available.printed} {available.printed_unit}",)
        else:  # no budget printed: give the plan exactly the pool the engine printed, to check the rest
            budgets = (_pool_budget_bytes(run, settings, machine, pool),) * 2
            rounded = ()
            out.assumptions.append(f"KV budget set to the pool the log printed ({pool.printed} {pool.unit}); "
                                   "only the figures derived from it are checked")
        plans = [plan_fn(run.arch, settings.model_copy(update={"kv_cache_memory_bytes": max(1, int(b))}), machine, None)
                 for b in budgets]
        out.refusal = plans[0].refusal
        out.plan_notes = [n.message for n in plans[0].notes if n.code != "vllm_kv_cache_memory_bytes"]
        source = "the printed available KV memory" if available is not None else f"the printed {pool.name}"
        for name, label, attribute in (("num_gpu_blocks", "KV blocks on the GPU", "num_gpu_blocks"),
                                       ("kv_tokens", "KV cache size in tokens", "kv_tokens"),
                                       ("max_concurrency", "maximum concurrency", "max_concurrency"),
                                       ("estimated_max_model_len", "estimated maximum model length",
                                        "estimated_max_model_len")):
            figure = _first(parsed, name)
            if figure is None or (available is None and figure is pool):
                continue
            values = [getattr(p, attribute) for p in plans]
            if None in values:
                out.plan_notes.append(f"servewise's plan has no {label} for these inputs")
                continue
            used.append(figure)
            prediction = Prediction(low=min(values), high=max(values), basis=f"plan_vllm .{attribute} with "
                                    f"kv_cache_memory_bytes = {source}", rounded_inputs=rounded)
            workers = len({f.device for f in parsed.figures_named("available_kv_cache_bytes")}) or 1
            out.rows.append(judge(figure, label, prediction, _vllm_alternatives(name, plans, settings, workers)))
            if name == "num_gpu_blocks" and available is not None:
                # the printed block count pins the pool exactly: the figures derived from it need no rounding range
                exact = settings.model_copy(update={"kv_cache_memory_bytes": _pool_budget_bytes(run, settings,
                                                                                                 machine, figure)})
                plans, rounded, source = [plan_fn(run.arch, exact, machine, None)] * 2, (), "the printed GPU blocks"
        used.append(available or pool)
    else:
        out.plan_notes.append("the log does not print 'Available KV cache memory', so vLLM's block arithmetic "
                              "cannot be checked")
    budget = _vllm_budget_row(run, settings, machine, VllmOverheads)
    if budget is not None and available is not None:
        row, inputs = budget
        out.rows.append(judge(available, "available KV cache memory", row))
        used.extend(inputs)
    elif available is not None:
        estimated = _vllm_estimated_budget(run, settings, machine, total is not None)
        if estimated is not None:
            prediction, alternative, inputs = estimated
            out.rows.append(judge(available, "available KV cache memory", prediction, (alternative,)))
            used.extend(inputs)
    requested, util = _first(parsed, "requested_memory_bytes"), getattr(settings, "gpu_memory_utilization", None)
    if requested is not None and total is not None and "gpu_memory_utilization" in settings.model_fields_set:
        lo, hi = total.interval()
        used.append(requested)
        out.rows.append(judge(requested, "requested memory (total x gpu_memory_utilization)", Prediction(
            low=int(lo * util), high=int(hi * util), basis="plan_vllm requested_memory_bytes",
            rounded_inputs=(f"total GPU memory {total.printed} {total.printed_unit}",))))
        used.append(total)
    out.not_compared = _unused(parsed, used)
    return out


def _vllm_estimated_budget(run: EngineRun, settings: BaseModel, machine: Machine, total_printed: bool):
    """The available KV memory from the printed weights and servewise's estimated profile peaks.

    Used when the log prints the weights but not vLLM's profile (activation peak, non-torch memory). The
    prediction rests on estimates, so a difference no larger than the estimated peaks is `explained`.
    """
    weights = _first(run.parsed, "weights_bytes")
    if weights is None or (run.machine is None and not total_printed):
        return None
    from calculators.engines.vllm.plan import default_vllm_overheads

    ranks = settings.tensor_parallel_size * settings.pipeline_parallel_size
    plan = engine_module("vllm").plan(run.arch, settings.model_copy(update={"kv_cache_memory_bytes": None}), machine,
                                      int(weights.value) * ranks)
    estimate = default_vllm_overheads(run.arch, settings.tensor_parallel_size)
    peaks = estimate.activation_peak_bytes + estimate.non_torch_bytes
    predicted = plan.available_kv_cache_bytes
    prediction = Prediction(low=predicted, high=predicted, basis="plan_vllm budget with the printed weights and "
                            f"servewise's estimated activation peak and non-torch memory ({estimate.basis})")
    alternative = Alternative(rule=Rule.ESTIMATE, low=predicted - peaks, high=predicted + peaks,
                              explanation="servewise estimates the activation peak and non-torch memory vLLM "
                              f"profiles ({peaks / GIB:.2f} GiB together); the difference is within that estimate")
    return prediction, alternative, [weights]


def _pool_budget_bytes(run: EngineRun, settings: BaseModel, machine: Machine, pool: Figure) -> int:
    """Bytes of exactly the printed pool (blocks, or tokens / block size), from the plan's bytes per block."""
    probe = engine_module("vllm").plan(run.arch, settings.model_copy(update={"kv_cache_memory_bytes": GIB}),
                                        machine, None)
    if not probe.num_gpu_blocks:
        raise ServewiseInputError("servewise's vLLM plan has no KV blocks for this model")
    per_block = probe.kv_cache_bytes // probe.num_gpu_blocks
    blocks = int(pool.value) if pool.name == "num_gpu_blocks" else int(pool.value) // probe.block_size
    return blocks * per_block


# servewise's tolerance (not an engine fact) for how much less another rank may have had: ranks differ by
# their own CUDA context, NCCL buffers and activation peak, small next to the KV budget.
_PER_RANK_TOLERANCE = 0.05


def _vllm_alternatives(name: str, plans: list, settings: BaseModel, workers: int) -> tuple[Alternative, ...]:
    """Rules that make vLLM print another value: older versions' formulas, and the smallest worker's pool."""
    alternatives: list[Alternative] = []
    if name == "kv_tokens":
        # vLLM before the group-aware rule (kv_cache_utils.py @ 001cabc1) and v0: blocks x block size
        values = [p.num_gpu_blocks * p.block_size // max(1, len(p.kv_cache_groups)) for p in plans]
        alternatives.append(Alternative(rule=Rule.VERSION, low=min(values), high=max(values),
                                        explanation="older vLLM printed blocks x block size (per KV-cache group) "
                                        "rather than max concurrency x max_model_len"))
    if name == "max_concurrency":
        values = [p.num_gpu_blocks * p.block_size / p.max_model_len for p in plans]
        alternatives.append(Alternative(rule=Rule.VERSION, low=min(values), high=max(values),
                                        explanation="vLLM v0 divided the pool's tokens by max_model_len instead of "
                                        "counting whole blocks per request"))
    ranks = settings.tensor_parallel_size * settings.pipeline_parallel_size
    if name in ("kv_tokens", "num_gpu_blocks", "max_concurrency") and ranks > 1 and workers < ranks:
        # vllm/v1/core/kv_cache_utils.py unify_kv_cache_configs: every worker gets the smallest worker's block count
        low = min(getattr(p, name) for p in plans)
        alternatives.append(Alternative(
            rule=Rule.PER_RANK, low=low * (1 - _PER_RANK_TOLERANCE), high=low,
            explanation=f"with {ranks} workers vLLM keeps the smallest worker's pool (unify_kv_cache_configs), and "
            f"the log shows the available memory of {workers} of them; a worker with up to "
            f"{_PER_RANK_TOLERANCE:.0%} less memory gives the printed value (not verifiable from this log)"))
    return tuple(alternatives)


def _vllm_budget_row(run: EngineRun, settings: BaseModel, machine: Machine, overheads_type: type):
    """The 'Available KV cache memory' vLLM computes from the profile the log printed, as a range."""
    parsed = run.parsed
    total, weights = _first(parsed, "device_total_bytes"), _first(parsed, "weights_bytes")
    non_torch = _first(parsed, "non_torch_bytes")
    activation = _first(parsed, "activation_peak_bytes")
    peak_torch = _first(parsed, "peak_torch_bytes")
    if total is None or weights is None or non_torch is None or (activation is None and peak_torch is None):
        return None
    if "gpu_memory_utilization" not in settings.model_fields_set:
        return None
    ranks = settings.tensor_parallel_size * settings.pipeline_parallel_size
    rounded = tuple(f"{f.printed} {f.printed_unit}" for f in (total, weights, non_torch, activation or peak_torch))
    values = []
    for pick in (0, 1):  # 0: the smallest budget the prints allow, 1: the largest
        t = total.interval()[pick]
        w = weights.interval()[1 - pick]
        n = non_torch.interval()[1 - pick]
        if activation is not None:
            a = activation.interval()[1 - pick]
        else:  # v0 printed the torch peak, weights included
            a = max(0, peak_torch.interval()[1 - pick] - weights.interval()[pick])
        over = overheads_type(activation_peak_bytes=int(a), non_torch_bytes=int(n), basis="printed by the log")
        plan = engine_module("vllm").plan(run.arch, settings.model_copy(update={"kv_cache_memory_bytes": None}),
                                           machine.model_copy(update={"device_memory_bytes": int(t)}),
                                           int(w) * ranks, overheads=over)
        values.append(plan.available_kv_cache_bytes)
    basis = "plan_vllm budget: total x gpu_memory_utilization - weights - activation peak - non-torch (as printed)"
    if activation is None:
        basis += "; activation peak = printed torch peak - weights (vLLM v0 printed the peak with the weights)"
    used = [f for f in (total, weights, non_torch, activation, peak_torch) if f is not None]
    return Prediction(low=min(values), high=max(values), basis=basis, rounded_inputs=rounded), used


# ---------------------------------------------------------------------------------------------------
# SGLang
# ---------------------------------------------------------------------------------------------------


def sglang_rows(run: EngineRun) -> Outcome:
    """SGLang's K/V buffer sizes, request slots and token pool against `plan_sglang`, fed the log's figures."""
    parsed, plan_fn = run.parsed, engine_module("sglang").plan
    out = Outcome(settings=run.settings)
    context = _first(parsed, "context_len")
    settings = _setting_from_figure(out, "context_length", context, "the log's context_len")
    machine = _machine(run, None, out.assumptions, "it only sets SGLang's automatic chunk and graph sizes")
    used: list[Figure] = []
    tokens = _first(parsed, "kv_tokens") or _first(parsed, "max_total_num_tokens")
    if tokens is not None:
        # The pool arithmetic given the printed token count: ample memory, the pool capped at that count.
        pool = settings.model_copy(update={"max_total_tokens": int(tokens.value),
                                           "mem_fraction_static": settings.mem_fraction_static or 0.9})
        plan = plan_fn(run.arch, pool, machine, 0, free_before_load_bytes=1 << 50)
        out.plan_notes = [n.message for n in plan.notes if n.code != "sglang_max_total_tokens_too_large"]
        for name, label, attribute in (("k_bytes", "K size", "k_bytes"), ("v_bytes", "V size", "v_bytes"),
                                       ("max_running_requests", "maximum running requests", "max_running_requests")):
            figure = _first(parsed, name)
            if figure is None:
                continue
            if name == "max_running_requests" and context is None and settings.context_length is None:
                continue
            used.append(figure)
            out.rows.append(judge(figure, f"{label} for {int(tokens.value)} tokens",
                                  _point(getattr(plan, attribute), f"plan_sglang .{attribute} with the printed "
                                         "#tokens as max_total_tokens"),
                                  _sglang_alternatives(name, run, pool, machine, plan)))
    budget = _sglang_budget(run, settings, machine, out)
    if budget is not None and tokens is not None:
        prediction, inputs, alternatives = budget
        used.extend([tokens, *inputs])
        out.rows.append(judge(tokens, "KV pool size in tokens", prediction, alternatives))
    out.not_compared = _unused(parsed, used)
    return out


def _sglang_alternatives(name: str, run: EngineRun, pool: BaseModel, machine: Machine, plan) -> tuple[Alternative, ...]:
    """SGLang releases before the hybrid sliding-window pool kept every layer at full size."""
    if name not in ("k_bytes", "v_bytes") or plan.swa_max_total_num_tokens is None:
        return ()
    plan_all_full = engine_module("sglang").plan(_all_full(run.arch), pool, machine, 0, free_before_load_bytes=1 << 50)
    value = getattr(plan_all_full, name)
    return (Alternative(rule=Rule.VERSION, low=value, high=value,
                        explanation="this SGLang version allocated the sliding-window layers at full size "
                        "(no separate SWA pool): every layer holds every token"),)


def _sglang_budget(run: EngineRun, settings: BaseModel, machine: Machine, out: Outcome):
    """The token pool SGLang sizes from the free memory it printed before and after loading, as a range."""
    parsed = run.parsed
    before = _first(parsed, "avail_before_weights_bytes")
    after, weights = _first(parsed, "avail_after_weights_bytes"), _first(parsed, "weights_bytes")
    if (weights is None and (before is None or after is None)) or (before is None and after is None):
        out.plan_notes.append("the log does not print the free memory before and after loading the weights, so "
                              "SGLang's token pool cannot be recomputed")
        return None
    if settings.mem_fraction_static is None and run.machine is None:
        out.plan_notes.append("mem_fraction_static is not in the log: give it as a setting, or the GPU, to "
                              "recompute SGLang's token pool")
        return None
    ranks = settings.tp_size * settings.pp_size
    all_full = _all_full(run.arch)
    values: list[int] = []
    full_values: list[int] = []
    for pick in (0, 1):
        if weights is not None:
            w = weights.interval()[1 - pick]
            free = before.interval()[pick] if before is not None else after.interval()[pick] + w
        else:
            free, w = before.interval()[pick], before.interval()[pick] - after.interval()[1 - pick]
        for arch, into in ((run.arch, values), (all_full, full_values)):
            plan = engine_module("sglang").plan(arch, settings, machine, int(w) * ranks,
                                                 free_before_load_bytes=int(free))
            into.append(plan.max_total_num_tokens)
    inputs = [f for f in (before, after, weights) if f is not None]
    alternatives: tuple[Alternative, ...] = ()
    if all_full is not run.arch:
        alternatives = (Alternative(rule=Rule.VERSION, low=min(full_values), high=max(full_values),
                                    explanation="this SGLang version sized one pool with every layer at full size "
                                    "(no separate sliding-window pool)"),)
    return Prediction(low=min(values), high=max(values), rounded_inputs=tuple(f"{f.printed} {f.printed_unit}"
                      for f in inputs), basis="plan_sglang .max_total_num_tokens from the printed free memory "
                      "and weights"), inputs, alternatives


def _all_full(arch: ModelArchitecture) -> ModelArchitecture:
    """The same model with its sliding-window layers treated as full attention (older engines' rule)."""
    if not arch.layers_of(LayerKind.SLIDING):
        return arch
    return replace(arch, layers=tuple(
        replace(layer, kind=LayerKind.FULL, sliding_window_tokens=None) if layer.kind is LayerKind.SLIDING else layer
        for layer in arch.layers))


ROW_BUILDERS: dict[str, Callable[[EngineRun], Outcome]] = {
    "llama-cpp": llamacpp_rows,
    "ollama": lambda run: llamacpp_rows(run, engine="ollama"),
    "vllm": vllm_rows,
    "sglang": sglang_rows,
}
