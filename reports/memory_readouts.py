"""Text of the Memory & capacity page: the brief's arithmetic for the chosen model, each engine's own figures
in its own vocabulary, and the Markdown / JSON export. Formatting only; the numbers come from calculators/.
"""

from __future__ import annotations

import json
from collections import Counter
from functools import singledispatch
from typing import Any

from calculators.engines.llama_cpp.plan import LlamaCppPlan
from calculators.engines.mlx_lm.plan import MlxLmPlan
from calculators.engines.ollama.plan import OllamaPlan
from calculators.engines.sglang.plan import SglangPlan
from calculators.engines.vllm.plan import VllmPlan
from calculators.engines.vllm.steps import pool_steps
from calculators.i18n import _
from calculators.memory.capacity import Capacity
from calculators.memory.compare import EngineComparison, Workload
from calculators.memory.kv import layer_kv_bytes_per_token, raw_kv_estimate
from calculators.memory.plan import ComponentKind, MemoryPlan
from calculators.model.architecture import LayerKind, ModelArchitecture
from calculators.units import GIB, KIB, MIB
from reports.memory_json import engine_entry, memory_document
from reports.pool_steps_text import pool_steps_markdown

#: Raw element size per workload cache type (block scales of q8_0/q4_0 excluded: the engines add them).
RAW_BYTES_PER_ELEMENT = {"16-bit": 2.0, "8-bit": 1.0, "4-bit": 0.5}


def markdown_table(rows: list[dict[str, Any]]) -> str:
    """A Markdown table of `rows` (keys of the first row are the header); much lighter than a dataframe."""
    if not rows:
        return ""
    header = list(rows[0])

    def cell(value: Any) -> str:
        if isinstance(value, bool):
            return "yes" if value else ""
        return str(value).replace("|", "\\|")

    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(cell(row.get(key, "")) for key in header) + " |" for row in rows]
    return "\n".join(lines)


def human_bytes(n: float) -> str:
    """Bytes in binary units, saying which (GiB = 2^30)."""
    if abs(n) >= GIB:
        return f"{n / GIB:,.2f} GiB"
    if abs(n) >= MIB:
        return f"{n / MIB:,.1f} MiB"
    if abs(n) >= KIB:
        return f"{n / KIB:,.1f} KiB"
    return f"{n:,.0f} B"


def arithmetic_rows(arch: ModelArchitecture, bytes_per_element: float) -> list[dict[str, Any]]:
    """One row per distinct layer geometry: what a token costs in it and in all such layers (bytes)."""
    groups = Counter(arch.layers)
    rows = []
    for layer, count in groups.items():
        per_layer = layer_kv_bytes_per_token(layer, bytes_per_element)
        state_elements = layer.recurrent_conv_elements + layer.recurrent_state_elements
        if layer.kind is LayerKind.MLA:
            shape = f"latent {layer.kv_lora_rank} + rope key {layer.qk_rope_head_dim}"
        elif layer.kind is LayerKind.RECURRENT:
            shape = f"fixed state {state_elements:,} elements/seq"
        elif layer.kind is LayerKind.NONE:
            shape = _("nothing kept between tokens (MLP or expert block only)")
        else:
            shape = f"2 x {layer.n_kv_heads} KV heads x {layer.head_dim_k}" if layer.head_dim_k == layer.head_dim_v \
                else f"{layer.n_kv_heads} x ({layer.head_dim_k} + {layer.head_dim_v})"
            if state_elements:  # attention and a recurrent mixer side by side (Falcon-H1)
                shape += _(", plus a fixed state of {elements} elements per sequence").format(
                    elements=f"{state_elements:,}")
        window = f" (window {layer.sliding_window_tokens:,})" if layer.kind is LayerKind.SLIDING else ""
        rows.append({
            "layer kind": layer.kind.value + window,
            "layers": count,
            "elements per token": shape,
            "bytes per token per layer": f"{per_layer:,.0f}",
            "bytes per token, these layers": f"{per_layer * count:,.0f}",
        })
    return rows


def arithmetic_markdown(arch: ModelArchitecture, workload: Workload) -> str:
    """The brief's worked arithmetic for this model: per token, per sequence, for N sequences (with units)."""
    size = RAW_BYTES_PER_ELEMENT[workload.kv_cache_type]
    raw = raw_kv_estimate(arch, workload.context_tokens, workload.sequences, size)
    per_token = raw.bytes_per_token_unbounded_layers + raw.bytes_per_token_window_layers
    lines = [
        f"Element size: **{size:g} bytes** ({workload.kv_cache_type} cache; the 2 in '2 x heads' is keys + values; "
        "grouped-query attention stores KV heads, not query heads).",
        f"- Per token, all layers: **{per_token:,.0f} bytes = {human_bytes(per_token)}**"
        + (" (sliding-window layers stop growing at their window)" if raw.bytes_per_token_window_layers else ""),
        f"- Per sequence of {workload.context_tokens:,} tokens: **{human_bytes(raw.kv_bytes_per_sequence)}**"
        f" ({raw.kv_bytes_per_sequence:,.0f} bytes)",
    ]
    if raw.recurrent_state_bytes_per_sequence:
        lines.append(f"- Recurrent state per sequence (fixed, any length): "
                     f"{human_bytes(raw.recurrent_state_bytes_per_sequence)}")
    lines.append(f"- For {workload.sequences:,} sequences: **{human_bytes(raw.total_bytes)}** "
                 f"({raw.total_bytes:,.0f} bytes; GiB = 2^30 bytes)")
    lines.append("\nRaw figure: every sequence at full length, no prefix sharing, no block or padding granularity, "
                 "no weights or workspace. The engines below add their own rules.")
    return "\n".join(lines)


def architecture_warnings(arch: ModelArchitecture) -> list[str]:
    """Where this model's layers change the simple arithmetic (MLA, sliding window, hybrid recurrent)."""
    out = []
    if arch.layers_of(LayerKind.MLA):
        out.append("Multi-head latent attention: each token stores one compressed latent and a rope key per layer, "
                   "not K and V per head, so '2 x KV heads x head dim' does not apply.")
    if arch.layers_of(LayerKind.SLIDING):
        out.append("Sliding-window layers keep at most their window; engines differ in whether they exploit that "
                   "(vLLM's hybrid manager, llama.cpp's SWA cache, SGLang's SWA pool) or keep full-size caches.")
    if arch.layers_of(LayerKind.RECURRENT):
        out.append("Hybrid recurrent layers hold a fixed state per sequence instead of a growing KV cache; "
                   "engines pool that state separately.")
    if arch.moe is not None:
        out.append("Mixture of experts: every expert's weights stay resident although only a few run per token.")
    return out


def _g(n: float) -> str:
    return f"{n / GIB:,.2f} GiB"


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
        f"Available KV cache memory: **{_g(p.available_kv_cache_bytes)}**",
        f"GPU KV cache size: **{p.kv_tokens:,} tokens** ({p.num_gpu_blocks:,} blocks of {p.block_size})",
        f"Maximum concurrency for {p.max_model_len:,} tokens per request: **{p.max_concurrency:.2f}x**",
        f"max_num_seqs {p.max_num_seqs} · max_num_batched_tokens {p.max_num_batched_tokens:,} · "
        f"kv_cache_dtype {p.kv_cache_dtype} · TP {p.tensor_parallel_size} x PP {p.pipeline_parallel_size}",
    ]
    if p.mamba_state is not None or any(g.draft_layers for g in p.kv_cache_groups):
        lines += pool_steps_markdown(pool_steps(p))  # the state pages and drafter layers, step by step
    return lines


@plan_readout.register
def _sglang_readout(p: SglangPlan) -> list[str]:
    auto = " (automatic)" if p.mem_fraction_static_is_auto else ""
    return [
        f"mem_fraction_static: **{p.mem_fraction_static}**{auto}",
        f"max_total_num_tokens: **{p.max_total_num_tokens:,}** · max_running_requests: "
        f"**{p.max_running_requests:,}** · context_len {p.context_len:,}",
        f"KV Cache is allocated. #tokens: {p.max_total_num_tokens:,}, K size: {p.k_bytes / GIB:.2f} GB, "
        f"V size: {p.v_bytes / GIB:.2f} GB (SGLang's 'GB' divides by 2^30)",
        f"chunked_prefill_size {p.chunked_prefill_size} · cuda_graph_max_bs {p.cuda_graph_max_bs} · "
        f"page_size {p.page_size}",
        *_sglang_mamba_lines(p),
    ]


def _sglang_mamba_lines(p: SglangPlan) -> list[str]:
    """The recurrent-state pool, fixed per slot whatever the context (SGLang's own log line, then the arithmetic)."""
    m = p.mamba
    if m is None:
        return []
    conv = " x ".join(map(str, m.conv_shape))
    ssm = " x ".join(map(str, m.ssm_shape))
    lines = [
        f"Mamba Cache is allocated. max_mamba_cache_size: **{m.max_mamba_cache_size:,}**, conv_state size: "
        f"{m.conv_state_bytes / GIB:.2f} GB, ssm_state size: {m.ssm_state_bytes / GIB:.2f} GB",
        f"One slot: {m.layers} state layers x (conv {conv} {m.conv_dtype} + state {ssm} {m.ssm_dtype}) = "
        f"**{m.bytes_per_request:,} bytes**, whatever the context; sized by {m.sizing}; the pool holds one more slot",
        f"Each running request holds {m.slots_per_request} slot(s) ({m.strategy})"
        + (f": the state pool caps max_running_requests at {m.max_mamba_cache_size // m.slots_per_request:,}"
           if m.caps_running_requests else ""),
    ]
    if m.intermediate_bytes:
        lines.append(f"Speculative verify scratch for the state: {m.intermediate_bytes / GIB:.2f} GiB")
    return lines


@plan_readout.register
def _mlx_lm_readout(p: MlxLmPlan) -> list[str]:
    ws = _g(p.working_set_bytes) if p.working_set_bytes else "unknown"
    kv = f"quantized to {p.kv_bits} bits" if p.quantized else "not quantized"
    return [
        f"Cache slots per layer and sequence: **{p.allocated_tokens:,}** (grows in {p.step_tokens}-token steps)",
        f"{p.n_sequences} sequence(s) · KV {kv} · max_kv_size: {p.max_kv_size_behaviour}",
        f"GPU working set: {ws} ({p.working_set_basis})",
        *_mlx_state_lines(p),
    ]


def _mlx_state_lines(p: MlxLmPlan) -> list[str]:
    """The ArraysCache state of the recurrent layers: per sequence, fixed whatever the context (bytes)."""
    per_sequence = sum(c.state_bytes for c in p.layer_caches)
    if not per_sequence:
        return []
    layers = sum(1 for c in p.layer_caches if c.state_bytes)
    return [_("Recurrent state (ArraysCache) of {layers} layers: {per_sequence} per sequence, fixed whatever the "
              "context; {total} for {sequences} sequence(s)").format(
        layers=layers, per_sequence=f"**{_g(per_sequence)}**", total=_g(per_sequence * p.n_sequences),
        sequences=p.n_sequences)]


@plan_readout.register
def _llama_cpp_readout(p: LlamaCppPlan) -> list[str]:
    lines = [f"-c {p.n_ctx:,} over -np {p.n_seq} slots: each slot holds **{p.n_ctx_slot:,} tokens** "
             "(ctx-size / parallel, never ctx-size per slot)"]
    for cache in p.caches:
        lines.append(f"llama_kv_cache ({cache.name}): size = {cache.total_bytes / MIB:,.2f} MiB "
                     f"({cache.cells:,} cells, {cache.layers} layers, {cache.seqs} seqs), "
                     f"K ({cache.type_k}): {cache.k_bytes / MIB:,.2f} MiB, V ({cache.type_v}): "
                     f"{cache.v_bytes / MIB:,.2f} MiB")
    lines.append(f"-ngl {p.n_gpu_layers} · flash attention {p.flash_attn.value} · "
                 f"{'unified KV' if p.kv_unified else str(p.n_stream) + ' KV streams'}")
    return lines


@plan_readout.register
def _ollama_readout(p: OllamaPlan) -> list[str]:
    return [
        f"Effective llama-server -c: **{p.effective_ctx_size:,}** = num_ctx {p.per_request_context:,}"
        f" x OLLAMA_NUM_PARALLEL {p.effective_parallel} (-np)",
        f"Ollama's own estimate: {_g(p.predicted_for_load_bytes)} against {_g(p.available_bytes)} "
        f"available · {'fits' if p.fits_preflight else 'fails'} its pre-flight check · "
        f"{'one GPU' if p.single_gpu else 'split over GPUs'}",
        *plan_readout.dispatch(LlamaCppPlan)(p),
    ]


def speculation_rows(with_drafter: MemoryPlan, without: MemoryPlan) -> list[dict[str, Any]]:
    """The run with its speculative drafter next to the same run without it: weights, cache, used and free memory.

    'used' sums every slice the plan shows on its device, so a drafter with a context of its own (llama-server
    -md) shows there even though the target's KV cache figure does not change."""
    def free(plan: MemoryPlan) -> int:
        return sum(c.bytes for c in plan.components if c.kind is ComponentKind.FREE)

    def row(label: str, plan: MemoryPlan) -> dict[str, Any]:
        return {"run": label,
                "weights / device": human_bytes(plan.weights_bytes) if plan.weights_bytes is not None else "unknown",
                "KV and state cache / device": human_bytes(plan.kv_cache_bytes),
                "bytes per token": f"{plan.kv_bytes_per_token:,}",
                "used / device": human_bytes(plan.used_bytes),
                "free / device": human_bytes(free(plan))}
    return [row("with the drafter", with_drafter), row("without it", without)]


def offload_rows(row: EngineComparison) -> list[dict[str, Any]]:
    """llama.cpp / Ollama: what each device holds (layers, weights, caches)."""
    devices = getattr(row.plan, "devices", None) or []
    return [{"device": d.device, "layers": d.repeating_layers, "output layer": d.holds_output_layer,
             "weights": human_bytes(d.weights_bytes) if d.weights_bytes is not None else "unknown",
             "KV cache": human_bytes(d.kv_cache_bytes)} for d in devices]


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


def export_json(data: dict[str, Any]) -> str:
    """The export as indented JSON text."""
    return json.dumps(data, indent=2)


def export_markdown(data: dict[str, Any]) -> str:
    """The export as a Markdown report (GiB = 2^30 bytes)."""
    w = data["workload"]
    weights = data["model_weights_bytes"]
    lines = [
        "# servewise memory & capacity plan",
        "",
        "Estimates from published engine rules and arithmetic, not measurements.",
        "",
        f"- Model: {data['model']}",
        f"- Machine: {data['machine']}",
        f"- Workload: {w['sequences']} sequences x {w['context_tokens_per_sequence']:,} tokens, "
        f"{w['kv_cache_type']} KV cache",
        f"- Weights: {human_bytes(weights) if weights else 'unknown'}",
        "",
        "| engine | holds the workload | weights / GPU | KV cache / GPU | longest context | most sequences |",
        "|---|---|---|---|---|---|",
    ]
    for e in data["engines"]:
        plan = e["plan"]
        if plan is None:
            lines.append(f"| {e['engine']} | n/a: {e['not_applicable'] or e['error']} | | | | |")
            continue
        # per GPU as the bars show it: the busiest device's components
        weights_gpu = sum(c["bytes"] for c in plan["components"] if c["kind"] == "weights")
        kv_gpu = sum(c["bytes"] for c in plan["components"] if c["kind"] in ("kv_cache", "recurrent_state"))
        lines.append(f"| {e['engine']} | {'yes' if e['holds_workload'] else 'no'} | {human_bytes(weights_gpu)} | "
                     f"{human_bytes(kv_gpu)} | {e['max_context_tokens_for_sequences']} | "
                     f"{e['max_sequences_at_context']} |")
    lines.append("")
    for e in data["engines"]:
        if e["launch_command"]:
            lines += [f"## {e['engine']}", "", "```sh", e["launch_command"], "```", ""]
            if e["plan"] and e["plan"]["refusal"]:
                lines += [f"Refuses to start: {e['plan']['refusal']}", ""]
            for note in (e["plan"] or {}).get("notes", []):
                lines.append(f"- {note['message']}")
            lines.append("")
    return "\n".join(lines)
