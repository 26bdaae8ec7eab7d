"""What vLLM's worker profiles before sizing the KV cache (vllm/v1/worker/gpu_worker.py): the activation peak
and non-torch memory servewise can only estimate."""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict, Field

from calculators.engines.vllm.arg_utils import VllmSettings
from calculators.errors import ServewiseInputError
from calculators.hardware.machine import Machine
from calculators.i18n import _
from calculators.memory.plan import ComponentKind, MemoryComponent, PlanNote
from calculators.model.architecture import ModelArchitecture
from calculators.units import GIB


class VllmOverheads(BaseModel):
    """Per-GPU memory vLLM measures in its profile run; servewise can only estimate these (bytes)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    activation_peak_bytes: int = Field(ge=0)
    non_torch_bytes: int = Field(ge=0)
    # Newer vLLM also subtracts its CUDA-graph estimate when VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS is on
    # (gpu_worker.py: requested - non_kv_cache_memory - cudagraph_memory_estimate_applied); 0 = not counted,
    # as in the version read above. llm-d measured graphs at -0.88 to +1.03 GiB on H100 (vLLM 0.11).
    cudagraph_bytes: int = 0
    basis: str


# Measured by llm-d (vLLM 0.11, H100 79.18 GiB, max_num_batched_tokens 8192, block 128):
# llm-d/llm-d-benchmark:config_explorer/empirical-vllm-memory-results.md @ 4f4d44943c39.
# Dense text models peaked at 4.76-5.64 GiB, the MoE gpt-oss at 7.38 GiB, a vision model at 2.12 GiB;
# non-torch memory was 0.13-0.14 GiB at TP1 and 0.54-0.55 GiB at TP2. servewise takes the largest
# figure of each class, so the KV budget errs small rather than promising memory vLLM will not find.
_LLMD_SOURCE = "llm-d/llm-d-benchmark:config_explorer/empirical-vllm-memory-results.md@4f4d44943c39"
_ACTIVATION_DENSE_BYTES = int(5.64 * GIB)
_ACTIVATION_MOE_BYTES = int(7.38 * GIB)
_NON_TORCH_TP1_BYTES = int(0.14 * GIB)
_NON_TORCH_TP_MULTI_BYTES = int(0.55 * GIB)


def default_vllm_overheads(arch: ModelArchitecture, tensor_parallel_size: int) -> VllmOverheads:
    """Estimated activation peak and non-torch bytes per GPU from public vLLM measurements (see source)."""
    activation = _ACTIVATION_MOE_BYTES if arch.moe is not None else _ACTIVATION_DENSE_BYTES
    non_torch = _NON_TORCH_TP1_BYTES if tensor_parallel_size == 1 else _NON_TORCH_TP_MULTI_BYTES
    kind = "MoE" if arch.moe is not None else "dense"
    return VllmOverheads(
        activation_peak_bytes=activation,
        non_torch_bytes=non_torch,
        basis=f"largest {kind} figure measured by llm-d on H100 with vLLM 0.11 ({_LLMD_SOURCE}); "
        "the real peak grows with max_num_batched_tokens",
    )


@dataclass(frozen=True)
class KvCacheBudget:
    """What a worker has for the KV cache (bytes per GPU) and the components it subtracted to get there."""

    available_bytes: int
    requested_bytes: int | None  # total x gpu_memory_utilization; None when kv_cache_memory_bytes replaces it
    weights_per_rank: int | None
    components: tuple[MemoryComponent, ...]
    notes: tuple[PlanNote, ...]


def determine_available_memory(
    arch: ModelArchitecture, settings: VllmSettings, machine: Machine, weights_bytes: int | None,
    overheads: VllmOverheads | None = None, extra_weights_per_rank: int = 0,
) -> KvCacheBudget:
    """The KV budget per GPU as vLLM's worker computes it: requested memory (total x gpu_memory_utilization) minus
    weights (split over TP x PP ranks, less --cpu-offload-gb), the profiled activation peak and non-torch
    memory (estimates unless given); kv_cache_memory_bytes replaces the budget exactly. `extra_weights_per_rank`
    is a speculative drafter's weights on each rank (spec_decode.draft_weights_per_rank)."""
    tp, pp = settings.tensor_parallel_size, settings.pipeline_parallel_size
    notes: list[PlanNote] = []
    if weights_bytes is not None and weights_bytes < 0:
        raise ServewiseInputError(_("weights_bytes must be zero or positive"))
    # --cpu-offload-gb keeps that many GiB of each GPU's weights in host memory (vllm/config/cache.py)
    weights_per_rank = None if weights_bytes is None else max(
        0, weights_bytes // (tp * pp) - int(settings.cpu_offload_gb * GIB)) + extra_weights_per_rank
    if settings.cpu_offload_gb:
        notes.append(PlanNote(code="vllm_cpu_offload", message=_("{cpu_offload_gb}\u00a0GiB of weights per GPU "
            "stay in host memory and cross PCIe on every forward pass.").format(
            cpu_offload_gb=settings.cpu_offload_gb)))
    components: list[MemoryComponent] = []
    total = machine.device_memory_bytes
    requested: int | None = None
    if settings.kv_cache_memory_bytes is not None:
        available = settings.kv_cache_memory_bytes
        notes.append(PlanNote(
            code="vllm_kv_cache_memory_bytes",
            message=_("kv_cache_memory_bytes replaces the profiled budget; vLLM then ignores gpu_memory_utilization "
            "for the KV cache (it still checks that the requested fraction is free at start-up)."),
        ))
        if weights_per_rank is not None:
            components.append(weights_component(weights_per_rank, tp * pp))
    else:
        requested = int(total * settings.gpu_memory_utilization)
        est = overheads or default_vllm_overheads(arch, tp)
        if weights_per_rank is None:
            raise ServewiseInputError(
                _("the model's weight bytes are unknown: vLLM's KV budget subtracts them "
                  "(or give kv_cache_memory_bytes)")
            )
        available = int(total * settings.gpu_memory_utilization
                        - (weights_per_rank + est.activation_peak_bytes + est.non_torch_bytes)
                        - est.cudagraph_bytes)
        components += [
            weights_component(weights_per_rank, tp * pp),
            MemoryComponent(kind=ComponentKind.ACTIVATIONS, label=_("profiled activation peak (estimate)"),
                            bytes=est.activation_peak_bytes, exact=False, basis=est.basis),
            MemoryComponent(kind=ComponentKind.RUNTIME, label=_("non-torch memory: CUDA context, NCCL (estimate)"),
                            bytes=est.non_torch_bytes, exact=False, basis=est.basis),
        ]
        if est.cudagraph_bytes:
            components.append(MemoryComponent(kind=ComponentKind.RUNTIME, label=_("CUDA graphs (estimate)"),
                                              bytes=est.cudagraph_bytes, exact=False, basis=est.basis))
    return KvCacheBudget(available, requested, weights_per_rank, tuple(components), tuple(notes))


def weights_component(weights_per_rank: int, ranks: int, label: str | None = None) -> MemoryComponent:
    """The weights slice of one rank's memory (exact for one rank; split evenly otherwise)."""
    split = _("model weights / {ranks} ranks (replicated pieces not counted)").format(ranks=ranks)
    return MemoryComponent(
        kind=ComponentKind.WEIGHTS, label=label or _("weights on this GPU"), bytes=weights_per_rank,
        exact=ranks == 1, basis=_("as given") if ranks == 1 else split,
    )
