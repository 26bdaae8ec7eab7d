"""The one JSON document of a memory plan: the memory page's JSON export and `memory --json` both write it.

    {"servewise": ..., "model", "model_source", "machine", "gpu", "n_gpus", "workload", "model_weights_bytes",
     "weights_basis", "engines": [{"engine", "not_applicable", "error", "holds_workload", "settings", "plan",
     "max_context_tokens_for_sequences", "max_sequences_at_context", "launch_command", "unknown_flags",
     "ignored_settings", "notes"}]}

Bytes and tokens are integers; a field nobody could fill is null. `memory --json` plans one engine and, as it
always has, also puts that engine's plan fields and inputs at the top level (`cli_memory_document`).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from calculators.memory.plan import MemoryPlan

TITLE = "memory & capacity plan (estimates, not measurements)"


def engine_entry(
    engine: str,
    *,
    settings: BaseModel | None,
    plan: MemoryPlan | None,
    not_applicable: str | None = None,
    error: str | None = None,
    holds_workload: bool | None = None,
    max_context_tokens: int | None = None,
    max_sequences: int | None = None,
    launch_command: str | None = None,
    unknown_flags: list[str] | None = None,
    ignored_settings: list[str] | None = None,
    notes: list[dict[str, str]] | None = None,
) -> dict[str, Any]:
    """One engine's entry of the document."""
    return {
        "engine": engine,
        "not_applicable": not_applicable,
        "error": error,
        "holds_workload": holds_workload,
        "settings": settings.model_dump(mode="json") if settings is not None else None,
        "plan": plan.model_dump(mode="json") if plan is not None else None,
        "max_context_tokens_for_sequences": max_context_tokens,
        "max_sequences_at_context": max_sequences,
        "launch_command": launch_command,
        "unknown_flags": list(unknown_flags or []),
        "ignored_settings": list(ignored_settings or []),
        "notes": notes if notes is not None else ([n.model_dump() for n in plan.notes] if plan is not None else []),
    }


def memory_document(
    *,
    model: str,
    engines: list[dict[str, Any]],
    model_source: str | None = None,
    machine: str | None = None,
    gpu: str | None = None,
    n_gpus: int | None = None,
    workload: dict[str, Any] | None = None,
    model_weights_bytes: int | None = None,
    weights_basis: str | None = None,
) -> dict[str, Any]:
    """The document: the inputs once (`model_weights_bytes`: the whole model; each plan's `weights_bytes` is per
    device), then one entry per engine (`engine_entry`)."""
    return {
        "servewise": TITLE,
        "model": model,
        "model_source": model_source,
        "machine": machine,
        "gpu": gpu,
        "n_gpus": n_gpus,
        "workload": workload,
        "model_weights_bytes": model_weights_bytes,
        "weights_basis": weights_basis,
        "engines": engines,
    }


def cli_memory_document(result) -> dict[str, Any]:
    """`memory --json`: the document for the one engine a launch command starts, with that engine's plan fields
    and inputs also at the top level (the fields the verb has always printed)."""
    machine = result.machine
    notes = [note.model_dump() for note in result.plan.notes] + [{"code": "cli", "message": n} for n in result.notes]
    settings = result.launch.settings if isinstance(result.launch.settings, BaseModel) else None
    entry = engine_entry(
        result.launch.engine, settings=settings, plan=result.plan, unknown_flags=result.launch.unknown_flags,
        ignored_settings=result.launch.ignored_keys, notes=notes,
    )
    document = memory_document(
        model=result.model.arch.name, engines=[entry], model_source=result.model.source,
        machine=f"{machine.n_devices} x {machine.gpu_id}" if machine and machine.gpu_id else None,
        gpu=machine.gpu_id if machine else None, n_gpus=machine.n_devices if machine else None,
        model_weights_bytes=result.model_weights_bytes, weights_basis=result.weights_basis,
    )
    top_level = {
        **entry["plan"],
        "settings": entry["settings"] or {},
        "unknown_flags": entry["unknown_flags"],
        "ignored_settings": entry["ignored_settings"],
        "notes": notes,
    }
    return {**top_level, **document}
