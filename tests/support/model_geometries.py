"""Attention geometry of a few real models, typed from their published config.json, for engine-plan tests."""

from __future__ import annotations

import dataclasses

from calculators.memory.kv import uniform_gqa_architecture
from calculators.model.architecture import LayerGeometry, LayerKind, ModelArchitecture

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
