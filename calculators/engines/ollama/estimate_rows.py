"""Ollama's own start-up figures against servewise's model of Ollama's estimator (memory_estimate).

The `msg=offload` line (Ollama v0.1–v0.12.10) and the per-device `kv cache` lines print what Ollama
predicted and then allocated. servewise recomputes them for the same context, parallel requests, KV
type and GPUs: the KV cache from the model's geometry; the layer split, per-GPU allocations and the
required totals from that KV and the weights, graph and free memory the log itself printed (those are
inputs, rounded to 0.1 GiB, so their rows carry the `rounded_input` rule).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from calculators.engines.ollama.memory_estimate import (
    ESTIMATE_REMOVED_IN,
    estimator_era,
    kv_estimate,
    layer_estimate,
    parse_version,
)
from calculators.i18n import _
from calculators.model.architecture import ModelArchitecture
from calculators.reconcile.log.figures import Figure, ParsedLog
from calculators.reconcile.result import Prediction, ReconcileRow, RowStatus, judge
from calculators.units import with_unit

DEFAULT_BATCH = 512  # api/types.go DefaultOptions NumBatch


@dataclass
class OllamaRows:
    """Rows for Ollama's own figures, the figures they used as inputs, and what could not be checked."""

    rows: list[ReconcileRow] = field(default_factory=list)
    inputs: list[Figure] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    assumptions: list[str] = field(default_factory=list)


def _int_setting(parsed: ParsedLog, overrides: dict[str, object], *keys: str) -> int | None:
    for key in keys:
        for source in (overrides, parsed.runner_settings, parsed.settings):
            value = source.get(key)
            if isinstance(value, int) and not isinstance(value, bool) and value > 0:
                return value
    return None


def _context(parsed: ParsedLog, overrides: dict[str, object], out: OllamaRows) -> tuple[int, int] | None:
    """(runner context = num_ctx x parallel, parallel) as the log or the overrides state it."""
    parallel = _int_setting(parsed, overrides, "num_parallel", "parallel") or None
    total = None
    if "context_length" in overrides or "num_ctx" in overrides:
        per_request = _int_setting(parsed, overrides, "num_ctx", "context_length")
        total = per_request * (parallel or 1) if per_request else None
    if total is None:
        total = _int_setting(parsed, {}, "ctx_size")
    if total is None and (per_request := _int_setting(parsed, {}, "context_length")):
        total = per_request * (parallel or 1)
    if total is None:
        out.notes.append(_("the log does not state Ollama's context (the runner's --ctx-size or the load request's "
                         "KvSize): add --set context_length=N (and num_parallel=N) to check its KV estimate"))
        return None
    if parallel is None:
        parallel = 1
        out.assumptions.append(_("num_parallel 1: the log does not state it"))
    return total, parallel


def _kv_type(parsed: ParsedLog, overrides: dict[str, object]) -> str:
    """Ollama applies OLLAMA_KV_CACHE_TYPE only with flash attention and when the model supports it."""
    if any(note.code == "kv_cache_type_ignored" for note in parsed.notes):
        return ""
    requested = overrides.get("kv_cache_type") or parsed.settings.get("kv_cache_type") or ""
    flash = overrides.get("flash_attention", parsed.settings.get("flash_attention"))
    return str(requested) if requested and flash else ""


def estimate_rows(parsed: ParsedLog, arch: ModelArchitecture, overrides: dict[str, object] | None = None) -> OllamaRows:
    """Judge Ollama's printed estimate (and its engine's KV allocation) against servewise's recomputation."""
    overrides = overrides or {}
    out = OllamaRows()
    version = parse_version(parsed.version)
    if version is not None and version >= ESTIMATE_REMOVED_IN and parsed.figure("estimate_kv_bytes") is not None:
        out.notes.append(_("Ollama {version} no longer prints msg=offload; this line comes from another run").format(
                           version=parsed.version))
    context = _context(parsed, overrides, out)
    if context is None:
        return out
    total_ctx, parallel = context
    batch = min(_int_setting(parsed, overrides, "batch_size", "num_batch") or DEFAULT_BATCH, total_ctx)
    kv_type = _kv_type(parsed, overrides)
    kv = kv_estimate(arch, ctx_tokens=total_ctx, num_parallel=parallel, batch_tokens=batch,
                     kv_cache_type=kv_type, version=version)
    where = (f"num_ctx x parallel = {with_unit(str(total_ctx), 'tokens')}, parallel {parallel}, batch {batch}, "
             f"KV {kv_type or 'f16'}; {kv.rule}")
    estimate = parsed.figure("estimate_kv_bytes")
    if estimate is not None:
        out.rows.append(judge(estimate, _("Ollama's KV estimate (memory.required.kv)"),
                              Prediction(low=kv.total_bytes, high=kv.total_bytes,
                                         basis=_("fs/ggml GraphSize kv: {where}").format(where=where))))
    allocated = [f for f in parsed.figures_named("kv_buffer_bytes") if f.basis.startswith("allocated by Ollama")]
    if allocated:
        summed, interval = _sum(allocated)
        out.rows.append(judge(summed, _("KV cache on all devices (Ollama's per-device lines)"),
                              Prediction(low=kv.total_bytes, high=kv.total_bytes,
                                         basis=_("GraphSize kv for the same context: {where}").format(where=where)),
                              printed_interval=interval))
    layers_model = next((f for f in parsed.figures_named("total_layers") if "layers.model" in f.basis
                         or "model layers" in f.basis), None)
    if layers_model is not None:
        out.rows.append(judge(layers_model, _("layers Ollama counts (blocks + output)"),
                              Prediction(low=arch.n_layers + 1, high=arch.n_layers + 1,
                                         basis=_("blocks + 1 (output)"))))
    _layer_rows(parsed, arch, kv.per_layer_bytes, version, overrides, out)
    return out


def _sum(figures: list[Figure]) -> tuple[Figure, tuple[int, int]]:
    lows, highs = zip(*(f.interval() for f in figures), strict=True)
    first = figures[0]
    decimals = max(len(f.printed.split(".")[1]) if "." in f.printed else 0 for f in figures)
    same_unit = all(f.printed_unit == first.printed_unit for f in figures)
    printed = (f"{sum(float(f.printed) for f in figures):.{decimals}f}" if same_unit
               else " + ".join(f"{f.printed} {f.printed_unit}" for f in figures))
    summed = first.model_copy(update={"printed": printed, "value": sum(f.value for f in figures), "device": None})
    return summed, (int(sum(lows)), int(sum(highs)))


def _layer_rows(parsed: ParsedLog, arch: ModelArchitecture, kv_per_layer: tuple[int, ...], version, overrides,
                out: OllamaRows) -> None:
    """layers.offload, layers.split, the per-GPU allocations and the required totals, from the printed inputs."""
    available = parsed.figures_named("device_available_bytes")
    repeating = parsed.figure("estimate_weights_repeating_bytes")
    nonrepeating = parsed.figure("estimate_weights_nonrepeating_bytes")
    graph_full = parsed.figure("estimate_graph_full_bytes")
    graph_partial = parsed.figure("estimate_graph_partial_bytes")
    layers = parsed.figure("estimate_offload_layers")
    if not (available and repeating and nonrepeating and graph_full and graph_partial and layers):
        return
    available = [f for f in available if f.line == layers.line] or available[-len(available):]
    overhead = parsed.figure("gpu_overhead_bytes")
    proj_w, proj_g = parsed.figure("estimate_projector_weights_bytes"), parsed.figure("estimate_projector_graph_bytes")
    candidates = (*available, repeating, nonrepeating, graph_full, graph_partial, overhead, proj_w, proj_g)
    inputs = [f for f in candidates if f]
    library = str(parsed.settings.get("library") or "cuda")
    if library.lower() == "cpu":
        out.notes.append(_("Ollama planned for the CPU only (library=cpu): its CPU allocation is not modelled, so the "
                         "layer and allocation figures of msg=offload are listed unchecked"))
        return
    num_gpu = overrides.get("num_gpu", parsed.settings.get("num_gpu", -1))
    num_gpu = num_gpu if isinstance(num_gpu, int) else -1
    era = estimator_era(version, parsed.logged_at)
    forward = era.forward
    if version is None:
        out.notes.append(_("estimator variant: {reason}").format(reason=era.reason))
    results = []
    for pick in (0, 1):  # 0: least room (high sizes, low free), 1: most room
        def lo_hi(f: Figure, pick: int = pick) -> int:  # a size: its largest value when room is least
            return int(f.interval()[1 - pick])

        def hi_lo(f: Figure, pick: int = pick) -> int:  # free memory: its smallest value when room is least
            return int(f.interval()[pick])

        blocks = lo_hi(repeating)
        if era.weights_include_kv:  # "repeating" was blocks + KV - output: take the KV back out, add the output
            blocks = max(blocks + hi_lo(nonrepeating) - sum(kv_per_layer), 0)
        per_layer = blocks // arch.n_layers
        results.append(layer_estimate(
            kv_per_layer=kv_per_layer,
            layer_weight_bytes=(per_layer,) * arch.n_layers,
            output_bytes=lo_hi(nonrepeating),
            graph_partial_bytes=lo_hi(graph_partial),
            graph_full_bytes=lo_hi(graph_full),
            gpu_free_bytes=tuple(hi_lo(f) for f in available),
            library=library,
            overhead_bytes=int(overhead.value) if overhead else 0,
            num_gpu=num_gpu,
            projector_weights_bytes=lo_hi(proj_w) if proj_w else 0,
            projector_graph_bytes=lo_hi(proj_g) if proj_g else 0,
            projector_in_engine=bool(proj_g and proj_g.value),
            forward=forward,
        ))
    rounded = tuple(f"{f.printed} {f.printed_unit}" for f in inputs)
    basis = ("llm/memory.go estimateGPULayers (v0.12.10) with servewise's KV per layer and the printed free memory, "
             "weights (spread evenly over the blocks) and graph"
             + ("; memory.weights.* read with the KV in them (before v0.6.1)" if era.weights_include_kv else "")
             + ("; blocks placed first-up (before v0.7.0)" if forward else ""))

    def predict(values: list[int]) -> Prediction:
        return Prediction(low=min(values), high=max(values), basis=basis, rounded_inputs=rounded)

    start = len(out.rows)

    out.rows.append(judge(layers, _("layers Ollama planned to offload (layers.offload)"),
                          predict([r.layers for r in results])))
    for index, figure in enumerate(parsed.figures_named("estimate_split_layers")):
        if index < len(results[0].split):
            out.rows.append(judge(figure, _("layers Ollama planned for this GPU (layers.split)"),
                                  predict([r.split[index] for r in results])))
    planned = [f for f in parsed.figures_named("estimate_allocation_bytes") if f.line == layers.line]
    for index, figure in enumerate(planned):
        if index < len(results[0].allocations):
            out.rows.append(judge(figure, _("Ollama's planned allocation on this GPU"),
                                  predict([r.allocations[index] for r in results])))
    for name, label, attribute in (("estimate_required_partial_bytes", "memory.required.partial",
                                    "required_partial_bytes"),
                                   ("estimate_required_full_bytes", "memory.required.full", "required_full_bytes")):
        required = parsed.figure(name)
        if required is not None:
            out.rows.append(judge(required, _("Ollama's {label}").format(
                                              label=label), predict([getattr(r, attribute) for r in results])))
    if arch.moe and arch.moe.n_dense_layers:
        uneven = _("the blocks' sizes differ (k-quant mixes such as Q4_K_M give some blocks wider tensors; this "
                   "model's first {dense} blocks are dense), but the log prints only their sum, which servewise "
                   "spreads evenly over the blocks").format(dense=arch.moe.n_dense_layers)
    else:
        uneven = _("the blocks' sizes differ (k-quant mixes such as Q4_K_M give some blocks wider tensors), but "
                   "the log prints only their sum, which servewise spreads evenly over the blocks")
    for index in range(start, len(out.rows)):
        if out.rows[index].status is RowStatus.UNEXPLAINED:
            out.rows[index] = out.rows[index].model_copy(update={"explanation": uneven})
    out.inputs.extend(inputs)
