"""MLX LM: KV caches that grow in 256-token steps, rotating caches, quantized caches, and the GPU's share of RAM.

Source read: ml-explore/mlx-lm @ d78bf58e217c (v0.31.3-43, 2026-08-22):
- mlx_lm/models/cache.py: `KVCache.step = 256`; when a chunk of n tokens does not fit, the buffer grows by
  ceil(n / 256) x 256 tokens (after trimming to the used length if that was not a multiple of 256).
  `RotatingKVCache(max_size, keep)`: grows by min(256, max_size - offset) per decode step and is trimmed to
  max_size; a multi-token chunk is concatenated first, so the buffer briefly holds up to
  min(len, max_size - 1) + chunk tokens. `make_prompt_cache` uses RotatingKVCache(max_kv_size, keep=4) for
  every layer, unless the model defines its own `make_cache` (sliding-window and hybrid models do; then
  max_kv_size is ignored). `QuantizedKVCache`: per head and token, dim x bits / 8 bytes of packed uint32 plus
  dim / group_size scales and as many biases in the activation dtype; `KVCache.to_quantized` quantizes the
  whole allocated buffer.
- mlx_lm/generate.py: the prompt except its last token is processed in chunks of prefill_step_size (2048);
  the cache is quantized once its offset reaches quantized_kv_start (CLI default 5000). --max-kv-size,
  --kv-bits, --kv-group-size (64) and --quantized-kv-start are mlx_lm.generate flags.
- mlx_lm/server.py: --decode-concurrency 32, --prompt-concurrency 8, --prefill-step-size 2048,
  --prompt-cache-size 10, host 127.0.0.1, port 8080; at start it sets the wired limit to Metal's
  max_recommended_working_set_size. This server has no --max-kv-size or --kv-bits flag.

The GPU may use Metal's recommended working set, not all of RAM. Its value is an input (`working_set_bytes`,
or `wired_limit_mb` after `sudo sysctl iogpu.wired_limit_mb=N`); wiring memory needs macOS 15 or later.
Observed defaults, for reference: 107.52 GiB on a 128 GB M5 Max under macOS 26, and exactly 112.00 GiB with
iogpu.wired_limit_mb=114688 (antirez/ds4 PR #893, https://github.com/antirez/ds4/pull/893).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from calculators.errors import ServewiseInputError
from calculators.hardware.machine import Machine
from calculators.memory.plan import CacheAllocation, ComponentKind, MemoryComponent, MemoryPlan, PlanNote
from calculators.model.architecture import LayerGeometry, LayerKind, ModelArchitecture
from calculators.units import MIB

ENGINE_ID = "mlx-lm"

STEP_TOKENS = 256  # mlx_lm/models/cache.py KVCache.step / RotatingKVCache.step / QuantizedKVCache.step
ROTATING_KEEP_TOKENS = 4  # make_prompt_cache: RotatingKVCache(max_size=max_kv_size, keep=4)
_MLX_BITS = (2, 3, 4, 5, 6, 8)  # bit widths mx.quantize accepts for affine quantization


class MlxLmSettings(BaseModel):
    """MLX LM settings that change memory, named as mlx_lm's command-line flags (snake_case)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    max_kv_size: int | None = Field(default=None, gt=0)  # generate.py --max-kv-size (None: unbounded)
    kv_bits: int | None = None  # generate.py --kv-bits (None: no quantization)
    kv_group_size: int = Field(default=64, gt=0)  # generate.py --kv-group-size
    quantized_kv_start: int = Field(default=5000, ge=0)  # generate.py DEFAULT_QUANTIZED_KV_START
    prefill_step_size: int = Field(default=2048, gt=0)  # generate.py / server.py --prefill-step-size
    decode_concurrency: int = Field(default=32, gt=0)  # server.py --decode-concurrency
    prompt_concurrency: int = Field(default=8, gt=0)  # server.py --prompt-concurrency
    prompt_cache_size: int = Field(default=10, gt=0)  # server.py --prompt-cache-size
    prompt_cache_bytes: int | None = Field(default=None, gt=0)  # server.py --prompt-cache-bytes
    draft_model: str | None = None  # server.py / generate.py --draft-model (see mlx_lm_speculative.py)
    num_draft_tokens: int = Field(default=3, ge=0)  # --num-draft-tokens
    host: str = "127.0.0.1"
    port: int = 8080


class MlxLmPlan(MemoryPlan):
    """MLX LM's cache for `n_sequences` sequences of `retained_tokens` each, on Apple silicon's unified memory."""

    prompt_tokens: int
    generated_tokens: int
    retained_tokens: int = Field(description="tokens the cache has seen: prompt + generated")
    n_sequences: int
    step_tokens: int
    allocated_tokens: int = Field(description="token slots allocated per full-attention layer and sequence")
    peak_allocated_tokens: int = Field(description="largest buffer during prompt processing (rotating caches)")
    max_kv_size_behaviour: Literal["unbounded", "rotating", "ignored_by_model_cache"]
    rotating_keep_tokens: int | None
    kv_bits: int | None
    kv_group_size: int
    quantized: bool = Field(description="True when the cache was converted to QuantizedKVCache")
    working_set_bytes: int | None
    working_set_basis: str


@dataclass(frozen=True)
class CacheGrowth:
    """Token slots of one layer's buffer: after the last chunk and at its largest."""

    final_tokens: int
    peak_tokens: int


def generation_chunks(prompt_tokens: int, generated_tokens: int, prefill_step_size: int) -> list[int]:
    """Token counts mlx_lm.generate feeds the cache: prompt chunks, then one token per step (generate_step)."""
    chunks = []
    remaining = prompt_tokens
    while remaining > 1:
        n = min(prefill_step_size, remaining - 1)
        chunks.append(n)
        remaining -= n
    chunks.extend([1] * (remaining + generated_tokens))
    return chunks


def kv_cache_growth(chunks: list[int], step: int = STEP_TOKENS) -> CacheGrowth:
    """Slots a KVCache (or QuantizedKVCache) has after the chunks: grows by whole steps, as cache.py does."""
    capacity = offset = 0
    for n in chunks:
        if capacity == 0 or offset + n > capacity:
            if capacity and offset % step:
                capacity = offset
            capacity += (step + n - 1) // step * step
        offset += n
    return CacheGrowth(capacity, capacity)


def rotating_cache_growth(chunks: list[int], max_size: int, keep: int, step: int = STEP_TOKENS) -> CacheGrowth:
    """Slots a RotatingKVCache holds after the chunks, and the most it held (concatenation before a trim).

    Mirrors cache.py: multi-token chunks are concatenated after trimming to max_size - 1 valid tokens; single
    tokens grow the buffer by min(step, max_size - offset) until it reaches max_size, then rotate in place.
    """
    length = offset = idx = peak = 0
    for n in chunks:
        if n > 1:  # _update_concat
            if length == 0:
                length = n
            else:
                valid = length if idx in (length,) or idx < offset else idx
                length = min(valid, max_size - 1) + n
            offset += n
            idx = length
        else:  # _update_in_place
            if length == 0 or (offset >= length and length < max_size):
                length += max(0, min(step, max_size - offset))
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
    """Bytes MLX stores for one quantized vector of `dim` values: packed uint32 words + scales + biases."""
    if dim % group_size:
        raise ServewiseInputError(f"kv_group_size {group_size} does not divide the head dimension {dim}")
    values_per_word = 32 // bits
    return dim // values_per_word * 4 + 2 * (dim // group_size) * scale_bytes


def _vector_bytes(dim: int, dtype_bytes: int, bits: int | None, group_size: int) -> int:
    if dim == 0:
        return 0
    if bits is None:
        return dim * dtype_bytes
    return quantized_bytes_per_vector(dim, bits, group_size, dtype_bytes)


def _k_v_per_token(layer: LayerGeometry, dtype_bytes: int, bits: int | None, group_size: int) -> tuple[int, int]:
    """K and V bytes one token costs in one layer (MLA: the latent is stored as 'keys', the rope key as 'values')."""
    if layer.kind is LayerKind.MLA:
        return (_vector_bytes(layer.kv_lora_rank, dtype_bytes, bits, group_size),
                _vector_bytes(layer.qk_rope_head_dim, dtype_bytes, bits, group_size))
    return (layer.n_kv_heads * _vector_bytes(layer.head_dim_k, dtype_bytes, bits, group_size),
            layer.n_kv_heads * _vector_bytes(layer.head_dim_v, dtype_bytes, bits, group_size))


def plan_mlx_lm(
    arch: ModelArchitecture,
    settings: MlxLmSettings,
    machine: Machine,
    weights_bytes: int | None,
    *,
    prompt_tokens: int | None = None,
    generated_tokens: int = 0,
    n_sequences: int = 1,
    kv_dtype_bytes: int = 2,
    working_set_bytes: int | None = None,
    wired_limit_mb: int | None = None,
) -> MlxLmPlan:
    """MLX LM's KV memory for n sequences that each processed `prompt_tokens` and produced `generated_tokens`.

    Bytes; the cache follows mlx_lm.generate's chunking (prompt in prefill_step_size chunks, then one token per
    step). The GPU budget is `working_set_bytes` (Metal's recommended working set) or `wired_limit_mb` MiB.
    Without `prompt_tokens` the plan is one sequence filling the model's trained context (MLX LM has no
    context setting of its own).
    """
    if prompt_tokens is None:
        if arch.max_context_tokens is None:
            raise ServewiseInputError("give prompt_tokens: the model's trained context is unknown")
        prompt_tokens = arch.max_context_tokens - generated_tokens
    if prompt_tokens < 1 or generated_tokens < 0 or n_sequences < 1:
        raise ServewiseInputError("prompt tokens and sequences must be at least 1, generated tokens at least 0")
    if settings.kv_bits is not None and settings.kv_bits not in _MLX_BITS:
        raise ServewiseInputError(f"kv_bits must be one of {list(_MLX_BITS)} (MLX affine quantization)")
    if kv_dtype_bytes not in (2, 4):
        raise ServewiseInputError("MLX keeps the KV cache in the activation dtype: 2 (float16/bfloat16) or 4 bytes")
    notes: list[PlanNote] = []
    retained = prompt_tokens + generated_tokens
    chunks = generation_chunks(prompt_tokens, generated_tokens, settings.prefill_step_size)

    model_has_own_cache = bool(arch.layers_of(LayerKind.SLIDING, LayerKind.RECURRENT))
    if settings.max_kv_size is None:
        behaviour = "unbounded"
    elif model_has_own_cache:
        behaviour = "ignored_by_model_cache"
        notes.append(PlanNote(code="mlx_max_kv_size_ignored", message="This model builds its own caches "
                              "(make_cache: sliding-window or recurrent layers), so mlx_lm ignores --max-kv-size."))
    else:
        behaviour = "rotating"
        notes.append(PlanNote(code="mlx_rotating", message=f"--max-kv-size {settings.max_kv_size}: each layer keeps "
                              f"the first {ROTATING_KEEP_TOKENS} tokens and the most recent ones; older context is "
                              "dropped, so answers no longer see the whole conversation."))

    quantized = settings.kv_bits is not None and any(
        offset >= settings.quantized_kv_start for offset in _offsets(chunks))
    if settings.kv_bits is not None and not quantized:
        notes.append(PlanNote(code="mlx_not_yet_quantized", message=f"The cache stays unquantized until it holds "
                              f"quantized_kv_start ({settings.quantized_kv_start}) tokens."))
    bits = settings.kv_bits if quantized else None

    full_growth = (rotating_cache_growth(chunks, settings.max_kv_size, ROTATING_KEEP_TOKENS)
                   if behaviour == "rotating" else kv_cache_growth(chunks))
    caches: list[CacheAllocation] = []
    per_sequence_bytes = 0
    bytes_per_token = 0
    by_kind: dict[str, tuple[list[LayerGeometry], CacheGrowth]] = {}
    for layer in arch.layers:
        if layer.kind in (LayerKind.FULL, LayerKind.MLA):
            by_kind.setdefault(layer.kind.value, ([], full_growth))[0].append(layer)
        elif layer.kind is LayerKind.SLIDING:
            window = layer.sliding_window_tokens or retained
            key = f"sliding_{window}"
            growth = rotating_cache_growth(chunks, window, 0)
            by_kind.setdefault(key, ([], growth))[0].append(layer)
    type_name = (f"q{settings.kv_bits} (group {settings.kv_group_size})" if bits else
                 ("float16/bfloat16" if kv_dtype_bytes == 2 else "float32"))
    for key, (layers, growth) in by_kind.items():
        k_tok = v_tok = 0
        for layer in layers:
            k, v = _k_v_per_token(layer, kv_dtype_bytes, bits, settings.kv_group_size)
            k_tok, v_tok = k_tok + k, v_tok + v
        bytes_per_token += k_tok + v_tok
        cells = growth.final_tokens
        caches.append(CacheAllocation(
            name={"full": "kv", "mla": "kv_mla"}.get(key, "kv_swa"), layers=len(layers), cells=cells,
            seqs=n_sequences, type_k=type_name, type_v=type_name, k_bytes=k_tok * cells * n_sequences,
            v_bytes=v_tok * cells * n_sequences))
        per_sequence_bytes += (k_tok + v_tok) * cells
    recurrent = arch.layers_of(LayerKind.RECURRENT)
    recurrent_bytes = sum((x.recurrent_conv_elements + x.recurrent_state_elements) for x in recurrent) * kv_dtype_bytes
    if recurrent:
        notes.append(PlanNote(code="mlx_recurrent_dtype", message="Recurrent state is counted in the activation "
                              "dtype; some MLX models keep parts of it in float32."))

    kv_bytes = per_sequence_bytes * n_sequences
    components: list[MemoryComponent] = []
    if weights_bytes is not None:
        components.append(MemoryComponent(kind=ComponentKind.WEIGHTS, label="weights", bytes=weights_bytes,
                                          exact=True, basis="as given"))
    components.append(MemoryComponent(kind=ComponentKind.KV_CACHE, label=f"KV cache, {n_sequences} sequence(s)",
                                      bytes=kv_bytes, exact=True, basis="mlx_lm/models/cache.py growth in 256-token steps"))
    if recurrent:
        components.append(MemoryComponent(kind=ComponentKind.RECURRENT_STATE, label="recurrent state",
                                          bytes=recurrent_bytes * n_sequences, exact=False,
                                          basis="conv + state elements x activation dtype"))

    if wired_limit_mb is not None:
        working_set, basis = wired_limit_mb * MIB, "iogpu.wired_limit_mb (Metal then reports exactly this limit)"
    elif working_set_bytes is not None:
        working_set, basis = working_set_bytes, "as given (Metal's max_recommended_working_set_size)"
    else:
        working_set, basis = None, "unknown: give Metal's recommended working set or the wired limit"
        notes.append(PlanNote(code="mlx_working_set_unknown", message="The GPU may use Metal's recommended working "
                              "set, not all of RAM (for example 107.52 GiB of a 128 GB Mac under macOS 26); give it "
                              "to check the fit."))
    if not machine.unified_memory:
        notes.append(PlanNote(code="mlx_not_unified", message="MLX LM's Metal path runs on Apple silicon with "
                              "unified memory; this machine is not marked unified."))
    if n_sequences > 1:
        notes.append(PlanNote(code="mlx_batch_padding", message="mlx_lm.server batches up to decode_concurrency "
                              "sequences; a batch pads shorter prompts to the longest, so real use can exceed this."))
    if working_set is not None:
        used = sum(c.bytes for c in components)
        if used < working_set:
            components.append(MemoryComponent(kind=ComponentKind.FREE, label="left in the GPU working set",
                                              bytes=working_set - used, exact=False, basis=basis))
        else:
            notes.append(PlanNote(code="mlx_over_working_set", message="Weights and cache exceed the GPU working "
                                  "set: MLX will page or fail; raise the wired limit (macOS 15+) or shrink the cache."))

    return MlxLmPlan(
        engine=ENGINE_ID,
        kv_bytes_per_token=bytes_per_token,
        kv_cache_bytes=kv_bytes,
        weights_bytes=weights_bytes,
        caches=caches,
        components=components,
        device_capacity_bytes=working_set,
        refusal=None,
        notes=notes,
        prompt_tokens=prompt_tokens,
        generated_tokens=generated_tokens,
        retained_tokens=retained,
        n_sequences=n_sequences,
        step_tokens=STEP_TOKENS,
        allocated_tokens=full_growth.final_tokens,
        peak_allocated_tokens=full_growth.peak_tokens,
        max_kv_size_behaviour=behaviour,
        rotating_keep_tokens=ROTATING_KEEP_TOKENS if behaviour == "rotating" else None,
        kv_bits=settings.kv_bits,
        kv_group_size=settings.kv_group_size,
        quantized=quantized,
        working_set_bytes=working_set,
        working_set_basis=basis,
    )


def _offsets(chunks: list[int]) -> list[int]:
    total, out = 0, []
    for n in chunks:
        total += n
        out.append(total)
    return out
