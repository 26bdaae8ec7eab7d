"""The attention geometry of a model, layer by layer: what every memory plan is computed from.

Sizes are element counts (heads, dimensions, tokens); bytes come from the cache dtype later, because
each engine stores the same elements differently.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum


class LayerKind(StrEnum):
    """How one layer remembers past tokens."""

    FULL = "full"  # global attention: K and V for every retained token
    SLIDING = "sliding"  # local attention: K and V for at most `sliding_window_tokens` recent tokens
    MLA = "mla"  # multi-head latent attention: one compressed latent + a shared rope key per token
    RECURRENT = "recurrent"  # linear attention / state-space layer: a fixed-size state per sequence, no KV


@dataclass(frozen=True)
class LayerGeometry:
    """What one layer keeps per token (attention) or per sequence (recurrent state), in elements."""

    kind: LayerKind
    n_kv_heads: int = 0
    head_dim_k: int = 0  # key length per head (GGUF `attention.key_length`)
    head_dim_v: int = 0  # value length per head (GGUF `attention.value_length`)
    sliding_window_tokens: int | None = None
    kv_lora_rank: int = 0  # MLA latent width (stored once per token, shared by all heads)
    qk_rope_head_dim: int = 0  # MLA decoupled rope key width (stored once per token)
    recurrent_conv_elements: int = 0  # per sequence, recurrent layers only (llama.cpp "R" tensor)
    recurrent_state_elements: int = 0  # per sequence, recurrent layers only (llama.cpp "S" tensor)
    _hash: int = field(init=False, repr=False, compare=False, default=0)

    def __post_init__(self) -> None:
        # Engine plans group and look up layers by geometry many times per plan; hash once.
        object.__setattr__(self, "_hash", hash(tuple(getattr(self, f) for f in _LAYER_FIELDS)))

    def __hash__(self) -> int:
        return self._hash

    @property
    def k_elements_per_token(self) -> int:
        """Key elements this layer stores per retained token (MLA: latent + rope key; recurrent: 0)."""
        if self.kind is LayerKind.MLA:
            return self.kv_lora_rank + self.qk_rope_head_dim
        if self.kind is LayerKind.RECURRENT:
            return 0
        return self.n_kv_heads * self.head_dim_k

    @property
    def v_elements_per_token(self) -> int:
        """Value elements this layer stores per retained token (MLA stores none: V is rebuilt from the latent)."""
        if self.kind in (LayerKind.MLA, LayerKind.RECURRENT):
            return 0
        return self.n_kv_heads * self.head_dim_v


_LAYER_FIELDS = tuple(name for name in LayerGeometry.__dataclass_fields__ if name != "_hash")


@dataclass(frozen=True)
class MoEGeometry:
    """Mixture-of-experts layout: every expert stays resident; only `n_active` run per token."""

    n_experts: int
    n_active: int
    n_shared: int = 0
    expert_intermediate_size: int = 0
    n_dense_layers: int = 0  # leading layers with a dense MLP instead of experts


@dataclass(frozen=True)
class ModelArchitecture:
    """A model's memory-relevant architecture, independent of engine and precision."""

    name: str
    family: str  # config.json model_type (or GGUF general.architecture)
    layers: tuple[LayerGeometry, ...]
    n_heads: int  # query heads (never used for KV size: grouped-query attention stores KV heads)
    hidden_size: int
    vocab_size: int
    max_context_tokens: int | None  # trained context (max_position_embeddings / GGUF context_length)
    params_total: int | None = None
    params_active: int | None = None  # per token (differs from total for MoE)
    moe: MoEGeometry | None = None
    is_embedding_model: bool = False
    source: str = ""  # where this geometry was read: catalog id, config path, repo id, GGUF file
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def n_layers(self) -> int:
        """Number of transformer blocks."""
        return len(self.layers)

    def layers_of(self, *kinds: LayerKind) -> tuple[LayerGeometry, ...]:
        """The layers of the given kinds, in order."""
        return tuple(layer for layer in self.layers if layer.kind in kinds)
