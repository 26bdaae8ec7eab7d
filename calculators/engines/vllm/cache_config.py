"""vLLM's cache settings as vllm/config/cache.py defines them: the default block size, KV cache dtypes and
their element sizes (the block size each platform picks is in platforms.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from calculators.errors import ServewiseInputError
from calculators.i18n import _

if TYPE_CHECKING:  # arg_utils imports the platforms, which read the default block size from here
    from calculators.engines.vllm.arg_utils import VllmSettings

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


def resolve_kv_dtype_bytes(settings: VllmSettings) -> tuple[str, int]:
    """The cache dtype name vLLM uses and its bytes per element (auto = the model's dtype)."""
    if settings.dtype not in MODEL_DTYPE_BYTES:
        raise ServewiseInputError(_("unknown vLLM --dtype '{dtype}'; use one of {model_dtype_bytes}").format(
                                    dtype=settings.dtype, model_dtype_bytes=sorted(MODEL_DTYPE_BYTES)))
    if settings.kv_cache_dtype == "auto":
        model_bytes = MODEL_DTYPE_BYTES[settings.dtype]
        return ("float32" if model_bytes == 4 else _("bfloat16/float16 (model dtype)")), model_bytes
    if settings.kv_cache_dtype == "fp8_ds_mla":
        return "fp8_ds_mla", 1
    if settings.kv_cache_dtype not in KV_DTYPE_BYTES:
        known = sorted([*KV_DTYPE_BYTES, "auto", "fp8_ds_mla"])
        raise ServewiseInputError(
            _("unknown or unmodelled vLLM --kv-cache-dtype '{kv_cache_dtype}'; use one of {known}").format(
              kv_cache_dtype=settings.kv_cache_dtype, known=known)
        )
    return settings.kv_cache_dtype, KV_DTYPE_BYTES[settings.kv_cache_dtype]
