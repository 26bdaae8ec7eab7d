"""Memory of an embedding server: the weights plus one batch's activations, and no KV cache that grows.

An embedding request is one forward pass over its input; nothing is generated, so no KV cache grows with
the conversation. llama.cpp gives embedding models no KV cache (calculators/engines/llama_cpp/plan.py, "embedding
models get no KV cache"), and vLLM's encoder-only attention layers need none (EncoderOnlyAttentionSpec in
vllm/v1/kv_cache_interface.py @v0.33.0 reserves 0 bytes). The working set that remains is the batch's
activations. servewise bounds it by the largest tensors one layer holds at once per token: the residual
stream in and out, the query/key/value projections and the MLP's gate and up outputs, at the activation
width (2 bytes for BF16/FP16). This is servewise's estimate, not an engine's figure; engines add their own
compute buffers and (vLLM) reserve --gpu-memory-utilization whatever the model needs.
"""

from __future__ import annotations

from dataclasses import dataclass

from calculators.errors import ServewiseInputError
from calculators.i18n import _
from calculators.model.architecture import ModelArchitecture

ACTIVATION_BYTES = 2  # BF16/FP16 activations


@dataclass(frozen=True)
class EmbeddingServerMemory:
    """Bytes an embedding server needs for one batch of `batch_tokens` tokens (weights + activations)."""

    weights_bytes: int
    activation_bytes: int
    kv_cache_bytes: int  # always 0: nothing is generated, no cache grows
    total_bytes: int
    batch_tokens: int
    activation_bytes_per_token: int


def embedding_server_memory(
    arch: ModelArchitecture, weights_bytes: int, intermediate_size: int, batch_tokens: int
) -> EmbeddingServerMemory:
    """Weights plus the largest per-layer activation set for `batch_tokens` tokens in one forward pass (bytes)."""
    if batch_tokens <= 0:
        raise ServewiseInputError(_("the embedding batch must hold at least one token (got {batch_tokens})").format(
                                    batch_tokens=batch_tokens))
    if intermediate_size <= 0:
        raise ServewiseInputError(_("the model's intermediate_size (MLP width) is needed for the activation estimate"))
    layer = arch.layers[0]
    head_dim = layer.head_dim_k or arch.hidden_size // max(arch.n_heads, 1)
    qkv = arch.n_heads * head_dim + layer.k_elements_per_token + layer.v_elements_per_token
    per_token_elements = 2 * arch.hidden_size + qkv + 2 * intermediate_size
    per_token = per_token_elements * ACTIVATION_BYTES
    activations = per_token * batch_tokens
    return EmbeddingServerMemory(
        weights_bytes=weights_bytes,
        activation_bytes=activations,
        kv_cache_bytes=0,
        total_bytes=weights_bytes + activations,
        batch_tokens=batch_tokens,
        activation_bytes_per_token=per_token,
    )
