"""llama.cpp's printed caches, devices and context against `plan_llamacpp` (also Ollama's relayed runner)."""

from __future__ import annotations

from dataclasses import replace

from calculators.engines.llama_cpp.plan import ENGINE_ID, LlamaCppSettings, plan_llamacpp
from calculators.hardware.machine import Machine
from calculators.i18n import N_, _, ngettext
from calculators.model.architecture import LayerKind, ModelArchitecture
from calculators.reconcile.log.figures import Figure
from calculators.reconcile.result import Alternative, Rule, judge
from calculators.reconcile.rows import (
    EngineRun,
    Outcome,
    point,
    unused_figures,
)

_CACHE_FIGURES = (
    ("kv_cache_bytes", N_("K+V size"), "total_bytes"),
    ("recurrent_state_bytes", N_("R+S state size"), "total_bytes"),
    ("k_bytes", N_("K size"), "k_bytes"),
    ("v_bytes", N_("V size"), "v_bytes"),
    ("cells", N_("cells"), "cells"),
    ("layers", N_("layers"), "layers"),
    ("seqs", N_("sequences"), "seqs"),
    ("streams", N_("KV streams"), "n_stream"),
)
#: What each cache llama.cpp prints is called on the page: its internal name is a slug ("kv", "kv_swa").
_CACHE_NAMES = {
    "kv": N_("KV"),
    "kv_swa": N_("sliding-window KV"),
    "recurrent": N_("recurrent"),
}
_MLA_FULL_KV = N_(
    "this GGUF was converted without the MLA form of its attention (no {arch}.attention.key_length_mla / "
    "value_length_mla, no split attn_k_b / attn_v_b tensors), so llama.cpp caches every head's full K "
    "(qk_nope + qk_rope) and V (v_head_dim) instead of the latent + rope key; ggml-org/llama.cpp PR #12801 "
    "(DeepSeek V2/V3 MLA, 2025-04) caches the latent only for files converted with it"
)


def full_kv_arch(arch: ModelArchitecture) -> ModelArchitecture | None:
    """The model as llama.cpp runs a pre-MLA conversion of it: its MLA layers as plain per-head attention."""
    if not arch.layers_of(LayerKind.MLA):
        return None
    layers = tuple(replace(layer, kind=LayerKind.FULL, kv_lora_rank=0, qk_rope_head_dim=0)
                   if layer.kind is LayerKind.MLA else layer for layer in arch.layers)
    return replace(arch, layers=layers)


def _mla_alternative(value: int | float | None, arch: ModelArchitecture) -> tuple[Alternative, ...]:
    if value is None:
        return ()
    return (Alternative(rule=Rule.MLA_FULL_KV, low=value, high=value,
                        explanation=_(_MLA_FULL_KV).format(arch=arch.family)),)


def llamacpp_rows(run: EngineRun, engine: str = ENGINE_ID, plan_fn=plan_llamacpp) -> Outcome:
    """llama.cpp's cache lines (`llama_kv_cache: size = …`) and slot figures against `plan_llamacpp`.

    `run` holds llama.cpp's settings, or Ollama's (with Ollama's plan_fn); the device rows run for llama.cpp's only.
    """
    parsed = run.parsed
    out = Outcome(settings=run.settings)
    inputs = _llamacpp_context_from_cache(run, out) if engine == ENGINE_ID else []
    file_bytes = parsed.figure("model_file_bytes")
    weights = int(file_bytes.value) if file_bytes else None
    plan = plan_fn(run.arch, out.settings, run.machine, weights)
    out.refusal = plan.refusal
    out.plan_notes = [note.message for note in plan.notes]
    state_known = any(layer.recurrent_state_elements for layer in run.arch.layers_of(LayerKind.RECURRENT))
    full_arch = full_kv_arch(run.arch)
    full_plan = plan_fn(full_arch, out.settings, run.machine, weights) if full_arch else None
    used: list[Figure] = []
    for cache_name in parsed.caches():
        cache = next((c for c in plan.caches if c.name == cache_name), None)
        if cache is None:
            out.plan_notes.append(_("the log prints a '{cache_name}' cache that servewise's plan does not "
                                    "allocate").format(cache_name=cache_name))
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
            full_cache = next((c for c in full_plan.caches if c.name == cache_name), None) if full_plan else None
            full_value = getattr(full_cache, attribute) if full_cache and figure.unit == "bytes" else None
            used.append(figure)
            cache_words = _(_CACHE_NAMES[cache_name]) if cache_name in _CACHE_NAMES else cache_name
            shown = _("{label} ({cache_name} cache)").format(label=_(label), cache_name=cache_words)
            out.rows.append(judge(figure, shown,
                                  point(predicted, _("plan cache '{cache_name}'.{attribute}").format(
                                                     cache_name=cache_name, attribute=attribute)),
                                  _mla_alternative(full_value, run.arch)))
    for name, label, attribute in (("slots", N_("server slots"), "n_seq"), ("slot_ctx_tokens", N_("context per slot"),
                                                                          "n_ctx_slot")):
        for figure in parsed.figures_named(name)[-1:]:
            used.append(figure)
            out.rows.append(judge(figure, _(label), point(getattr(plan, attribute), _("plan.{attribute}").format(
                attribute=attribute))))
    if engine == ENGINE_ID and not any(c.name == "recurrent" for c in plan.caches if not state_known):
        used += _device_rows(run, out, file_bytes)
    out.not_compared = unused_figures(parsed, used + inputs)
    return out


def _is_host(device: str) -> bool:
    return device.startswith("CPU") or device.endswith("_Host") or device == "host"


def _device_rows(run: EngineRun[LlamaCppSettings], out: Outcome[LlamaCppSettings],
                 file_bytes: Figure | None) -> list[Figure]:
    """Each device's KV buffers (all caches summed) against the plan's layer split over the log's devices."""
    parsed = run.parsed
    last: dict[tuple[str, str | None], Figure] = {}
    for figure in parsed.figures_named("kv_buffer_bytes") + parsed.figures_named("recurrent_buffer_bytes"):
        if figure.basis.startswith("allocated by "):
            continue  # another engine's allocation (Ollama's own engine), judged by that engine's estimate rows
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
            out.assumptions.append(_("every KV buffer the log prints is on an accelerator: all layers offloaded"))
        if offloaded is None:
            out.plan_notes.append(_("the log states neither -ngl nor 'offloaded N/M layers', so the KV buffers per "
                                  "device are not compared"))
            return []
        repeating = parsed.figure("offloaded_repeating_layers")
        if repeating is not None:  # the blocks, which hold the KV: -ngl N + 1 places N blocks and the output
            settings = settings.model_copy(update={"n_gpu_layers": int(repeating.value) + 1})
            out.assumptions.append(_("{printed} blocks on the GPUs, read from 'offloading {printed} "
                                     "repeating layers' (the output layer holds no KV)").format(
                                     printed=repeating.printed))
        else:
            settings = settings.model_copy(update={"n_gpu_layers": int(offloaded.value)})
        if offloaded.line and repeating is None:
            out.assumptions.append(_("-ngl {value} read from 'offloaded {printed}/… layers'").format(
                                     value=int(offloaded.value), printed=offloaded.printed))
    if not accelerators:
        settings = settings.model_copy(update={"n_gpu_layers": 0})  # every buffer the log prints is in host memory
    machine = None
    if accelerators:
        machine = (run.machine or Machine(device_memory_bytes=1 << 40)).model_copy(
            update={"n_devices": len(accelerators)})
    plan = plan_llamacpp(run.arch, settings.model_copy(update={"fit": False}), machine,
                                           int(file_bytes.value) if file_bytes else None)
    shares = {share.device: share for share in plan.devices}
    full_arch = full_kv_arch(run.arch)
    full_shares = {share.device: share.kv_cache_bytes for share in plan_llamacpp(
        full_arch, settings.model_copy(update={"fit": False}), machine,
        int(file_bytes.value) if file_bytes else None).devices} if full_arch else {}
    names = {device: ("host" if _is_host(device) else f"gpu{accelerators.index(device)}") for device in devices}
    rows_in: list[tuple[Figure, tuple[int, int], int, int | None]] = []
    for device in devices:
        parts = [f for (d, _), f in last.items() if d == device]
        share = shares.get(names[device])
        if share is None:
            continue
        summed = _summed(parts, device)
        rows_in.append((summed, _sum_interval(parts), share.kv_cache_bytes, full_shares.get(names[device])))
    total_low = sum(i[0] for _, i, _, _ in rows_in)
    total_high = sum(i[1] for _, i, _, _ in rows_in)
    total_predicted = sum(p for _, _, p, _ in rows_in)
    whole_matches = total_low <= total_predicted <= total_high
    split_stated = "tensor_split" in run.parsed.settings or "tensor_split" in run.parsed.runner_settings
    for summed, interval, predicted, full_predicted in rows_in:
        alternatives: tuple[Alternative, ...] = _mla_alternative(full_predicted, run.arch)
        if whole_matches and len(accelerators) > 1 and not split_stated and not _is_host(summed.device or ""):
            alternatives += (Alternative(rule=Rule.DEVICE_SPLIT, low=summed.value, high=summed.value,
                                        explanation=_("the devices together hold what servewise predicts; llama.cpp "
                                        "shares layers out in proportion to each device's free memory by default, "
                                        "servewise evenly (the log does not state the free memory of each)")),)
        out.rows.append(judge(summed, _("KV buffers on this device"), point(
            predicted, _("plan.devices[].kv_cache_bytes "
                              "(even layer split over the log's devices)")), alternatives, interval))
    return list(last.values())


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
        out.assumptions.append(_("-np {value} read from the KV cache line's seqs (no llama_context lines)").format(
                                 value=int(seqs.value)))
    if "ctx_size" not in fields_set and cells is not None:
        n_streams = int(streams.value) if streams is not None else 1
        update["ctx_size"] = int(cells.value) * n_streams
        inputs.append(cells)
        out.assumptions.append(_("-c {ctx_size} read from the KV cache line's cells (no llama_context lines)").format(
                                 ctx_size=update['ctx_size']))
    if "kv_unified" not in fields_set and streams is not None:
        update["kv_unified"] = int(streams.value) == 1
        inputs.append(streams)
        n_streams = int(streams.value)
        out.assumptions.append(ngettext("kv_unified={value} read from the KV cache line's {streams} stream",
                                        "kv_unified={value} read from the KV cache line's {streams} streams",
                                        n_streams).format(value="on" if update["kv_unified"] else "off",
                                                          streams=n_streams))
    if update:
        out.settings = run.settings.model_copy(update=update)
    return inputs


