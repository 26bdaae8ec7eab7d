"""llama.cpp's cache bytes over a whole grid of contexts x slots at once, for charts and benchmarks.

The same rules as `plan_llamacpp` (calculators/engines/llama_cpp/plan.py, read at ggml-org/llama.cpp@0c1e57098),
vectorised with numpy; tests/calculators/engines/llama_cpp/test_grid.py checks every cell against plan_llamacpp. Machine-
dependent --fit adjustments are not applied here (there is no machine).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from calculators.engines.llama_cpp.plan import (
    CTX_PAD_TOKENS,
    RECURRENT_STATE_TYPE,
    SWA_PAD_TOKENS,
    FlashAttn,
    LlamaCppSettings,
    ggml_row_bytes,
    layer_groups,
    resolved_flash_attn,
    rows_by_geometry,
)
from calculators.errors import ServewiseInputError
from calculators.model.architecture import ModelArchitecture


def _pad(values: np.ndarray, multiple: int) -> np.ndarray:
    return (values + multiple - 1) // multiple * multiple


def llamacpp_cache_bytes_grid(
    arch: ModelArchitecture,
    ctx_sizes: Sequence[int],
    parallels: Sequence[int],
    settings: LlamaCppSettings | None = None,
) -> np.ndarray:
    """Bytes of all caches (KV, sliding-window KV, recurrent state) for each -c (rows) and -np (columns).

    `settings` supplies everything else (cache types, flash attention, -kvu, --swa-full, -b/-ub);
    its own ctx_size and parallel are ignored. Returns an int64 array of shape (len(ctx_sizes), len(parallels)).
    """
    s = settings or LlamaCppSettings()
    ctx = np.asarray(ctx_sizes, dtype=np.int64)[:, None]
    n_seq = np.asarray(parallels, dtype=np.int64)[None, :]
    if ctx.size == 0 or n_seq.size == 0:
        return np.zeros((ctx.shape[0], n_seq.shape[1]), dtype=np.int64)
    if (ctx < 0).any() or (n_seq < 1).any():
        raise ServewiseInputError("contexts must be zero or positive and slot counts positive")
    if arch.is_embedding_model:
        return np.zeros((ctx.shape[0], n_seq.shape[1]), dtype=np.int64)
    if (ctx == 0).any() and not arch.max_context_tokens:
        raise ServewiseInputError("-c 0 asks for the trained context, but this model does not state one")

    unified = bool(s.kv_unified)  # an explicit -np leaves the KV split unless -kvu
    n_stream = np.ones_like(n_seq) if unified else n_seq
    trained = arch.max_context_tokens or 0
    requested = np.where(ctx == 0, trained * (n_stream if s.fit else 1), ctx)
    n_ctx = _pad(requested, CTX_PAD_TOKENS)
    n_ctx_seq = n_ctx if unified else _pad(n_ctx // n_seq, CTX_PAD_TOKENS)
    n_ubatch = np.minimum(np.minimum(requested, s.batch_size), s.ubatch_size or s.batch_size)

    rows = rows_by_geometry(arch, s, resolved_flash_attn(s) is FlashAttn.OFF)
    base, swa, recurrent, _ = layer_groups(arch)
    total = sum(sum(rows[layer]) for _, layer in base) * n_ctx_seq * n_stream
    if swa:
        n_swa = max(layer.sliding_window_tokens or 0 for _, layer in swa)
        cells = (
            n_ctx_seq
            if s.swa_full
            else _pad(np.minimum(n_ctx_seq, n_swa * (n_seq if unified else 1) + n_ubatch), SWA_PAD_TOKENS)
        )
        total = total + sum(sum(rows[layer]) for _, layer in swa) * cells * n_stream
    if recurrent:
        per_slot = ggml_row_bytes(RECURRENT_STATE_TYPE, 1) * sum(
            layer.recurrent_conv_elements + layer.recurrent_state_elements for _, layer in recurrent
        )
        total = total + per_slot * np.maximum(n_seq, 1)
    return np.broadcast_to(total, (ctx.shape[0], n_seq.shape[1])).astype(np.int64)
