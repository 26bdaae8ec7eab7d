"""vLLM's cache settings as vllm/config/cache.py defines them: block size, KV cache dtypes and their
element sizes, and the block size MLA backends force (vllm/platforms/cuda.py)."""

from __future__ import annotations

from calculators.engines.vllm.arg_utils import VllmSettings
from calculators.errors import ServewiseInputError
from calculators.hardware.machine import Machine
from calculators.model.architecture import LayerKind, ModelArchitecture

# vllm/config/cache.py: CacheConfig.DEFAULT_BLOCK_SIZE
DEFAULT_BLOCK_SIZE_TOKENS = 16

# Element size of each --kv-cache-dtype vLLM accepts and servewise models (vllm/config/cache.py CacheDType;
# fp8 variants store one byte per element, vllm/v1/kv_cache_interface.py uses the dtype's element size).
KV_DTYPE_BYTES: dict[str, int] = {
    "bfloat16": 2,
    "float16": 2,
    "fp8": 1,
    "fp8_e4m3": 1,
    "fp8_e5m2": 1,
    "fp8_inc": 1,
    "int8_per_token_head": 1,
    "fp8_per_token_head": 1,
}
# --dtype values (model dtype); "auto" runs 16-bit (vLLM casts float32 checkpoints down by default).
MODEL_DTYPE_BYTES: dict[str, int] = {
    "auto": 2,
    "half": 2,
    "float16": 2,
    "bfloat16": 2,
    "float": 4,
    "float32": 4,
}


def default_block_size(arch: ModelArchitecture, machine: Machine) -> int:
    """Tokens per block when --block-size is unset: 16, but MLA backends force their own on CUDA.

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


def resolve_kv_dtype_bytes(settings: VllmSettings) -> tuple[str, int]:
    """The cache dtype name vLLM uses and its bytes per element (auto = the model's dtype)."""
    if settings.dtype not in MODEL_DTYPE_BYTES:
        raise ServewiseInputError(f"unknown vLLM --dtype '{settings.dtype}'; use one of {sorted(MODEL_DTYPE_BYTES)}")
    if settings.kv_cache_dtype == "auto":
        model_bytes = MODEL_DTYPE_BYTES[settings.dtype]
        return ("float32" if model_bytes == 4 else "bfloat16/float16 (model dtype)"), model_bytes
    if settings.kv_cache_dtype == "fp8_ds_mla":
        return "fp8_ds_mla", 1
    if settings.kv_cache_dtype not in KV_DTYPE_BYTES:
        known = sorted([*KV_DTYPE_BYTES, "auto", "fp8_ds_mla"])
        raise ServewiseInputError(f"unknown or unmodelled vLLM --kv-cache-dtype '{settings.kv_cache_dtype}'; use one of {known}")
    return settings.kv_cache_dtype, KV_DTYPE_BYTES[settings.kv_cache_dtype]
