"""How mlx_lm/generate.py feeds the cache (ml-explore/mlx-lm v0.32.2, read 2026-12-01).

`generate_step` processes all prompt tokens but the last in chunks of `prefill_step_size` (2048), then feeds
one token per step: the last prompt token, then every generated token (the one after the last yielded token
is computed ahead, so a run of M generated tokens leaves prompt + M tokens in the cache).
`maybe_quantize_kv_cache` runs after every chunk and step and converts each layer cache that has
`to_quantized` once its offset reaches `quantized_kv_start` (DEFAULT_QUANTIZED_KV_START 5000).
"""

from __future__ import annotations

DEFAULT_PREFILL_STEP_SIZE = 2048
DEFAULT_QUANTIZED_KV_START = 5000
DEFAULT_KV_GROUP_SIZE = 64


def generation_chunks(prompt_tokens: int, generated_tokens: int, prefill_step_size: int) -> list[int]:
    """Token counts mlx_lm.generate feeds the cache, in order: prompt chunks, then one token per step."""
    chunks = []
    remaining = prompt_tokens
    while remaining > 1:
        n = min(prefill_step_size, remaining - 1)
        chunks.append(n)
        remaining -= n
    chunks.extend([1] * (remaining + generated_tokens))
    return chunks


def quantization_reached(chunks: list[int], quantized_kv_start: int) -> bool:
    """True when some update leaves the cache offset at or past `quantized_kv_start` (the cache is then quantized)."""
    return bool(chunks) and sum(chunks) >= quantized_kv_start
