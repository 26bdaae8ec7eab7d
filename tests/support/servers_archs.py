"""Small architecture builders for the vLLM / SGLang / MLX LM plan tests (geometry typed in, not parsed)."""

from __future__ import annotations

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
