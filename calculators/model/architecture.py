"""The attention geometry of a model, layer by layer: what every memory plan is computed from.

Sizes are element counts (heads, dimensions, tokens); bytes come from the cache dtype later, because
each engine stores the same elements differently.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Literal

from calculators.errors import ServewiseInputError
from calculators.i18n import _


class LayerKind(StrEnum):
    """How one layer remembers past tokens."""

    FULL = "full"  # global attention: K and V for every retained token
    SLIDING = "sliding"  # local attention: K and V for at most `sliding_window_tokens` recent tokens
    MLA = "mla"  # multi-head latent attention: one compressed latent + a shared rope key per token
    RECURRENT = "recurrent"  # linear attention / state-space layer: a fixed-size state per sequence, no KV
    NONE = "none"  # a block with no token mixer (Nemotron-H's MLP-only layers): keeps nothing between steps


RecurrentMixer = Literal["mamba1", "mamba2", "gated_deltanet", "kda"]


@dataclass(frozen=True)
class RecurrentGeometry:
    """The per-sequence state of one recurrent layer as its config.json describes it (element counts).

    One shape serves every mixer: a causal convolution over `conv_channels(tp)` channels that keeps the last
    `conv_kernel - 1` positions, and a temporal (SSM / delta-rule) state of `ssm_shape(tp)`:
    - mamba1: conv over `inner`; state (inner, 1, state_dim) (vLLM writes it (inner, state_dim)).
    - mamba2: conv over inner + 2 x n_groups x group_dim; state (heads, head_dim, state_dim).
    - gated_deltanet (Qwen3-Next / Qwen3.5): conv over v_heads x v_dim + 2 x k_heads x k_dim; state
      (v_heads, v_dim, k_dim).
    - kda (Kimi Linear): conv over heads x head_dim + 2 x k_heads x k_dim; state (heads, head_dim, head_dim).
    Engines shard the channels and heads over tensor-parallel ranks; Mamba2 first widens `n_groups` to a
    multiple of the ranks (vllm mamba_utils.py / sglang configs/mamba_utils.py extra_groups_for_head_shards).
    """

    mixer: RecurrentMixer
    conv_kernel: int
    inner: int  # conv channels that are not B/C groups (mamba: d_inner; GDN: v_heads x v_dim)
    n_groups: int  # B/C groups (mamba2), key heads (GDN, KDA); 0 for mamba1
    group_dim: int  # width of one group (mamba2: d_state; GDN/KDA: key head dim)
    heads: int  # heads of the temporal state (mamba1: inner)
    head_dim: int  # (mamba1: 1)
    state_dim: int

    def _divide(self, value: int, tp: int, what: str) -> int:
        if value % tp:
            raise ServewiseInputError(
                _("the {mixer} layers' {what} ({value}) do not divide by tensor parallel size {tp}").format(
                  mixer=self.mixer, what=what, value=value, tp=tp)
            )
        return value // tp

    def groups_for(self, tp: int) -> int:
        """B/C groups after widening for `tp` ranks (Mamba2 only widens; 0 extra when divisible)."""
        if self.mixer == "mamba2" and self.n_groups % tp:
            return tp  # ngroups + extra_groups_for_head_shards(ngroups, tp) = ngroups + (tp - ngroups)
        return self.n_groups

    def conv_channels(self, tp: int = 1) -> int:
        """Channels of the convolution state on one tensor-parallel rank."""
        channels = self.inner + 2 * self.groups_for(tp) * self.group_dim
        return self._divide(channels, tp, "conv channels")

    def ssm_shape(self, tp: int = 1) -> tuple[int, int, int]:
        """(heads, head_dim, state_dim) of the temporal state on one tensor-parallel rank."""
        return (self._divide(self.heads, tp, "state heads"), self.head_dim, self.state_dim)

    @property
    def conv_elements(self) -> int:
        """Conv-state elements per sequence, unsharded (llama.cpp's n_embd_r)."""
        return (self.conv_kernel - 1) * self.conv_channels(1) if self.conv_kernel > 0 else 0

    @property
    def state_elements(self) -> int:
        """Temporal-state elements per sequence, unsharded (llama.cpp's n_embd_s)."""
        heads, head_dim, state_dim = self.ssm_shape(1)
        return heads * head_dim * state_dim


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
    # the shapes behind those counts, when the source gives them (config.json does; a GGUF header does not)
    recurrent: RecurrentGeometry | None = None
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
    # multi-token-prediction layers the checkpoint ships beyond `layers` (config.json mtp_num_hidden_layers /
    # num_nextn_predict_layers); engines run them only as a speculative drafter
    mtp_layers: int = 0
    # the recurrent state's dtype when config.json states one (Nemotron-H mamba_ssm_cache_dtype, Qwen3.5
    # mamba_ssm_dtype); engines read it when their own setting is "auto"
    mamba_ssm_dtype: str | None = None
    source: str = ""  # where this geometry was read: catalog id, config path, repo id, GGUF file
    wrapper_model_type: str | None = None  # config.json's own model_type when a wrapper holds the text model
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def n_layers(self) -> int:
        """Number of transformer blocks."""
        return len(self.layers)

    def layers_of(self, *kinds: LayerKind) -> tuple[LayerGeometry, ...]:
        """The layers of the given kinds, in order."""
        return tuple(layer for layer in self.layers if layer.kind in kinds)
