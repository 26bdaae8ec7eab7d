"""How MLX LM holds a workload: no context setting, kv_bits for the cache type, the GPU's working set."""

from __future__ import annotations

from typing import Any

from calculators.engines.mlx_lm.plan import MlxLmPlan, plan_mlx_lm
from calculators.hardware.machine import Machine
from calculators.memory.plan import MemoryPlan
from calculators.units import GIB

KV_SETTINGS: dict[str, dict[str, Any] | None] = {"16-bit": {}, "8-bit": {"kv_bits": 8}, "4-bit": {"kv_bits": 4}}
WORKLOAD_KEYS = ("kv_bits", "decode_concurrency")


def workload_settings(context_tokens: int, sequences: int) -> dict[str, Any]:
    """MLX LM has no context setting; max_kv_size would drop old tokens, so it stays unset."""
    return {"decode_concurrency": max(sequences, 1)}


def not_applicable(machine: Machine) -> str | None:
    """MLX LM needs Apple silicon."""
    if not machine.unified_memory:
        return "MLX LM runs on Apple silicon (Metal, unified memory); this machine is not Apple silicon."
    return None


def why_not_held(plan: MlxLmPlan, workload, machine: Machine) -> str | None:
    """Weights and cache must fit the GPU's working set."""
    capacity = plan.device_capacity_bytes
    if capacity is not None and plan.used_bytes > capacity:
        return f"weights and cache need {plan.used_bytes / GIB:.2f} GiB of a {capacity / GIB:.2f} GiB working set"
    return None


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
