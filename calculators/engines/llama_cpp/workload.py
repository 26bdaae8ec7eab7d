"""How llama-server holds a workload: -c over -np slots, the KV cache types, and whether a plan holds it.

`-c` is split over the `-np` slots (each slot gets ctx-size / parallel), so a workload of N sequences of C
tokens is `-c N*C -np N`. Capacity searches plan without --fit (see `capacity_search`).
"""

from __future__ import annotations

from typing import Any

from calculators.engines.base import CapacitySearch
from calculators.engines.llama_cpp.plan import (
    FIT_MARGIN_BYTES,
    LlamaCppDraft,
    LlamaCppPlan,
    LlamaCppSettings,
    draft_from_path,
    plan_llamacpp,
)
from calculators.hardware.machine import Machine
from calculators.i18n import _
from calculators.model.architecture import ModelArchitecture
from calculators.units import GIB, number

KV_SETTINGS: dict[str, dict[str, Any] | None] = {
    "16-bit": {"cache_type_k": "f16", "cache_type_v": "f16"},
    "8-bit": {"cache_type_k": "q8_0", "cache_type_v": "q8_0"},
    "4-bit": {"cache_type_k": "q4_0", "cache_type_v": "q4_0"},
}
WORKLOAD_KEYS = ("ctx_size", "parallel", "cache_type_k", "cache_type_v")


def workload_settings(context_tokens: int, sequences: int) -> dict[str, Any]:
    """llama-server splits -c over its -np slots: each slot gets ctx-size / parallel."""
    return {"ctx_size": context_tokens * sequences, "parallel": sequences}


def not_applicable(machine: Machine) -> str | None:
    """llama.cpp runs on every machine servewise plans."""
    return None


def slots_hold(plan: LlamaCppPlan, sequences: int, context_tokens: int, machine: Machine) -> str | None:
    """Why the slots cannot hold `sequences` x `context_tokens` (None when they can)."""
    n, ctx = sequences, context_tokens
    if plan.n_seq < n or plan.n_ctx_slot < ctx:
        return _("{n_seq} slots of {n_ctx_slot}\u00a0tokens each cannot hold {n} × {ctx}").format(
                 n_seq=plan.n_seq, n_ctx_slot=number(plan.n_ctx_slot), n=n, ctx=number(ctx))
    return None


def devices_hold(plan: LlamaCppPlan, machine: Machine) -> str | None:
    """Why a device (GPU or host RAM) cannot hold what the plan puts on it (None when every device can)."""
    for device in plan.devices:
        used = device.kv_cache_bytes + (device.weights_bytes or 0)
        if device.device == "host" and (device.repeating_layers or device.kv_cache_bytes):
            if machine.unified_memory:
                return _("{repeating_layers} layers sit on the CPU side of the same unified memory").format(
                         repeating_layers=device.repeating_layers)
            if machine.host_ram_bytes is None:
                return _("{repeating_layers} layers stay in host RAM; give the host RAM to count them").format(
                         repeating_layers=device.repeating_layers)
            if used > machine.host_ram_bytes:
                return _("host RAM is short: {used}\u00a0GiB needed").format(used=number(used / GIB, 2))
        elif device.device != "host" and used > machine.device_memory_bytes:
            return _("{device} needs {used}\u00a0GiB of {device_memory_bytes}\u00a0GiB").format(
                     device=device.device, used=number(used / GIB, 2),
                     device_memory_bytes=number(machine.device_memory_bytes / GIB, 2))
    return None


def why_not_held(plan: LlamaCppPlan, workload, machine: Machine) -> str | None:
    """Every sequence needs a slot of its context, and every device must hold its layers and cache."""
    return (slots_hold(plan, workload.sequences, workload.context_tokens, machine)
            or devices_hold(plan, machine))


def capacity_search(kept: dict[str, Any], arch: ModelArchitecture, machine: Machine) -> CapacitySearch:
    """Without host RAM to count, a layer --fit moves off the GPU means the workload is not held, so the
    search plans without --fit (several times faster) and asks for what --fit keeps free instead: with
    -ngl auto, --fit leaves every layer on the GPUs only while each keeps its margin."""
    if not (machine.unified_memory or machine.host_ram_bytes is None):
        return CapacitySearch(kept)
    fields = LlamaCppSettings.model_fields
    margin = 0
    fit_on = kept.get("fit", fields["fit"].default)
    if fit_on and kept.get("n_gpu_layers", fields["n_gpu_layers"].default) == -1:
        margin = FIT_MARGIN_BYTES
    return CapacitySearch({**kept, "fit": False}, margin)


def plan_with_draft(arch, settings, machine: Machine, weights_bytes: int | None, workload, draft) -> LlamaCppPlan:
    """llama-server's plan with the -md draft model given as a model (catalog or config.json), used when the -md
    GGUF itself cannot be read here: its own context (the target's n_ctx, -ctkd/-ctvd, -ngld) and weights join the
    plan. Without -md the given draft is not loaded and the plan is the ordinary one."""
    readable = settings.spec_draft_model is not None and draft_from_path(settings.spec_draft_model)
    given = None if readable else LlamaCppDraft(arch=draft.arch, weights_bytes=draft.weights_bytes,
                                                source=f"{draft.name} (weights estimated at the target's precision)")
    return plan_llamacpp(arch, settings, machine, weights_bytes, draft=given)
