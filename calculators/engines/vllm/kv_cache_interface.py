"""One KV spec per layer as vllm/v1/kv_cache_interface.py defines them: full attention, sliding window, MLA
and Mamba (recurrent state) pages, each answering its own page size and a request's maximum memory."""

from __future__ import annotations

from dataclasses import dataclass, field
from math import ceil
from typing import Literal

from calculators.model.architecture import LayerGeometry, LayerKind

# fp8_ds_mla stores 656 bytes per token per layer (vllm/v1/kv_cache_interface.py MLAAttentionSpec).
FP8_DS_MLA_BYTES_PER_TOKEN = 656


@dataclass(frozen=True)
class KVCacheSpec:
    """A layer's KV spec; equality follows vLLM's (same kind, shape, dtype, window, block size)."""

    kind: Literal["full", "sliding", "mla", "mamba"]
    block_size: int
    kv_heads: int
    head_size_k: int
    head_size_v: int
    dtype_bytes: int
    sliding_window: int | None = None
    fixed_bytes_per_token: int | None = None  # fp8_ds_mla
    mamba_page_bytes: int = 0  # mamba: the state page, padded to the shared page (MambaSpec.page_size_padded)
    mamba_blocks: int = 0  # mamba: pages one request holds (MambaSpec.max_memory_usage_bytes / page)
    is_draft: bool = field(default=False, compare=False)  # KVCacheSpec.is_draft: never affects grouping

    @property
    def page_bytes(self) -> int:
        """Bytes of one block of this layer (attention: real page; Mamba: the state padded to the shared page)."""
        if self.kind == "mamba":
            return self.mamba_page_bytes
        if self.fixed_bytes_per_token is not None:
            return self.block_size * self.fixed_bytes_per_token
        if self.kind == "mla":
            return self.block_size * self.kv_heads * self.head_size_k * self.dtype_bytes
        return self.block_size * self.kv_heads * (self.head_size_k + self.head_size_v) * self.dtype_bytes

    def max_memory_usage_bytes(self, max_model_len: int, in_flight_tokens: int) -> int:
        """Bytes one request of max_model_len tokens can occupy in this layer (vLLM's max_memory_usage_bytes)."""
        if self.kind == "mamba":
            return self.mamba_blocks * self.page_bytes
        if self.kind == "sliding":
            assert self.sliding_window is not None
            tokens = min(self.sliding_window - 1 + in_flight_tokens, max_model_len)
            return (ceil(tokens / self.block_size) + 1) * self.page_bytes
        return ceil(max_model_len / self.block_size) * self.page_bytes


def layer_spec(
    layer: LayerGeometry, tp: int, block_size: int, dtype_bytes: int, kv_cache_dtype: str, hybrid_manager: bool
) -> KVCacheSpec | None:
    """The spec vLLM gives one layer on one tensor-parallel rank (None: no KV; Mamba specs come from mamba.py)."""
    if layer.kind in (LayerKind.RECURRENT, LayerKind.NONE):
        return None
    if layer.kind is LayerKind.MLA:
        fixed = FP8_DS_MLA_BYTES_PER_TOKEN if kv_cache_dtype == "fp8_ds_mla" else None
        latent = layer.kv_lora_rank + layer.qk_rope_head_dim  # not split across ranks
        return KVCacheSpec("mla", block_size, 1, latent, 0, dtype_bytes, fixed_bytes_per_token=fixed)
    kv_heads = max(1, layer.n_kv_heads // tp)  # replicated when tp exceeds the KV heads
    if layer.kind is LayerKind.SLIDING and layer.sliding_window_tokens and hybrid_manager:
        return KVCacheSpec("sliding", block_size, kv_heads, layer.head_dim_k, layer.head_dim_v, dtype_bytes,
                     sliding_window=layer.sliding_window_tokens)
    return KVCacheSpec("full", block_size, kv_heads, layer.head_dim_k, layer.head_dim_v, dtype_bytes)
