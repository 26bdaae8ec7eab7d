"""Engine-independent KV-cache arithmetic: the product brief's worked example, generalised per layer kind.

This is the "raw" figure (every sequence has reached its length, no prefix sharing, no padding or
allocator granularity); each engine's plan in `calculators/engines/<engine>/` adds that engine's own rules.
"""

from __future__ import annotations

from dataclasses import dataclass

from calculators.errors import ServewiseInputError
from calculators.i18n import _
from calculators.model.architecture import LayerGeometry, LayerKind, ModelArchitecture


def retained_tokens(layer: LayerGeometry, tokens_per_sequence: int) -> int:
    """Tokens a layer keeps for one sequence: all of them, or at most the window for sliding layers."""
    if layer.kind is LayerKind.RECURRENT:
        return 0
    if layer.kind is LayerKind.SLIDING and layer.sliding_window_tokens:
        return min(tokens_per_sequence, layer.sliding_window_tokens)
    return tokens_per_sequence


def layer_kv_bytes_per_token(layer: LayerGeometry, bytes_per_element: float) -> float:
    """Bytes one layer stores per retained token: (K elements + V elements) x element size."""
    return (layer.k_elements_per_token + layer.v_elements_per_token) * bytes_per_element


@dataclass(frozen=True)
class RawKvEstimate:
    """Raw KV bytes for `n_sequences` sequences that each retain `tokens_per_sequence` tokens."""

    tokens_per_sequence: int
    n_sequences: int
    bytes_per_element: float
    bytes_per_token_unbounded_layers: float  # full + MLA layers: grows with every token
    bytes_per_token_window_layers: float  # sliding layers, until the window is full
    kv_bytes_per_sequence: float
    recurrent_state_bytes_per_sequence: float

    @property
    def total_bytes(self) -> float:
        """KV plus recurrent state for all sequences, in bytes."""
        return self.n_sequences * (self.kv_bytes_per_sequence + self.recurrent_state_bytes_per_sequence)


def raw_kv_estimate(
    arch: ModelArchitecture,
    tokens_per_sequence: int,
    n_sequences: int,
    bytes_per_element: float,
    recurrent_bytes_per_element: float = 4.0,
) -> RawKvEstimate:
    """Raw KV bytes per layer kind for N sequences of a given length (bytes, before engine rules).

    Sliding-window layers keep at most their window; recurrent layers keep a fixed state per sequence
    (stored as f32 by default, as llama.cpp does). With grouped-query attention the KV heads count,
    never the query heads.
    """
    if tokens_per_sequence < 0 or n_sequences < 0:
        raise ServewiseInputError(_("token and sequence counts must be zero or positive"))
    if bytes_per_element <= 0:
        raise ServewiseInputError(_("bytes per element must be positive"))
    unbounded = sum(
        layer_kv_bytes_per_token(layer, bytes_per_element) for layer in arch.layers_of(LayerKind.FULL, LayerKind.MLA)
    )
    windowed_layers = arch.layers_of(LayerKind.SLIDING)
    windowed = sum(layer_kv_bytes_per_token(layer, bytes_per_element) for layer in windowed_layers)
    per_sequence = unbounded * tokens_per_sequence + sum(
        layer_kv_bytes_per_token(layer, bytes_per_element) * retained_tokens(layer, tokens_per_sequence)
        for layer in windowed_layers
    )
    recurrent = sum(  # every layer with a state: recurrent layers and attention layers beside a mixer (Falcon-H1)
        (layer.recurrent_conv_elements + layer.recurrent_state_elements) * recurrent_bytes_per_element
        for layer in arch.layers
    )
    return RawKvEstimate(
        tokens_per_sequence=tokens_per_sequence,
        n_sequences=n_sequences,
        bytes_per_element=bytes_per_element,
        bytes_per_token_unbounded_layers=unbounded,
        bytes_per_token_window_layers=windowed,
        kv_bytes_per_sequence=per_sequence,
        recurrent_state_bytes_per_sequence=recurrent,
    )


def uniform_gqa_architecture(
    n_layers: int, n_kv_heads: int, head_dim: int, name: str = "uniform GQA"
) -> ModelArchitecture:
    """A model whose every layer is full attention with the same KV heads and head size (the brief's example)."""
    if min(n_layers, n_kv_heads, head_dim) <= 0:
        raise ServewiseInputError(_("layers, KV heads and head dimension must all be positive"))
    layer = LayerGeometry(kind=LayerKind.FULL, n_kv_heads=n_kv_heads, head_dim_k=head_dim, head_dim_v=head_dim)
    return ModelArchitecture(
        name=name,
        family="generic",
        layers=(layer,) * n_layers,
        n_heads=n_kv_heads,
        hidden_size=n_kv_heads * head_dim,
        vocab_size=0,
        max_context_tokens=None,
        source="typed geometry",
    )
