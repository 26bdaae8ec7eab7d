"""Text of the Memory & capacity page: the brief's arithmetic for the chosen model, each engine's own figures
in its own vocabulary, and the Markdown / JSON export. Formatting only; the numbers come from calculators/.
"""

from __future__ import annotations

from collections import Counter
from functools import singledispatch
from typing import Any

from calculators.engines import display_name
from calculators.engines.llama_cpp.plan import LlamaCppPlan
from calculators.engines.mlx_lm.plan import MlxLmPlan
from calculators.engines.ollama.plan import OllamaPlan
from calculators.engines.sglang.plan import SglangPlan
from calculators.engines.vllm.plan import VllmPlan
from calculators.engines.vllm.steps import pool_steps
from calculators.i18n import N_, _, ngettext
from calculators.memory.capacity import Capacity
from calculators.memory.compare import EngineComparison, Workload
from calculators.memory.kv import layer_kv_bytes_per_token, raw_kv_estimate
from calculators.memory.plan import ComponentKind, MemoryPlan
from calculators.model.architecture import LayerKind, ModelArchitecture
from calculators.units import GIB, KIB, MIB
from reports.json_text import json_document
from reports.memory_json import engine_entry, memory_document
from reports.numbers import compact, number, quantity, with_unit
from reports.pool_steps_text import pool_steps_markdown

#: Raw element size per workload cache type (block scales of q8_0/q4_0 excluded: the engines add them).
RAW_BYTES_PER_ELEMENT = {"16-bit": 2.0, "8-bit": 1.0, "4-bit": 0.5}


#: What a reader calls each layer kind in the arithmetic table (the ids stay in JSON; English shows the id itself).
LAYER_KIND_WORDS: dict[LayerKind, str] = {
    LayerKind.FULL: N_("full"), LayerKind.SLIDING: N_("sliding"), LayerKind.MLA: N_("mla"),
    LayerKind.RECURRENT: N_("recurrent"), LayerKind.NONE: N_("none"),
}


def human_bytes(n: float) -> str:
    """Bytes in binary units, saying which (GiB = 2^30)."""
    if abs(n) >= GIB:
        return quantity(n / GIB, "GiB", 2)
    if abs(n) >= MIB:
        return quantity(n / MIB, "MiB", 1)
    if abs(n) >= KIB:
        return quantity(n / KIB, "KiB", 1)
    return quantity(n, "B", 0)


NO_BREAK_SPACE = "\u00a0"


def replica_layout_text(replicas: int, tensor_parallel: int) -> str:
    """A multi-GPU layout as a table cell reads it, "2 replicas × TP 1" in the reader's language.

    Every space is a no-break space except the one after the ×, the one place a narrow column may wrap: the Spanish
    "2 réplicas × TP 1" wrapped before its number ("2 réplicas × TP" / "1") in the several-GPUs table at 1024 px.
    """
    text = ngettext("{replicas} replica × TP {tp}", "{replicas} replicas × TP {tp}", replicas).format(
        replicas=number(replicas), tp=number(tensor_parallel))
    return NO_BREAK_SPACE.join(text.split(" ")).replace(f"×{NO_BREAK_SPACE}", "× ")


def arithmetic_rows(arch: ModelArchitecture, bytes_per_element: float) -> list[dict[str, Any]]:
    """One row per distinct layer geometry: what a token costs in it and in all such layers (bytes)."""
    groups = Counter(arch.layers)
    rows = []
    for layer, count in groups.items():
        per_layer = layer_kv_bytes_per_token(layer, bytes_per_element)
        state_elements = layer.recurrent_conv_elements + layer.recurrent_state_elements
        if layer.kind is LayerKind.MLA:
            shape = _("latent {rank} + rope key {rope}").format(rank=layer.kv_lora_rank, rope=layer.qk_rope_head_dim)
        elif layer.kind is LayerKind.RECURRENT:
            shape = _("fixed state {elements} elements/seq").format(elements=number(state_elements))
        elif layer.kind is LayerKind.NONE:
            shape = _("nothing kept between tokens (MLP or expert block only)")
        else:
            shape = _("2 × {heads} KV heads × {dim}").format(heads=layer.n_kv_heads, dim=layer.head_dim_k) \
                if layer.head_dim_k == layer.head_dim_v \
                else f"{layer.n_kv_heads} × ({layer.head_dim_k} + {layer.head_dim_v})"
            if state_elements:  # attention and a recurrent mixer side by side (Falcon-H1)
                shape += _(", plus a fixed state of {elements} elements per sequence").format(
                    elements=number(state_elements))
        window = " " + _("(window {tokens})").format(tokens=number(layer.sliding_window_tokens or 0)) \
            if layer.kind is LayerKind.SLIDING else ""
        rows.append({
            _("layer kind"): _(LAYER_KIND_WORDS[layer.kind]) + window,
            _("layers"): count,
            _("elements per token"): shape,
            _("bytes per token per layer"): number(per_layer),
            _("bytes per token, these layers"): number(per_layer * count),
        })
    return rows


def arithmetic_markdown(arch: ModelArchitecture, workload: Workload) -> str:
    """The brief's worked arithmetic for this model: per token, per sequence, for N sequences (with units)."""
    size = RAW_BYTES_PER_ELEMENT[workload.kv_cache_type]
    raw = raw_kv_estimate(arch, workload.context_tokens, workload.sequences, size)
    per_token = raw.bytes_per_token_unbounded_layers + raw.bytes_per_token_window_layers
    lines = [
        ngettext("Element size: **{size}\u00a0byte** ({cache_type} cache; the 2 in '2 × heads' is keys + values; "
                 "grouped-query attention stores KV heads, not query heads).",
                 "Element size: **{size}\u00a0bytes** ({cache_type} cache; the 2 in '2 × heads' is keys + values; "
                 "grouped-query attention stores KV heads, not query heads).", size).format(
            size=compact(size), cache_type=workload.kv_cache_type),
        "- " + _("Per token, all layers: **{bytes}\u00a0bytes = {human}**").format(
            bytes=number(per_token), human=human_bytes(per_token))
        + (" " + _("(sliding-window layers stop growing at their window)")
           if raw.bytes_per_token_window_layers else ""),
        "- " + _("Per sequence of {tokens}\u00a0tokens: **{human}** ({bytes}\u00a0bytes)").format(
            tokens=number(workload.context_tokens), human=human_bytes(raw.kv_bytes_per_sequence),
            bytes=number(raw.kv_bytes_per_sequence)),
    ]
    if raw.recurrent_state_bytes_per_sequence:
        lines.append("- " + _("Recurrent state per sequence (fixed, any length): {human}").format(
            human=human_bytes(raw.recurrent_state_bytes_per_sequence)))
    lines.append("- " + _("For {sequences} sequences: **{human}** ({bytes}\u00a0bytes; GiB = 2^30\u00a0bytes)").format(
        sequences=number(workload.sequences), human=human_bytes(raw.total_bytes), bytes=number(raw.total_bytes)))
    lines.append("\n" + _("Raw figure: every sequence at full length, no prefix sharing, no block or padding "
                          "granularity, no weights or workspace. The engines below add their own rules."))
    return "\n".join(lines)


def architecture_warnings(arch: ModelArchitecture) -> list[str]:
    """Where this model's layers change the simple arithmetic (MLA, sliding window, hybrid recurrent)."""
    out = []
    if arch.layers_of(LayerKind.MLA):
        out.append(_("Multi-head latent attention: each token stores one compressed latent and a rope key per "
                     "layer, not K and V per head, so '2 × KV heads × head dim' does not apply."))
    if arch.layers_of(LayerKind.SLIDING):
        out.append(_("Sliding-window layers keep at most their window; engines differ in whether they exploit that "
                     "(vLLM's hybrid manager, llama.cpp's SWA cache, SGLang's SWA pool) or keep full-size caches."))
    if arch.layers_of(LayerKind.RECURRENT):
        out.append(_("Hybrid recurrent layers hold a fixed state per sequence instead of a growing KV cache; "
                     "engines pool that state separately."))
    if arch.moe is not None:
        out.append(_("Mixture of experts: every expert's weights stay resident although only a few run per token."))
    return out


def _g(n: float) -> str:
    return quantity(n / GIB, "GiB", 2)


def engine_readout(row: EngineComparison) -> list[str]:
    """The engine's own start-up figures, in its vocabulary (Markdown lines)."""
    return [] if row.plan is None else plan_readout(row.plan)


@singledispatch
def plan_readout(p: MemoryPlan) -> list[str]:
    """The plan's own start-up figures in its engine's vocabulary; each engine's plan type registers one."""
    return []


@plan_readout.register
def _vllm_readout(p: VllmPlan) -> list[str]:
    lines = [
        _("Available KV cache memory: **{gib}**").format(gib=_g(p.available_kv_cache_bytes)),
        _("GPU KV cache size: **{tokens}\u00a0tokens** ({blocks} blocks of {block})").format(
            tokens=number(p.kv_tokens), blocks=number(p.num_gpu_blocks), block=p.block_size),
        _("Maximum concurrency for {tokens}\u00a0tokens per request: **{times}x**").format(
            tokens=number(p.max_model_len), times=number(p.max_concurrency, 2)),
        # setting names as code spans, as everywhere a page names a flag or setting
        f"`max_num_seqs` {p.max_num_seqs} · `max_num_batched_tokens` {number(p.max_num_batched_tokens)} · "
        f"`kv_cache_dtype` {p.kv_cache_dtype} · TP {p.tensor_parallel_size} × PP {p.pipeline_parallel_size}",
    ]
    if p.mamba_state is not None or any(g.draft_layers for g in p.kv_cache_groups):
        lines += pool_steps_markdown(pool_steps(p))  # the state pages and drafter layers, step by step
    return lines


@plan_readout.register
def _sglang_readout(p: SglangPlan) -> list[str]:
    auto = " " + _("(automatic)") if p.mem_fraction_static_is_auto else ""
    return [
        f"`mem_fraction_static`: **{compact(p.mem_fraction_static, 3)}**{auto}",
        f"`max_total_num_tokens`: **{number(p.max_total_num_tokens)}** · `max_running_requests`: "
        f"**{number(p.max_running_requests)}** · `context_len` {number(p.context_len)}",
        _("KV Cache is allocated. #tokens: {tokens}, K size: {k}\u00a0GB, V size: {v}\u00a0GB (SGLang's 'GB' divides "
          "by 2^30)"
          ).format(tokens=number(p.max_total_num_tokens), k=number(p.k_bytes / GIB, 2), v=number(p.v_bytes / GIB, 2)),
        f"`chunked_prefill_size` {p.chunked_prefill_size} · `cuda_graph_max_bs` {p.cuda_graph_max_bs} · "
        f"`page_size` {p.page_size}",
        *_sglang_mamba_lines(p),
    ]


def _sglang_mamba_lines(p: SglangPlan) -> list[str]:
    """The recurrent-state pool, fixed per slot whatever the context (SGLang's own log line, then the arithmetic)."""
    m = p.mamba
    if m is None:
        return []
    conv = " × ".join(map(str, m.conv_shape))
    ssm = " × ".join(map(str, m.ssm_shape))
    cap = _(": the state pool caps max_running_requests at {cap}").format(
        cap=number(m.max_mamba_cache_size // m.slots_per_request)) if m.caps_running_requests else ""
    lines = [
        # SGLang's own start-up line, as it prints it
        f"Mamba Cache is allocated. max_mamba_cache_size: **{m.max_mamba_cache_size:,}**, conv_state size: "
        f"{with_unit(f'{m.conv_state_bytes / GIB:.2f}', 'GB')}, ssm_state size: "
        f"{with_unit(f'{m.ssm_state_bytes / GIB:.2f}', 'GB')}",
        _("One slot: {layers} state layers × (conv {conv} {conv_dtype} + state {ssm} {ssm_dtype}) = **{bytes}\u00a0"
          "bytes**, whatever the context; sized by {sizing}; the pool holds one more slot").format(
            layers=m.layers, conv=conv, conv_dtype=m.conv_dtype, ssm=ssm, ssm_dtype=m.ssm_dtype,
            bytes=number(m.bytes_per_request), sizing=m.sizing),
        ngettext("Each running request holds {slots} slot ({strategy})",
                 "Each running request holds {slots} slots ({strategy})", m.slots_per_request).format(
            slots=m.slots_per_request, strategy=m.strategy) + cap,
    ]
    if m.intermediate_bytes:
        lines.append(_("Speculative verify scratch for the state: {gib}\u00a0GiB").format(
            gib=number(m.intermediate_bytes / GIB, 2)))
    return lines


@plan_readout.register
def _mlx_lm_readout(p: MlxLmPlan) -> list[str]:
    ws = _g(p.working_set_bytes) if p.working_set_bytes else _("unknown")
    kv = _("quantized to {bits} bits").format(bits=p.kv_bits) if p.quantized else _("not quantized")
    return [
        _("Cache slots per layer and sequence: **{slots}** (grows in {step}-token steps)").format(
            slots=number(p.allocated_tokens), step=p.step_tokens),
        ngettext("{n} sequence · KV {kv} · `max_kv_size`: {behaviour}",
                 "{n} sequences · KV {kv} · `max_kv_size`: {behaviour}", p.n_sequences).format(
            n=number(p.n_sequences), kv=kv, behaviour=_(p.max_kv_size_behaviour)),
        _("GPU working set: {ws} ({basis})").format(ws=ws, basis=_(p.working_set_basis)),
        *_mlx_state_lines(p),
    ]


def _mlx_state_lines(p: MlxLmPlan) -> list[str]:
    """The ArraysCache state of the recurrent layers: per sequence, fixed whatever the context (bytes)."""
    per_sequence = sum(c.state_bytes for c in p.layer_caches)
    if not per_sequence:
        return []
    layers = sum(1 for c in p.layer_caches if c.state_bytes)
    return [ngettext("Recurrent state (ArraysCache) of {layers} layers: {per_sequence} per sequence, fixed whatever "
                     "the context; {total} for {sequences} sequence",
                     "Recurrent state (ArraysCache) of {layers} layers: {per_sequence} per sequence, fixed whatever "
                     "the context; {total} for {sequences} sequences", p.n_sequences).format(
        layers=layers, per_sequence=f"**{_g(per_sequence)}**", total=_g(per_sequence * p.n_sequences),
        sequences=p.n_sequences)]


@plan_readout.register
def _llama_cpp_readout(p: LlamaCppPlan) -> list[str]:
    # each flag with its value one code span, spelled as the command line takes it (65536, not 65,536 / 65.536)
    lines = [_("`-c {ctx}` over `-np {seqs}` slots: each slot holds **{slot}\u00a0tokens** "
               "(`ctx-size` / `parallel`, never `ctx-size` per slot)").format(
        ctx=p.n_ctx, seqs=p.n_seq, slot=number(p.n_ctx_slot))]
    for cache in p.caches:
        # llama.cpp's own start-up line in its own notation ('%.2f MiB', bare counts, English words), in any
        # language: what the reader finds in their log and compares it with (the reconcile table does the same)
        lines.append(f"`llama_kv_cache ({cache.name}): size = {cache.total_bytes / MIB:.2f} MiB "
                     f"({cache.cells} cells, {cache.layers} layers, {cache.seqs} seqs), "
                     f"K ({cache.type_k}): {cache.k_bytes / MIB:.2f} MiB, V ({cache.type_v}): "
                     f"{cache.v_bytes / MIB:.2f} MiB`")
    streams = _("unified KV") if p.kv_unified else ngettext("{n} KV stream", "{n} KV streams", p.n_stream).format(
        n=number(p.n_stream))
    # the -fa value as llama.cpp spells it (on / off / auto), in a code span: the same word in every language
    lines.append(_("`-ngl {ngl}` · `-fa {fa}` (flash attention) · {streams}").format(
        ngl=p.n_gpu_layers, fa=p.flash_attn.value, streams=streams))
    return lines


@plan_readout.register
def _ollama_readout(p: OllamaPlan) -> list[str]:
    return [
        _("Effective llama-server `-c`: **{ctx}** = `num_ctx` {per_request} × `OLLAMA_NUM_PARALLEL` {parallel} "
          "(`-np`)").format(
            ctx=number(p.effective_ctx_size), per_request=number(p.per_request_context), parallel=p.effective_parallel),
        _("Ollama's own estimate: {predicted} against {available} available · {verdict} · {gpus}").format(
            predicted=_g(p.predicted_for_load_bytes), available=_g(p.available_bytes),
            verdict=_("fits its pre-flight check") if p.fits_preflight else _("fails its pre-flight check"),
            gpus=_("one GPU") if p.single_gpu else _("split over GPUs")),
        *plan_readout.dispatch(LlamaCppPlan)(p),
    ]


def speculation_rows(with_drafter: MemoryPlan, without: MemoryPlan) -> list[dict[str, Any]]:
    """The run with its speculative drafter next to the same run without it: weights, cache, used and free memory.

    'used' sums every slice the plan shows on its device, so a drafter with a context of its own (llama-server
    -md) shows there even though the target's KV cache figure does not change."""
    def free(plan: MemoryPlan) -> int:
        return sum(c.bytes for c in plan.components if c.kind is ComponentKind.FREE)

    def row(label: str, plan: MemoryPlan) -> dict[str, Any]:
        return {_("run"): label,
                _("weights / device"): human_bytes(plan.weights_bytes) if plan.weights_bytes is not None
                else _("unknown"),
                _("KV and state cache / device"): human_bytes(plan.kv_cache_bytes),
                _("bytes per token"): number(plan.kv_bytes_per_token),
                _("used / device"): human_bytes(plan.used_bytes),
                _("free / device"): human_bytes(free(plan))}
    return [row(_("with the drafter"), with_drafter), row(_("without it"), without)]


def offload_rows(row: EngineComparison) -> list[dict[str, Any]]:
    """llama.cpp / Ollama: what each device holds (layers, weights, caches)."""
    devices = getattr(row.plan, "devices", None) or []
    return [{_("device"): d.device, _("layers"): d.repeating_layers, _("output layer"): d.holds_output_layer,
             _("weights"): human_bytes(d.weights_bytes) if d.weights_bytes is not None else _("unknown"),
             _("KV cache"): human_bytes(d.kv_cache_bytes)} for d in devices]


def export_data(model: str, machine_label: str, workload: Workload, weights_bytes: int | None,
                rows: list[EngineComparison], capacities: list[Capacity],
                commands: dict[str, str]) -> dict[str, Any]:
    """The whole plan as plain data (bytes and tokens) for the JSON export: the one memory document
    (`reports.memory_json`), `weights_bytes` being the whole model's."""
    caps = {c.engine: c for c in capacities}
    engines = []
    for row in rows:
        cap = caps.get(row.engine)
        engines.append(engine_entry(
            row.engine, settings=row.settings, plan=row.plan, not_applicable=row.not_applicable, error=row.error,
            holds_workload=row.holds if row.plan else None,
            max_context_tokens=cap.max_context_tokens if cap else None,
            max_sequences=cap.max_sequences if cap else None,
            launch_command=commands.get(row.engine),
        ))
    return memory_document(
        model=model, engines=engines, machine=machine_label, model_weights_bytes=weights_bytes,
        workload={"context_tokens_per_sequence": workload.context_tokens, "sequences": workload.sequences,
                  "kv_cache_type": workload.kv_cache_type},
    )


def _count(value: int | None) -> str:
    return "" if value is None else number(value)


def export_json(data: dict[str, Any]) -> str:
    """The export as indented JSON text."""
    return json_document(data, indent=2)


def export_markdown(data: dict[str, Any]) -> str:
    """The export as a Markdown report (GiB = 2^30 bytes): engines by name (the JSON keeps their ids)."""
    w = data["workload"]
    weights = data["model_weights_bytes"]
    header = (_("engine"), _("holds the workload"), _("weights / GPU"), _("KV cache / GPU"), _("longest context"),
              _("most sequences"))
    lines = [
        _("# servewise memory & capacity plan"),
        "",
        _("Estimates from published engine rules and arithmetic, not measurements."),
        "",
        "- " + _("Model: {model}").format(model=data["model"]),
        "- " + _("Machine: {machine}").format(machine=data["machine"]),
        "- " + _("Workload: {sequences} sequences × {tokens}\u00a0tokens, {cache_type} KV cache").format(
            sequences=w["sequences"], tokens=number(w["context_tokens_per_sequence"]), cache_type=w["kv_cache_type"]),
        "- " + _("Weights: {weights}").format(weights=human_bytes(weights) if weights else _("unknown")),
        "",
        "| " + " | ".join(header) + " |",
        "|---|---|---|---|---|---|",
    ]
    for e in data["engines"]:
        plan = e["plan"]
        if plan is None:
            why = e["not_applicable"] or e["error"]
            lines.append(f"| {display_name(e['engine'])} | " + _("n/a: {why}").format(why=why) + " | | | | |")
            continue
        # per GPU as the bars show it: the busiest device's components
        weights_gpu = sum(c["bytes"] for c in plan["components"] if c["kind"] == "weights")
        kv_gpu = sum(c["bytes"] for c in plan["components"] if c["kind"] in ("kv_cache", "recurrent_state"))
        holds = _("yes") if e["holds_workload"] else _("no")
        lines.append(f"| {display_name(e['engine'])} | {holds} | {human_bytes(weights_gpu)} | "
                     f"{human_bytes(kv_gpu)} | {_count(e['max_context_tokens_for_sequences'])} | "
                     f"{_count(e['max_sequences_at_context'])} |")
    lines.append("")
    for e in data["engines"]:
        if e["launch_command"]:
            lines += [f"## {display_name(e['engine'])}", "", "```sh", e["launch_command"], "```", ""]
            if e["plan"] and e["plan"]["refusal"]:
                lines += [_("Refuses to start: {refusal}").format(refusal=e["plan"]["refusal"]), ""]
            for note in (e["plan"] or {}).get("notes", []):
                lines.append(f"- {note['message']}")
            lines.append("")
    return "\n".join(lines)
