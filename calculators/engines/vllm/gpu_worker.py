"""What vLLM's worker profiles before sizing the KV cache (vllm/v1/worker/gpu_worker.py): the activation peak
and non-torch memory servewise can only estimate."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

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
