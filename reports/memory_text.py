"""A memory plan as plain text for the terminal (the `memory` verb without --json), in the reader's language."""

from __future__ import annotations

from calculators.i18n import N_, _
from calculators.units import GIB, MIB
from reports.numbers import number

#: Engine-specific figures worth a line, in each engine's own vocabulary, when the plan has them.
ENGINE_FIGURES = (
    ("n_ctx", N_("n_ctx (tokens, all slots)")),
    ("n_ctx_seq", N_("n_ctx_seq (tokens per slot)")),
    ("n_seq", N_("slots (sequences)")),
    ("effective_ctx_size", N_("llama-server -c as Ollama starts it")),
    ("effective_parallel", N_("llama-server -np as Ollama starts it")),
    ("num_gpu_blocks", N_("GPU blocks")),
    ("kv_tokens", N_("GPU KV cache size (tokens)")),
    ("max_concurrency", N_("maximum concurrency (x max_model_len)")),
    ("max_model_len", N_("max_model_len (tokens)")),
    ("max_total_num_tokens", "max_total_num_tokens"),
    ("max_running_requests", "max_running_requests"),
    ("model_file", N_("mlx_lm/models/<file>.py running the model")),
    ("retained_tokens", N_("tokens per sequence (prompt + generated)")),
    ("n_sequences", N_("sequences")),
    ("allocated_tokens", N_("allocated tokens per sequence (step-rounded)")),
)


def _size(n_bytes: int | float | None) -> str:
    if n_bytes is None:
        return _("unknown")
    return _("{gib}\u00a0GiB ({mib}\u00a0MiB, {n_bytes}\u00a0bytes)").format(
        gib=number(n_bytes / GIB, 2), mib=number(n_bytes / MIB, 2), n_bytes=number(int(n_bytes)))


def _shown(value: object) -> str:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return str(value)
    return number(value) if isinstance(value, int) else number(value, 2)


def memory_plan_text(result) -> str:
    """Lines describing a MemoryCommandResult: inputs, caches as the engine logs them, totals, refusal."""
    plan = result.plan
    lines = [
        _("engine: {engine}").format(engine=plan.engine),
        _("model: {name} ({source})").format(name=result.model.arch.name, source=result.model.source),
        _("weights: {size} — {basis}").format(size=_size(plan.weights_bytes), basis=result.weights_basis),
        _("KV bytes per token: {n_bytes}").format(n_bytes=number(plan.kv_bytes_per_token)),
        _("KV cache: {size}").format(size=_size(plan.kv_cache_bytes)),
    ]
    device = getattr(plan, "device_label", None)  # vLLM prints "CPU KV cache size" on its CPU build
    for name, label_id in ENGINE_FIGURES:
        label = _(label_id)
        if device:
            label = label.replace("GPU", device)
        value = getattr(plan, name, None)
        if value is not None:
            lines.append(f"{label}: {_shown(value)}")
    for cache in plan.caches:
        lines.append(_(
            "cache {name}: {cells} cells, {layers} layers, {seqs} seqs, K ({type_k}) {k_mib}\u00a0MiB, "
            "V ({type_v}) {v_mib}\u00a0MiB").format(
            name=cache.name, cells=number(cache.cells), layers=cache.layers, seqs=cache.seqs, type_k=cache.type_k,
            k_mib=number(cache.k_bytes / MIB, 2), type_v=cache.type_v, v_mib=number(cache.v_bytes / MIB, 2)))
    for component in plan.components:
        exactness = _("exact") if component.exact else _("estimate")
        lines.append(f"  {component.label}: {_size(component.bytes)} [{exactness}]")
    for note in plan.notes:
        lines.append(_("note: {message}").format(message=note.message))
    for note in result.notes:
        lines.append(_("note: {message}").format(message=note))
    if plan.refusal:
        lines.append(_("REFUSAL: {refusal}").format(refusal=plan.refusal))
    return "\n".join(lines)
