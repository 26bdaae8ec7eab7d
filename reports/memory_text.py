"""A memory plan as plain text for the terminal (the `memory` verb without --json)."""

from __future__ import annotations

from calculators.units import GIB, MIB

#: Engine-specific figures worth a line, in each engine's own vocabulary, when the plan has them.
ENGINE_FIGURES = (
    ("n_ctx", "n_ctx (tokens, all slots)"),
    ("n_ctx_seq", "n_ctx_seq (tokens per slot)"),
    ("n_seq", "slots (sequences)"),
    ("effective_ctx_size", "llama-server -c as Ollama starts it"),
    ("effective_parallel", "llama-server -np as Ollama starts it"),
    ("num_gpu_blocks", "GPU blocks"),
    ("kv_tokens", "GPU KV cache size (tokens)"),
    ("max_concurrency", "maximum concurrency (x max_model_len)"),
    ("max_model_len", "max_model_len (tokens)"),
    ("max_total_num_tokens", "max_total_num_tokens"),
    ("max_running_requests", "max_running_requests"),
    ("model_file", "mlx_lm/models/<file>.py running the model"),
    ("retained_tokens", "tokens per sequence (prompt + generated)"),
    ("n_sequences", "sequences"),
    ("allocated_tokens", "allocated tokens per sequence (step-rounded)"),
)


def _size(n_bytes: int | float | None) -> str:
    if n_bytes is None:
        return "unknown"
    return f"{n_bytes / GIB:,.2f} GiB ({n_bytes / MIB:,.2f} MiB, {int(n_bytes):,} bytes)"


def memory_plan_text(result) -> str:
    """Lines describing a MemoryCommandResult: inputs, caches as the engine logs them, totals, refusal."""
    plan = result.plan
    lines = [
        f"engine: {plan.engine}",
        f"model: {result.model.arch.name} ({result.model.source})",
        f"weights: {_size(plan.weights_bytes)} — {result.weights_basis}",
        f"KV bytes per token: {plan.kv_bytes_per_token:,}",
        f"KV cache: {_size(plan.kv_cache_bytes)}",
    ]
    device = getattr(plan, "device_label", None)  # vLLM prints "CPU KV cache size" on its CPU build
    for name, label in ENGINE_FIGURES:
        if device:
            label = label.replace("GPU", device)
        value = getattr(plan, name, None)
        if value is not None:
            shown = f"{value:,}" if isinstance(value, int) else f"{value:,.2f}" if isinstance(value, float) else value
            lines.append(f"{label}: {shown}")
    for cache in plan.caches:
        lines.append(
            f"cache {cache.name}: {cache.cells:,} cells, {cache.layers} layers, {cache.seqs} seqs, "
            f"K ({cache.type_k}) {cache.k_bytes / MIB:,.2f} MiB, V ({cache.type_v}) {cache.v_bytes / MIB:,.2f} MiB"
        )
    for component in plan.components:
        exactness = "exact" if component.exact else "estimate"
        lines.append(f"  {component.label}: {_size(component.bytes)} [{exactness}]")
    for note in plan.notes:
        lines.append(f"note: {note.message}")
    for note in result.notes:
        lines.append(f"note: {note}")
    if plan.refusal:
        lines.append(f"REFUSAL: {plan.refusal}")
    return "\n".join(lines)
