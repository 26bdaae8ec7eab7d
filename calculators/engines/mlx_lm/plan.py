"""MLX LM's memory plan: every layer's cache as mlx-lm builds and grows it, for a workload, and the GPU's share of RAM.

Source read: ml-explore/mlx-lm v0.32.2 (the version servewise's live check runs, tests/data/conformance/mlx_lm/):
cache growth in cache.py, the chunking and quantization in generate.py, which cache each model file builds in
models.py (servewise's mirror of mlx_lm/models/<type>.py make_cache). Flags: --max-kv-size, --kv-bits,
--kv-group-size (64) and --quantized-kv-start (5000) are mlx_lm.generate's; mlx_lm/server.py adds
--decode-concurrency 32, --prompt-concurrency 8, --prefill-step-size 2048, --prompt-cache-size 10, host
127.0.0.1, port 8080, and at start sets the wired limit to Metal's max_recommended_working_set_size.

The GPU may use Metal's recommended working set, not all of RAM. Its value is an input (`working_set_bytes`,
or `wired_limit_mb` after `sudo sysctl iogpu.wired_limit_mb=N`); wiring memory needs macOS 15 or later.
Observed defaults, for reference: 107.52 GiB on a 128 GB M5 Max under macOS 26, and exactly 112.00 GiB with
iogpu.wired_limit_mb=114688 (antirez/ds4 PR #893, https://github.com/antirez/ds4/pull/893).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from calculators.engines.mlx_lm.cache import (
    QUANTIZE_BITS,
    ROTATING_KEEP_TOKENS,
    STEP_TOKENS,
    CacheClass,
    CacheGrowth,
    kv_cache_growth,
    quantized_bytes_per_vector,
    rotating_cache_growth,
)
from calculators.engines.mlx_lm.generate import generation_chunks, quantization_reached
from calculators.engines.mlx_lm.models import ModelFile, model_file
from calculators.errors import ServewiseInputError
from calculators.hardware.machine import Machine
from calculators.i18n import _, ngettext
from calculators.memory.plan import CacheAllocation, ComponentKind, MemoryComponent, MemoryPlan, PlanNote, Result
from calculators.model.architecture import LayerGeometry, LayerKind, ModelArchitecture
from calculators.units import MIB

ENGINE_ID = "mlx-lm"
_ATTENTION = (LayerKind.FULL, LayerKind.SLIDING, LayerKind.MLA)


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


class MlxLayerCache(Result):
    """One layer's cache after the workload, as mlx-lm's cache object reports it (`type(c).__name__`, `c.nbytes`)."""

    layer: int = Field(description="index in the model's layers")
    cache_class: CacheClass
    tokens: int = Field(default=0, description="token slots of the K/V buffers (0: recurrent only)")
    peak_tokens: int = Field(default=0, description="most token slots held after any update")
    max_size: int | None = Field(default=None, description="RotatingKVCache max_size")
    keep: int | None = Field(default=None, description="RotatingKVCache keep")
    k_bytes_per_token: int = 0
    v_bytes_per_token: int = 0
    state_bytes: int = Field(default=0, description="ArraysCache arrays (conv and recurrent state), per sequence")
    bytes: int = Field(description="cache.nbytes for one sequence")
    peak_bytes: int = Field(description="largest cache.nbytes after any update, one sequence")


class MlxLmPlan(MemoryPlan):
    """MLX LM's cache for `n_sequences` sequences of `retained_tokens` each, on Apple silicon's unified memory."""

    model_file: str = Field(description="mlx_lm/models/<model_file>.py runs the model")
    layer_caches: list[MlxLayerCache]
    prompt_tokens: int
    generated_tokens: int
    retained_tokens: int = Field(description="tokens the cache has seen: prompt + generated")
    n_sequences: int
    step_tokens: int
    allocated_tokens: int = Field(description="token slots per full-context layer and sequence (0: none)")
    peak_allocated_tokens: int = Field(description="largest buffer of any layer during the run, in token slots")
    max_kv_size_behaviour: Literal["unbounded", "rotating", "ignored_by_model_cache"]
    rotating_keep_tokens: int | None
    kv_bits: int | None
    kv_group_size: int
    quantized: bool = Field(description="True when the cache was converted to QuantizedKVCache")
    working_set_bytes: int | None
    working_set_basis: str


def _vector_bytes(dim: int, dtype_bytes: int, bits: int | None, group_size: int) -> int:
    if dim == 0:
        return 0
    if bits is None:
        return dim * dtype_bytes
    return quantized_bytes_per_vector(dim, bits, group_size, dtype_bytes)


def _k_v_per_token(layer: LayerGeometry, file: ModelFile, dtype_bytes: int, bits: int | None,
                   group_size: int) -> tuple[int, int]:
    """K and V bytes one token costs in one layer, as the model file stores it (see models.py for MLA)."""
    if layer.kind is LayerKind.MLA and not file.expanded_mla:
        return (_vector_bytes(layer.kv_lora_rank, dtype_bytes, bits, group_size),
                _vector_bytes(layer.qk_rope_head_dim, dtype_bytes, bits, group_size))
    return (layer.n_kv_heads * _vector_bytes(layer.head_dim_k, dtype_bytes, bits, group_size),
            layer.n_kv_heads * _vector_bytes(layer.head_dim_v, dtype_bytes, bits, group_size))


def _built_cache(layer: LayerGeometry, file: ModelFile, max_kv_size: int | None) -> tuple[CacheClass, int | None, int]:
    """(class, max_size, keep) make_prompt_cache gives one layer: the model's make_cache or the default."""
    if file.cache_list:
        return CacheClass.CACHE_LIST, None, 0
    if layer.kind is LayerKind.RECURRENT:
        return CacheClass.ARRAYS, None, 0
    if file.has_make_cache:
        if layer.kind is LayerKind.SLIDING and file.keeps_windows:
            if layer.sliding_window_tokens is None:
                raise ServewiseInputError(
                    _("a sliding-window layer has no window size: the config lacks sliding_window"))
            return CacheClass.ROTATING, layer.sliding_window_tokens, 0
        return CacheClass.KV, None, 0
    if max_kv_size is not None:
        return CacheClass.ROTATING, max_kv_size, ROTATING_KEEP_TOKENS
    return CacheClass.KV, None, 0


def _state_bytes(layer: LayerGeometry, file: ModelFile, dtype_bytes: int) -> int:
    """A recurrent layer's ArraysCache: conv state in the activation dtype, the state as the model file keeps it."""
    state_dtype = 4 if file.float32_state else dtype_bytes
    return layer.recurrent_conv_elements * dtype_bytes + layer.recurrent_state_elements * state_dtype


def plan_mlx_lm(
    arch: ModelArchitecture,
    settings: MlxLmSettings,
    machine: Machine | None,
    weights_bytes: int | None,
    *,
    prompt_tokens: int | None = None,
    generated_tokens: int = 0,
    n_sequences: int = 1,
    kv_dtype_bytes: int = 2,
    working_set_bytes: int | None = None,
    wired_limit_mb: int | None = None,
) -> MlxLmPlan:
    """MLX LM's cache bytes for n sequences that each processed `prompt_tokens` and produced `generated_tokens`.

    Layer by layer as mlx-lm builds and grows it (cache.py, generate.py, models.py here); bytes. The GPU
    budget is `working_set_bytes` (Metal's recommended working set) or `wired_limit_mb` MiB; the cache does not
    depend on the machine (None is allowed). Without
    `prompt_tokens` the plan is one sequence filling the model's trained context (MLX LM has no context
    setting of its own). `kv_dtype_bytes` is the activation dtype the cache takes from the weights.
    """
    if prompt_tokens is None:
        if arch.max_context_tokens is None:
            raise ServewiseInputError(_("give prompt_tokens: the model's trained context is unknown"))
        prompt_tokens = arch.max_context_tokens - generated_tokens
    if prompt_tokens < 1 or generated_tokens < 0 or n_sequences < 1:
        raise ServewiseInputError(_("prompt tokens and sequences must be at least 1, generated tokens at least 0"))
    if settings.kv_bits is not None and settings.kv_bits not in QUANTIZE_BITS:
        raise ServewiseInputError(_("kv_bits must be one of {quantize_bits} (MLX affine quantization)").format(
                                    quantize_bits=list(QUANTIZE_BITS)))
    if kv_dtype_bytes not in (2, 4):
        raise ServewiseInputError(_("MLX keeps the KV cache in the activation dtype: 2 (float16/bfloat16) or "
                                    "4\u00a0bytes"))
    file = model_file(arch.family, arch.wrapper_model_type)
    notes: list[PlanNote] = []
    refusal: str | None = None
    retained = prompt_tokens + generated_tokens
    chunks = generation_chunks(prompt_tokens, generated_tokens, settings.prefill_step_size)
    if settings.draft_model is not None:
        # generate.py speculative_generate_step / server.py is_batchable (see speculative.py)
        if arch.layers_of(LayerKind.RECURRENT) or any(layer.recurrent_state_elements for layer in arch.layers):
            refusal = _("Speculative decoding requires a trimmable prompt cache: this model's recurrent layers keep "
                        "ArraysCache, which mlx_lm cannot trim, so --draft-model fails here.")
        notes.append(PlanNote(code="mlx_draft_model", message=(
            _("--draft-model {draft_model}: the draft model's own weights and cache come on top of this plan "
              "(name the draft model on the memory page, or give `memory --draft-model` / `--draft-config`, to "
              "plan them), each cache keeps up to --num-draft-tokens ({num_draft_tokens}) more tokens, and "
              "mlx_lm.server stops batching: requests run one at a time.").format(
                draft_model=settings.draft_model, num_draft_tokens=settings.num_draft_tokens))))
    if not file.read:
        notes.append(PlanNote(code="mlx_model_file_unread", message=_("servewise has not read "
            "mlx_lm/models/{name}.py; the plan assumes it has no make_cache (KVCache on every layer).").format(
            name=file.name)))

    if settings.max_kv_size is None:
        behaviour = "unbounded"
    elif file.has_make_cache:
        behaviour = "ignored_by_model_cache"
        notes.append(PlanNote(code="mlx_max_kv_size_ignored", message=_("mlx_lm/models/{name}.py builds its "
            "own caches (make_cache), so mlx_lm ignores --max-kv-size for this model.").format(name=file.name)))
    else:
        behaviour = "rotating"
        notes.append(PlanNote(code="mlx_rotating", message=_("--max-kv-size {max_kv_size}: each layer keeps "
                                                             "the first {rotating_keep_tokens}\u00a0tokens and "
                                                             "the most recent ones; older context is "
                                                             "dropped, so answers no longer see the whole "
                                                             "conversation.").format(
                                                             max_kv_size=settings.max_kv_size,
                                                             rotating_keep_tokens=ROTATING_KEEP_TOKENS)))
    if arch.layers_of(LayerKind.SLIDING) and not file.keeps_windows:
        notes.append(PlanNote(code="mlx_window_not_kept", message=_("mlx_lm/models/{name}.py does not keep "
            "the model's sliding window as a window: those layers hold every token (or --max-kv-size "
            "tokens) like the others.").format(name=file.name)))

    quantized = settings.kv_bits is not None and quantization_reached(chunks, settings.quantized_kv_start)
    if settings.kv_bits is not None and not quantized:
        notes.append(PlanNote(code="mlx_not_yet_quantized", message=_("The cache stays unquantized until it "
            "holds quantized_kv_start ({quantized_kv_start}) tokens.").format(
            quantized_kv_start=settings.quantized_kv_start)))

    growth: dict[tuple[CacheClass, int | None, int], CacheGrowth] = {}
    layer_caches: list[MlxLayerCache] = []
    for index, layer in enumerate(arch.layers):
        if layer.kind not in (*_ATTENTION, LayerKind.RECURRENT):
            continue  # no cache (nemotron_h's MLP-only blocks)
        built, max_size, keep = _built_cache(layer, file, settings.max_kv_size)
        cache_class = built
        if quantized and built is CacheClass.KV:
            cache_class = CacheClass.QUANTIZED
        elif quantized and built is CacheClass.ROTATING and refusal is None:
            refusal = _("mlx_lm stops with NotImplementedError (RotatingKVCache Quantization NYI) once the cache "
                        "reaches --quantized-kv-start {start}: layer {index} keeps a RotatingKVCache (--max-kv-size, "
                        "or the model's sliding window), which cannot be quantized.").format(
                            start=settings.quantized_kv_start, index=index)
        bits = settings.kv_bits if cache_class is CacheClass.QUANTIZED else None
        k_tok = v_tok = state = 0
        if layer.kind in _ATTENTION:
            k_tok, v_tok = _k_v_per_token(layer, file, kv_dtype_bytes, bits, settings.kv_group_size)
        if layer.kind is LayerKind.RECURRENT or layer.recurrent_state_elements:  # Falcon-H1: attention + state
            state = _state_bytes(layer, file, kv_dtype_bytes)
        tokens = peak = 0
        if k_tok + v_tok:
            key = (built, max_size, keep)
            if key not in growth:
                growth[key] = (rotating_cache_growth(chunks, max_size, keep)
                               if built is CacheClass.ROTATING and max_size is not None  # _built_cache gives one
                               else kv_cache_growth(chunks))
            tokens, peak = growth[key].final_tokens, growth[key].peak_tokens
        per_token = k_tok + v_tok
        layer_caches.append(MlxLayerCache(
            layer=index, cache_class=cache_class, tokens=tokens, peak_tokens=peak, max_size=max_size,
            keep=keep if built is CacheClass.ROTATING else None, k_bytes_per_token=k_tok, v_bytes_per_token=v_tok,
            state_bytes=state,
            bytes=per_token * tokens + state, peak_bytes=per_token * peak + state))
    if quantized and not file.reads_quantized_cache and refusal is None:
        refusal = _("mlx_lm/models/{name}.py cannot attend over a quantized cache (AttributeError: 'list' "
                    "object has no attribute 'swapaxes'): --kv-bits fails once the cache is quantized.").format(
                        name=file.name)

    caches = _allocations(layer_caches, n_sequences, settings, kv_dtype_bytes)
    kv_bytes = sum(c.bytes - c.state_bytes for c in layer_caches) * n_sequences
    recurrent_bytes = sum(c.state_bytes for c in layer_caches) * n_sequences
    components: list[MemoryComponent] = []
    if weights_bytes is not None:
        components.append(MemoryComponent(kind=ComponentKind.WEIGHTS, label=_("weights"), bytes=weights_bytes,
                                          exact=True, basis=_("as given")))
    components.append(MemoryComponent(kind=ComponentKind.KV_CACHE, label=ngettext(
        "KV cache, {n_sequences} sequence", "KV cache, {n_sequences} sequences", n_sequences).format(
        n_sequences=n_sequences),
                                      bytes=kv_bytes, exact=file.read,
                                      basis=_("mlx_lm/models/cache.py growth in 256-token steps")))
    if recurrent_bytes:
        components.append(MemoryComponent(
            kind=ComponentKind.RECURRENT_STATE, label=_("recurrent state"), bytes=recurrent_bytes, exact=file.read,
            basis=_("ArraysCache: conv state in the activation dtype, state in {value} "
                    "(mlx_lm/models/{name}.py)").format(
                    value='float32' if file.float32_state else _('the activation dtype'), name=file.name)))

    if wired_limit_mb is not None:
        working_set, basis = wired_limit_mb * MIB, _("iogpu.wired_limit_mb (Metal then reports exactly this limit)")
    elif working_set_bytes is not None:
        working_set, basis = working_set_bytes, _("as given (Metal's max_recommended_working_set_size)")
    else:
        working_set, basis = None, _("unknown: give Metal's recommended working set or the wired limit")
        notes.append(PlanNote(code="mlx_working_set_unknown", message=_("The GPU may use Metal's recommended working "
                              "set, not all of RAM (for example 107.52\u00a0GiB of a 128\u00a0GB Mac under macOS 26); "
                              "give it to check the fit.")))
    if machine is not None and not machine.unified_memory:
        notes.append(PlanNote(code="mlx_not_unified", message=_("MLX LM's Metal path runs on Apple silicon with "
                              "unified memory; this machine is not marked unified.")))
    if n_sequences > 1:
        notes.append(PlanNote(code="mlx_batch_padding", message=_("mlx_lm.server batches up to decode_concurrency "
                              "sequences in one BatchKVCache per layer, padded to the longest prompt: sequences of "
                              "different lengths each take the longest one's slots.")))
    notes.append(PlanNote(code="mlx_peak_not_modelled", message=_("Not counted: the activations of a prefill chunk "
                          "(attention over prefill_step_size tokens at a time), which mlx_lm.generate's 'Peak "
                          "memory' includes, and mlx_lm.server's cache of up to prompt_cache_size earlier prompts.")))
    if working_set is not None:
        used = sum(c.bytes for c in components)
        if used < working_set:
            components.append(MemoryComponent(kind=ComponentKind.FREE, label=_("left in the GPU working set"),
                                              bytes=working_set - used, exact=False, basis=basis))
        else:
            notes.append(PlanNote(code="mlx_over_working_set", message=_(
                "Weights and cache exceed the GPU working set: MLX will page or fail; raise the wired limit "
                "(macOS 15+) or shrink the cache.")))

    full = [c for c in layer_caches if c.tokens and c.max_size is None]
    return MlxLmPlan(
        engine=ENGINE_ID,
        kv_bytes_per_token=sum(c.k_bytes_per_token + c.v_bytes_per_token for c in layer_caches),
        kv_cache_bytes=kv_bytes,
        weights_bytes=weights_bytes,
        caches=caches,
        components=components,
        device_capacity_bytes=working_set,
        refusal=refusal,
        notes=notes,
        model_file=file.name,
        layer_caches=layer_caches,
        prompt_tokens=prompt_tokens,
        generated_tokens=generated_tokens,
        retained_tokens=retained,
        n_sequences=n_sequences,
        step_tokens=STEP_TOKENS,
        allocated_tokens=max((c.tokens for c in full), default=max((c.tokens for c in layer_caches), default=0)),
        peak_allocated_tokens=max((c.peak_tokens for c in layer_caches), default=0),
        max_kv_size_behaviour=behaviour,
        rotating_keep_tokens=ROTATING_KEEP_TOKENS if behaviour == "rotating" else None,
        kv_bits=settings.kv_bits,
        kv_group_size=settings.kv_group_size,
        quantized=quantized,
        working_set_bytes=working_set,
        working_set_basis=basis,
    )


_ALLOCATION_NAMES = {CacheClass.KV: "kv", CacheClass.QUANTIZED: "kv", CacheClass.ROTATING: "kv_swa",
                     CacheClass.ARRAYS: "recurrent", CacheClass.CACHE_LIST: "kv"}


def _allocations(layers: list[MlxLayerCache], n_sequences: int, settings: MlxLmSettings,
                 dtype_bytes: int) -> list[CacheAllocation]:
    """Layers with the same cache class and size, summed: the readout's table of buffers."""
    groups: dict[tuple[CacheClass, int], list[MlxLayerCache]] = {}
    for cache in layers:
        if cache.tokens:
            groups.setdefault((cache.cache_class, cache.tokens), []).append(cache)
    dtype = "float16/bfloat16" if dtype_bytes == 2 else "float32"
    allocations = []
    for (cache_class, tokens), members in groups.items():
        kind = (_("q{bits} (groups of {size})").format(bits=settings.kv_bits, size=settings.kv_group_size)
                if cache_class is CacheClass.QUANTIZED else dtype)
        allocations.append(CacheAllocation(
            name=_ALLOCATION_NAMES[cache_class], layers=len(members), cells=tokens, seqs=n_sequences, type_k=kind,
            type_v=kind, k_bytes=sum(c.k_bytes_per_token for c in members) * tokens * n_sequences,
            v_bytes=sum(c.v_bytes_per_token for c in members) * tokens * n_sequences))
    return allocations
