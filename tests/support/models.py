"""The test models: small architecture builders (geometry typed in, not parsed) and a few real models' geometry
typed from their published config.json. GGUF files of tiny random models are written by tests/support/tiny_gguf.py."""

from __future__ import annotations

import dataclasses

from calculators.memory.kv import uniform_gqa_architecture
from calculators.model.architecture import LayerGeometry, LayerKind, ModelArchitecture, MoEGeometry


def gqa(n_layers: int, kv_heads: int, head_dim: int, heads: int, ctx: int, name: str = "gqa",
        moe: MoEGeometry | None = None) -> ModelArchitecture:
    """Every layer full attention with the same KV heads and head size."""
    layer = LayerGeometry(kind=LayerKind.FULL, n_kv_heads=kv_heads, head_dim_k=head_dim, head_dim_v=head_dim)
    return ModelArchitecture(name=name, family="llama", layers=(layer,) * n_layers, n_heads=heads,
                             hidden_size=heads * head_dim, vocab_size=0, max_context_tokens=ctx, moe=moe)


def interleaved(kinds: str, kv_heads: int, head_dim: int, heads: int, window: int, ctx: int,
                name: str = "hybrid") -> ModelArchitecture:
    """Layers from a pattern string: 'F' full attention, 'S' sliding window (same heads and size)."""
    full = LayerGeometry(kind=LayerKind.FULL, n_kv_heads=kv_heads, head_dim_k=head_dim, head_dim_v=head_dim)
    slide = LayerGeometry(kind=LayerKind.SLIDING, n_kv_heads=kv_heads, head_dim_k=head_dim, head_dim_v=head_dim,
                          sliding_window_tokens=window)
    layers = tuple(full if k == "F" else slide for k in kinds)
    return ModelArchitecture(name=name, family="gemma3", layers=layers, n_heads=heads, hidden_size=heads * head_dim,
                             vocab_size=0, max_context_tokens=ctx)


def mla(n_layers: int, kv_lora_rank: int, rope_dim: int, heads: int, ctx: int) -> ModelArchitecture:
    """DeepSeek-style multi-head latent attention on every layer."""
    layer = LayerGeometry(kind=LayerKind.MLA, kv_lora_rank=kv_lora_rank, qk_rope_head_dim=rope_dim)
    return ModelArchitecture(name="mla", family="deepseek_v3", layers=(layer,) * n_layers, n_heads=heads,
                             hidden_size=7168, vocab_size=0, max_context_tokens=ctx)


# Llama-3-8B: 32 layers, 8 KV heads x 128, trained context 8192
LLAMA3_8B = dataclasses.replace(uniform_gqa_architecture(32, 8, 128, "llama3-8b"), max_context_tokens=8192)

# Llama-3.1-8B: 32 layers, 32 query heads, 8 KV heads x 128, hidden 4096, trained context 131072
LLAMA31_8B = dataclasses.replace(
    uniform_gqa_architecture(32, 8, 128, "llama3.1-8b"),
    family="llama",
    n_heads=32,
    hidden_size=4096,
    max_context_tokens=131072,
)

_GEMMA3_FULL = LayerGeometry(kind=LayerKind.FULL, n_kv_heads=16, head_dim_k=128, head_dim_v=128)
_GEMMA3_SLIDING = dataclasses.replace(_GEMMA3_FULL, kind=LayerKind.SLIDING, sliding_window_tokens=1024)
# Gemma-3-27B: 62 layers, 16 KV heads x 128, layer il slides over 1024 tokens unless il % 6 == 5
GEMMA3_27B = ModelArchitecture(
    "gemma3-27b",
    "gemma3",
    tuple(_GEMMA3_FULL if il % 6 == 5 else _GEMMA3_SLIDING for il in range(62)),
    32,
    5376,
    262208,
    131072,
)

# DeepSeek-V2-Lite: 27 MLA layers caching a 512-wide latent plus a 64-wide rope key
DEEPSEEK_V2_LITE = ModelArchitecture(
    "deepseek-v2-lite",
    "deepseek2",
    (LayerGeometry(kind=LayerKind.MLA, kv_lora_rank=512, qk_rope_head_dim=64),) * 27,
    16,
    2048,
    102400,
    163840,
)
