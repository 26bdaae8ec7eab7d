"""How SGLang holds a workload: context_length / max_running_requests / kv_cache_dtype, and its token pool."""

from __future__ import annotations

from typing import Any

from calculators.engines.sglang.plan import SglangPlan, plan_sglang
from calculators.hardware.machine import Machine
from calculators.i18n import _
from calculators.units import number

KV_SETTINGS: dict[str, dict[str, Any] | None] = {
    "16-bit": {"kv_cache_dtype": "auto"}, "8-bit": {"kv_cache_dtype": "fp8_e4m3"}, "4-bit": None,
}
WORKLOAD_KEYS = ("context_length", "max_running_requests", "kv_cache_dtype")


def workload_settings(context_tokens: int, sequences: int) -> dict[str, Any]:
    """context_length per request, max_running_requests at once."""
    return {"context_length": context_tokens, "max_running_requests": sequences}


def not_applicable(machine: Machine) -> str | None:
    """SGLang plans NVIDIA/AMD GPUs."""
    if machine.unified_memory:
        return _("SGLang serves on NVIDIA/AMD GPUs (and a few accelerators); it has no Apple silicon path planned "
                 "here.")
    return None


def why_not_held(plan: SglangPlan, workload, machine: Machine) -> str | None:
    """The token pool must hold every sequence's context, and max_running_requests must admit them."""
    n, ctx = workload.sequences, workload.context_tokens
    if plan.max_total_num_tokens < n * ctx:
        return _("the pool holds {max_total_num_tokens}\u00a0tokens, fewer than {n} × {ctx}").format(
                 max_total_num_tokens=number(plan.max_total_num_tokens), n=n, ctx=number(ctx))
    if plan.max_running_requests < n:
        return _("max_running_requests is {max_running_requests}").format(
                 max_running_requests=plan.max_running_requests)
    return None


def sequences_guess(plan: SglangPlan, workload, machine: Machine) -> int:
    """SGLang's own pool divided by the context."""
    return plan.max_total_num_tokens // workload.context_tokens


def context_guess(plan: SglangPlan, workload, machine: Machine) -> int:
    """SGLang's own pool divided by the sequences."""
    return plan.max_total_num_tokens // workload.sequences


def devices_from_settings(settings) -> int:
    """GPUs one instance spans: TP x PP."""
    return int(getattr(settings, "tp_size", 1) or 1) * int(getattr(settings, "pp_size", 1) or 1)


def plan_with_draft(arch, settings, machine: Machine, weights_bytes: int | None, workload, draft) -> SglangPlan:
    """SGLang's plan with the --speculative-draft-model-path checkpoint given (its KV layers share each token's
    cell, its weights come off the budget); without --speculative-algorithm the draft is not loaded."""
    if settings.speculative_algorithm is None:
        return plan_sglang(arch, settings, machine, weights_bytes)
    return plan_sglang(arch, settings, machine, weights_bytes, draft=draft.arch,
                       draft_weights_bytes=draft.weights_bytes)
