"""How vLLM holds a workload: max_model_len / max_num_seqs / kv_cache_dtype, and its own concurrency answer."""

from __future__ import annotations

from math import floor
from typing import Any

from calculators.engines.vllm.plan import VllmPlan, plan_vllm
from calculators.engines.vllm.spec_decode import VllmDraft
from calculators.hardware.machine import Machine
from calculators.i18n import _
from calculators.units import number

KV_SETTINGS: dict[str, dict[str, Any] | None] = {
    "16-bit": {"kv_cache_dtype": "auto"}, "8-bit": {"kv_cache_dtype": "fp8"}, "4-bit": None,
}
WORKLOAD_KEYS = ("max_model_len", "max_num_seqs", "kv_cache_dtype")


def workload_settings(context_tokens: int, sequences: int) -> dict[str, Any]:
    """One request may use max_model_len tokens; max_num_seqs run at once."""
    return {"max_model_len": context_tokens, "max_num_seqs": sequences}


def not_applicable(machine: Machine) -> str | None:
    """vLLM plans GPUs with their own memory."""
    if machine.unified_memory:
        return _("vLLM has no Metal backend: on a Mac it runs on the CPU only, which servewise does not plan.")
    return None


def why_not_held(plan: VllmPlan, workload, machine: Machine) -> str | None:
    """max_num_seqs must run every sequence and the KV cache must hold that many max_model_len requests."""
    n = workload.sequences
    if plan.max_num_seqs < n:
        return _("max_num_seqs {max_num_seqs} runs fewer than {n} sequences at once").format(
                 max_num_seqs=plan.max_num_seqs, n=n)
    if plan.max_concurrency < n:
        return (_("the KV cache holds {max_concurrency} requests of {max_model_len}\u00a0tokens, fewer "
                  "than {n}").format(max_concurrency=number(plan.max_concurrency, 2),
                                     max_model_len=number(plan.max_model_len), n=n))
    return None


def sequences_guess(plan: VllmPlan, workload, machine: Machine) -> int:
    """vLLM's "Maximum concurrency" depends on the context only (max_num_seqs, which the search sets to the
    sequence count, changes no block), so it is the answer itself."""
    return floor(plan.max_concurrency)


def context_guess(plan: VllmPlan, workload, machine: Machine) -> int:
    """The KV tokens (or vLLM's own estimate of the longest max_model_len when it refuses) per sequence."""
    n = workload.sequences
    return plan.kv_tokens // n if plan.refusal is None else (plan.estimated_max_model_len or 1) // n


def devices_from_settings(settings) -> int:
    """GPUs one instance spans: TP x PP."""
    return int(settings.tensor_parallel_size or 1) * int(settings.pipeline_parallel_size or 1)


def plan_with_draft(arch, settings, machine: Machine, weights_bytes: int | None, workload, draft) -> VllmPlan:
    """vLLM's plan with the --speculative-config `model` checkpoint given (its KV layers join the pool, its weights
    the weights); without a --speculative-config the given draft is not loaded and the plan is the ordinary one."""
    if settings.speculative_config is None:
        return plan_vllm(arch, settings, machine, weights_bytes)
    return plan_vllm(arch, settings, machine, weights_bytes,
                     draft=VllmDraft(arch=draft.arch, weights_bytes=draft.weights_bytes))
