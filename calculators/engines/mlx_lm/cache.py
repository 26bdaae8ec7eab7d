"""MLX LM's cache classes, as mlx_lm/models/cache.py sizes them (ml-explore/mlx-lm v0.32.2, read 2026-12-01).

- `KVCache` (and `QuantizedKVCache`, `BatchKVCache`): `step = 256`; when a chunk of n tokens does not fit, the
  buffer is first cut to the used length if that is not a whole number of steps, then grows by
  ceil(n / 256) x 256 token slots.
- `RotatingKVCache(max_size, keep)`: a multi-token chunk is concatenated after cutting the buffer to
  max_size - 1 valid tokens (so it briefly holds up to max_size - 1 + chunk tokens); a single token grows the
  buffer by min(256, max_size - offset) slots until it reaches max_size, then overwrites in place after the
  first `keep` tokens. `to_quantized` raises NotImplementedError ("RotatingKVCache Quantization NYI").
- `QuantizedKVCache` (from `KVCache.to_quantized`, which quantizes the whole allocated buffer with
  mx.quantize): per vector of `dim` values, dim x bits / 32 uint32 words plus dim / group_size scales and as
  many biases in the activation dtype.
- `ArraysCache(size)`: a list of fixed-size arrays (a recurrent layer's conv and state); no `to_quantized`.
- `CacheList(...)`: several caches for one layer (Falcon-H1: an ArraysCache and a KVCache); no `to_quantized`.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from calculators.errors import ServewiseInputError
from calculators.i18n import _

STEP_TOKENS = 256  # KVCache.step / RotatingKVCache.step / QuantizedKVCache.step
ROTATING_KEEP_TOKENS = 4  # make_prompt_cache: RotatingKVCache(max_size=max_kv_size, keep=4)
QUANTIZE_BITS = (2, 3, 4, 5, 6, 8)  # bit widths mx.quantize accepts in affine mode


class CacheClass(StrEnum):
    """The cache class a layer ends up with, named as mlx_lm/models/cache.py names it."""

    KV = "KVCache"
    ROTATING = "RotatingKVCache"
    QUANTIZED = "QuantizedKVCache"
    ARRAYS = "ArraysCache"
    CACHE_LIST = "CacheList"


@dataclass(frozen=True)
class CacheGrowth:
    """Token slots of one layer's buffer: after the last chunk, and the most it held after any update."""

    final_tokens: int
    peak_tokens: int


def kv_cache_growth(chunks: list[int], step: int = STEP_TOKENS) -> CacheGrowth:
    """Slots a KVCache (or QuantizedKVCache) has after being fed `chunks` tokens at a time (grows by whole steps)."""
    capacity = offset = 0
    for n in chunks:
        if capacity == 0 or offset + n > capacity:
            if capacity and offset % step:
                capacity = offset
            capacity += (step + n - 1) // step * step
        offset += n
    return CacheGrowth(capacity, capacity)


def rotating_cache_growth(chunks: list[int], max_size: int, keep: int, step: int = STEP_TOKENS) -> CacheGrowth:
    """Slots a RotatingKVCache holds after the chunks, and the most it held after any update."""
    length = offset = idx = peak = 0
    for n in chunks:
        if n > 1:  # _update_concat: temporal order, cut to max_size - 1, append the chunk
            if length:
                valid = length if idx == length or idx < offset else idx
                length = min(valid, max_size - 1) + n
            else:
                length = n
            offset += n
            idx = length
        else:  # _update_in_place
            if length == 0 or (offset >= length and length < max_size):
                length += min(step, max_size - offset)
                idx = offset
            if length > max_size:
                length = idx = max_size
            if idx == max_size:
                idx = keep
            offset += 1
            idx += 1
        peak = max(peak, length)
    return CacheGrowth(length, peak)


def quantized_bytes_per_vector(dim: int, bits: int, group_size: int, scale_bytes: int) -> int:
    """Bytes mx.quantize stores for one vector of `dim` values: dim x bits / 32 uint32 words, scales and biases."""
    if dim % group_size:
        raise ServewiseInputError(_("--kv-group-size {group_size} does not divide a cached vector of {dim} "
                                    "values").format(group_size=group_size, dim=dim))
    if dim * bits % 32:
        raise ServewiseInputError(_("{bits}-bit quantization of {dim} values does not fill whole 32-bit "
                                    "words").format(bits=bits, dim=dim))
    return dim * bits // 32 * 4 + 2 * (dim // group_size) * scale_bytes
