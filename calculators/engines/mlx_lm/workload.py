"""How MLX LM holds a workload: no context setting, kv_bits for the cache type, the GPU's working set."""

from __future__ import annotations

from typing import Any

from calculators.engines.mlx_lm.plan import ENGINE_ID, MlxLmPlan, plan_mlx_lm
from calculators.hardware.machine import Machine
from calculators.i18n import _
from calculators.memory.plan import MemoryPlan
from calculators.units import GIB, number
from knowledge.engines import engine_by_id
from knowledge.loader import load_knowledge

KV_SETTINGS: dict[str, dict[str, Any] | None] = {"16-bit": {}, "8-bit": {"kv_bits": 8}, "4-bit": {"kv_bits": 4}}
WORKLOAD_KEYS = ("kv_bits", "decode_concurrency")


def workload_settings(context_tokens: int, sequences: int) -> dict[str, Any]:
    """MLX LM has no context setting; max_kv_size would drop old tokens, so it stays unset."""
    return {"decode_concurrency": max(sequences, 1)}


def not_applicable(machine: Machine) -> str | None:
    """Why servewise does not plan MLX LM on this machine: it plans MLX LM's Metal path on Apple silicon only."""
    if machine.unified_memory:
        return None
    hardware = engine_by_id(load_knowledge().engines, ENGINE_ID).hardware
    backend = "cpu" if machine.device_kind == "cpu" else "cuda"
    item = next((i for i in hardware.items if i.id == backend), None)
    # the KB's note is in the catalog (babel.cfg: engines.hardware.items.note), so it reads in the reader's language
    note = f": {_(item.note)}" if item is not None and item.note else ""
    status = (item.status if item is not None else "unknown") + note
    return _("servewise plans MLX LM on Apple silicon only (Metal, unified memory: its memory plan and scheduler "
             "follow that path); MLX LM's {backend} build is {status} ({source}).").format(
               backend=backend.upper(), status=status, source=hardware.source)


def why_not_held(plan: MlxLmPlan, workload, machine: Machine) -> str | None:
    """Weights and cache must fit the GPU's working set."""
    capacity = plan.device_capacity_bytes
    if capacity is not None and plan.used_bytes > capacity:
        return _("weights and cache need {used_bytes}\u00a0GiB of a {capacity}\u00a0GiB working set").format(
                 used_bytes=number(plan.used_bytes / GIB, 2), capacity=number(capacity / GIB, 2))
    if plan.n_sequences < workload.sequences:  # a draft model: server.py is_batchable = draft_model is None
        return _("with --draft-model, mlx_lm.server runs one request at a time, not {sequences} at once").format(
            sequences=workload.sequences)
    return None


def without_speculation(settings):
    """--draft-model removed (None when the settings have none)."""
    if settings.draft_model is None:
        return None
    return settings.model_copy(update={"draft_model": None})


def run_plan(arch, settings, machine: Machine, weights_bytes: int | None, workload) -> MemoryPlan:
    """MLX LM's plan also needs the workload's lengths and the machine's working set."""
    return plan_mlx_lm(arch, settings, machine, weights_bytes, prompt_tokens=workload.context_tokens,
                n_sequences=workload.sequences, working_set_bytes=machine.device_memory_bytes)


def plan_for_work(arch, settings, machine: Machine | None, weights_bytes: int | None, *, prompt_tokens: int | None,
                  generated_tokens: int, sequences: int) -> MemoryPlan:
    """MLX LM's plan for `sequences` runs of `prompt_tokens` in and `generated_tokens` out
    (None: the trained context)."""
    return plan_mlx_lm(arch, settings, machine, weights_bytes, prompt_tokens=prompt_tokens,
                       generated_tokens=generated_tokens, n_sequences=sequences)
