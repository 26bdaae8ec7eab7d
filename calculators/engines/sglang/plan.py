"""SGLang: the static memory pool (mem_fraction_static), KV token capacity and request limits as SGLang sets them.

Sources read (sgl-project/sglang, through the code index; the index did not report commits for these
versions, so the function names are the reference):
- python/sglang/srt/server_args.py `_handle_gpu_memory_settings` (version with piecewise CUDA graphs and
  `language_only`, 2026): chunked_prefill_size and cuda_graph_max_bs by GPU memory, then
  mem_fraction_static = (gpu_mem - reserved_mem) / gpu_mem with reserved_mem in MiB. Older releases used
  other rules (e.g. 0.88 on one GPU in early 2025, visible in sgl-project/sglang PR #4760's log).
- python/sglang/srt/model_executor/pool_configurator.py: `profile_available_bytes` (rest = free after
  loading - free before loading x (1 - mem_fraction_static)), `DefaultPoolConfigurator` cell size (MHA:
  kv_heads x (head_dim + v_head_dim) x layers x bytes; MLA: (kv_lora_rank + qk_rope_head_dim) x layers x
  bytes), `HybridSWAPoolConfigurator` (full + swa_full_tokens_ratio x sliding, page-aligned).
- python/sglang/srt/model_executor/model_runner_kv_cache_mixin.py: --max-total-tokens cap, page alignment,
  max_running_requests = min(clamp(int(tokens / context_len x 512), 2048, 4096), tokens // 2).
- python/sglang/srt/mem_cache/memory_pool.py: each layer's K and V buffers hold (size + page_size) tokens
  (the padded page 0); the log line "KV Cache is allocated. #tokens: N, K size: X GB, V size: Y GB" divides
  by GB = 1024**3.

What the CUDA context and weight loading leave free before the pool is built is measured by SGLang at run
time; servewise estimates it (`SglangOverheads`) and marks it `exact=False`.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from calculators.engines.vllm.distributed_utils import pipeline_stage_layer_counts
from calculators.errors import ServewiseInputError
from calculators.hardware.machine import Machine
from calculators.memory.plan import CacheAllocation, ComponentKind, MemoryComponent, MemoryPlan, PlanNote
from calculators.model.architecture import LayerKind, ModelArchitecture
from calculators.units import GIB, MIB

ENGINE_ID = "sglang"

_KV_DTYPE_BYTES: dict[str, int] = {"bfloat16": 2, "bf16": 2, "float16": 2, "fp8_e4m3": 1, "fp8_e5m2": 1}
_MODEL_DTYPE_BYTES: dict[str, int] = {"auto": 2, "half": 2, "float16": 2, "bfloat16": 2, "float": 4, "float32": 4}


class SglangSettings(BaseModel):
    """SGLang launch settings that change memory, named as `sglang.launch_server` names them (snake_case)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    mem_fraction_static: float | None = Field(default=None, gt=0, lt=1)  # None = server_args.py rule
    max_running_requests: int | None = Field(default=None, gt=0)
    max_total_tokens: int | None = Field(default=None, gt=0)
    chunked_prefill_size: int | None = None  # None = by GPU memory; -1 disables chunking
    max_prefill_tokens: int = 16384  # server_args.py ServerArgs.max_prefill_tokens
    context_length: int | None = Field(default=None, gt=0)  # None = the model's
    tp_size: int = Field(default=1, ge=1)
    dp_size: int = Field(default=1, ge=1)
    pp_size: int = Field(default=1, ge=1)
    page_size: int = Field(default=1, ge=1)  # ServerArgs default; some attention backends raise it
    kv_cache_dtype: str = "auto"  # auto = model dtype
    dtype: str = "auto"
    cuda_graph_max_bs: int | None = Field(default=None, gt=0)  # None = by GPU memory
    enable_dp_attention: bool = False
    speculative_algorithm: str | None = None
    swa_full_tokens_ratio: float = Field(default=0.8, gt=0)  # hybrid sliding-window pools
    disable_radix_cache: bool = False
    enable_metrics: bool = False
    api_key: str | None = None
    host: str = "127.0.0.1"  # server_args.py ServerArgs.host (unchanged since sgl-project/sglang@469c63e5)
    port: int = 30000  # ServerArgs.port


class SglangOverheads(BaseModel):
    """Memory SGLang measures at run time that servewise estimates (bytes per GPU)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    runtime_context_bytes: int = Field(ge=0, description="held before weights load: CUDA context, NCCL")
    basis: str


# sgl-project/sglang PR #4760 (https://github.com/sgl-project/sglang/pull/4760), Llama-3.1-8B on one 80 GB
# GPU: "Load weight end ... avail mem=63.48 GB, mem usage=15.11 GB", i.e. 78.59 GiB free before loading on
# a card torch sees as ~79.2 GiB: about 0.6 GiB goes to the CUDA context before the weights.
# sgl-project/sglang PR #11716 (https://github.com/sgl-project/sglang/pull/11716), TP8:
# "Init torch distributed ends. mem usage=1.77 GB" to "2.01 GB" per rank (NCCL buffers on top of the context).
DEFAULT_SGLANG_OVERHEADS = SglangOverheads(
    runtime_context_bytes=int(0.6 * GIB),
    basis="free memory before loading in sgl-project/sglang PR #4760's log (78.59 GiB on an 80 GB GPU)",
)
_MULTI_GPU_OVERHEADS = SglangOverheads(
    runtime_context_bytes=int(2.01 * GIB),
    basis="'Init torch distributed ends. mem usage=2.01 GB' at TP8 in sgl-project/sglang PR #11716",
)


def default_sglang_overheads(tp_size: int) -> SglangOverheads:
    """Estimated memory SGLang finds taken before loading weights (bytes per GPU), from public logs."""
    return DEFAULT_SGLANG_OVERHEADS if tp_size == 1 else _MULTI_GPU_OVERHEADS


class SglangPlan(MemoryPlan):
    """SGLang's plan per GPU with the figures SGLang logs at start-up."""

    mem_fraction_static: float
    mem_fraction_static_is_auto: bool
    chunked_prefill_size: int
    cuda_graph_max_bs: int
    max_total_num_tokens: int
    max_running_requests: int
    context_len: int
    page_size: int
    cell_size_bytes: int = Field(description="bytes per token across this rank's KV layers")
    k_bytes: int = Field(description="the K size SGLang prints (bytes; printed in GB = 2^30)")
    v_bytes: int = Field(description="the V size SGLang prints; MLA prints one 'KV size' = k_bytes")
    swa_max_total_num_tokens: int | None = None
    rest_memory_bytes: int = Field(description="pool budget: free after loading - free before x (1 - fraction)")


def auto_chunk_and_graph_sizes(gpu_mem_mib: float, tp_size: int) -> tuple[int, int]:
    """(chunked_prefill_size, cuda_graph_max_bs) SGLang picks for a CUDA GPU of `gpu_mem_mib` MiB."""
    if gpu_mem_mib < 20 * 1024:
        return 2048, 8
    if gpu_mem_mib < 35 * 1024:
        return 2048, 24 if tp_size < 4 else 80
    if gpu_mem_mib < 60 * 1024:
        return 4096, 32 if tp_size < 4 else 160
    if gpu_mem_mib < 160 * 1024:  # the <90 GiB (H100, A100) and <160 GiB (H20, H200) rows are equal
        return 8192, 256 if tp_size < 4 else 512
    return 16384, 512


def auto_mem_fraction_static(gpu_mem_mib: float, settings: SglangSettings, chunked_prefill_size: int,
                             cuda_graph_max_bs: int) -> float:
    """SGLang's automatic mem_fraction_static: (gpu_mem - reserved) / gpu_mem, reserved in MiB, 3 decimals."""
    reserved = 512.0
    prefill = chunked_prefill_size if chunked_prefill_size > 0 else settings.max_prefill_tokens
    reserved += max(prefill, 2048) * 1.5
    reserved += cuda_graph_max_bs * 2
    reserved += settings.tp_size * settings.pp_size / 8 * 1024
    if settings.enable_dp_attention:
        reserved += cuda_graph_max_bs * settings.dp_size * 3
        if cuda_graph_max_bs > 300:
            reserved += cuda_graph_max_bs * settings.dp_size * 1.5
    if gpu_mem_mib > 60 * 1024:
        reserved = max(reserved, 10 * 1024)
    if settings.speculative_algorithm is not None:
        reserved += 6 * 1024 if settings.speculative_algorithm == "STANDALONE" else (
            0 if settings.speculative_algorithm == "NGRAM" else 2 * 1024)
    return round((gpu_mem_mib - reserved) / gpu_mem_mib, 3)


def max_running_requests_for(tokens: int, context_len: int, requested: int | None, dp_size: int) -> int:
    """SGLang's request-slot count from the token pool: clamp(tokens / context x 512, 2048, 4096), <= tokens // 2."""
    estimated = max(min(int(tokens / context_len * 512), 4096), 2048)
    if requested is not None:
        return min(requested // dp_size, estimated)
    return min(estimated, tokens // 2)


def _dtype_bytes(settings: SglangSettings) -> tuple[str, int]:
    if settings.dtype not in _MODEL_DTYPE_BYTES:
        raise ServewiseInputError(f"unknown SGLang --dtype '{settings.dtype}'; use one of {sorted(_MODEL_DTYPE_BYTES)}")
    if settings.kv_cache_dtype == "auto":
        size = _MODEL_DTYPE_BYTES[settings.dtype]
        return ("float32" if size == 4 else "bfloat16"), size
    if settings.kv_cache_dtype not in _KV_DTYPE_BYTES:
        known = sorted([*_KV_DTYPE_BYTES, "auto"])
        raise ServewiseInputError(f"unknown SGLang --kv-cache-dtype '{settings.kv_cache_dtype}'; use one of {known}")
    return settings.kv_cache_dtype, _KV_DTYPE_BYTES[settings.kv_cache_dtype]


def plan_sglang(
    arch: ModelArchitecture,
    settings: SglangSettings,
    machine: Machine,
    weights_bytes: int | None,
    *,
    overheads: SglangOverheads | None = None,
    free_before_load_bytes: int | None = None,
) -> SglangPlan:
    """SGLang's memory plan per GPU (bytes, tokens); `weights_bytes` is the whole model as loaded on GPUs.

    `free_before_load_bytes` is what SGLang measures as free before loading (its "total_gpu_memory");
    when not given it is estimated as device memory minus the runtime context (exact=False).
    """
    tp, pp = settings.tp_size, settings.pp_size
    overheads = overheads or default_sglang_overheads(tp * pp)
    dtype_name, dtype_bytes = _dtype_bytes(settings)
    notes: list[PlanNote] = []
    refusals: list[str] = []
    total = machine.device_memory_bytes
    gpu_mem_mib = total / MIB

    chunk_auto, graph_auto = auto_chunk_and_graph_sizes(gpu_mem_mib, tp)
    chunked_prefill_size = settings.chunked_prefill_size if settings.chunked_prefill_size is not None else chunk_auto
    cuda_graph_max_bs = settings.cuda_graph_max_bs or graph_auto
    fraction_is_auto = settings.mem_fraction_static is None
    fraction = settings.mem_fraction_static if not fraction_is_auto else auto_mem_fraction_static(
        gpu_mem_mib, settings, chunked_prefill_size, cuda_graph_max_bs)
    if fraction_is_auto and arch.family in ("llava", "qwen2_vl", "qwen2_5_vl", "mllama", "gemma3"):
        notes.append(PlanNote(code="sglang_vlm_fraction", message="SGLang lowers the automatic fraction further "
                              "for multimodal models (adjust_mem_fraction_for_vlm); not modelled."))

    context_len = settings.context_length or arch.max_context_tokens
    if context_len is None:
        raise ServewiseInputError("the model's maximum context is unknown: give context_length explicitly")

    # --- this rank's KV layers and cell size ---
    stage_layers = arch.layers[: pipeline_stage_layer_counts(arch.n_layers, pp)[0]]
    mla = [layer for layer in stage_layers if layer.kind is LayerKind.MLA]
    full = [layer for layer in stage_layers if layer.kind is LayerKind.FULL]
    sliding = [layer for layer in stage_layers if layer.kind is LayerKind.SLIDING]
    if any(layer.kind is LayerKind.RECURRENT for layer in arch.layers):
        notes.append(PlanNote(code="sglang_mamba_pool_unmodelled", message="SGLang splits the budget between a "
                              "Mamba state pool and the KV pool (mamba_full_memory_ratio); servewise plans the "
                              "KV layers as if they had the whole budget."))
    if arch.n_heads % tp:
        notes.append(PlanNote(code="sglang_tp_heads", message=f"{arch.n_heads} attention heads do not split "
                              f"evenly over tp_size {tp}; SGLang is expected to refuse this model at load."))

    def heads(layer) -> int:
        return max(1, layer.n_kv_heads // tp)

    if mla:
        per_layer_k = [layer.kv_lora_rank + layer.qk_rope_head_dim for layer in mla]
        per_layer_v = [0] * len(mla)
        layers_for_pool = mla
    else:
        layers_for_pool = full + sliding
        per_layer_k = [heads(layer) * layer.head_dim_k for layer in layers_for_pool]
        per_layer_v = [heads(layer) * layer.head_dim_v for layer in layers_for_pool]
    hybrid_swa = bool(full) and bool(sliding) and not mla
    if mla and settings.page_size == 1:
        notes.append(PlanNote(code="sglang_mla_page_size", message="MLA attention backends such as flashmla, "
                              "cutlass_mla and trtllm_mla run with larger pages (64 or 128 tokens); pass the "
                              "page_size the server logs to match its pool exactly."))

    full_cell = sum(heads(layer) * (layer.head_dim_k + layer.head_dim_v) for layer in full) * dtype_bytes
    swa_cell = sum(heads(layer) * (layer.head_dim_k + layer.head_dim_v) for layer in sliding) * dtype_bytes
    cell_size = (sum(per_layer_k) + sum(per_layer_v)) * dtype_bytes

    # --- the budget ---
    if weights_bytes is None:
        raise ServewiseInputError("the model's weight bytes are unknown: SGLang's pool is what remains after them")
    weights_per_rank = weights_bytes // (tp * pp)
    free_before = free_before_load_bytes if free_before_load_bytes is not None else (
        total - overheads.runtime_context_bytes)
    free_after = free_before - weights_per_rank
    rest_bytes = int((free_after / GIB - free_before / GIB * (1 - fraction)) * GIB)
    page = settings.page_size

    swa_tokens: int | None = None
    if hybrid_swa:
        ratio = settings.swa_full_tokens_ratio
        per_full_token = full_cell + ratio * swa_cell
        tokens = (int(rest_bytes / per_full_token) // page) * page if rest_bytes > 0 else 0
        notes.append(PlanNote(code="sglang_hybrid_swa", message="Sliding-window layers get their own pool of "
                              f"swa_full_tokens_ratio ({ratio}) x the full-attention tokens (HybridSWAPoolConfigurator)"
                              "; SGLang does this for the architectures it marks hybrid-SWA (Gemma 2/3, gpt-oss, ...)."))
    else:
        tokens = max(0, rest_bytes // cell_size) if cell_size else 0
    if settings.max_total_tokens is not None:
        if settings.max_total_tokens > tokens:
            notes.append(PlanNote(code="sglang_max_total_tokens_too_large", message=f"max_total_tokens="
                                  f"{settings.max_total_tokens} is larger than the profiled value {tokens}; "
                                  "SGLang uses the profiled value."))
        tokens = min(tokens, settings.max_total_tokens)
    tokens = tokens // page * page
    if hybrid_swa:
        swa_tokens = int(tokens * settings.swa_full_tokens_ratio) // page * page
    if tokens <= 0:
        refusals.append("Not enough memory. Please try to increase --mem-fraction-static.")

    running = max_running_requests_for(tokens, context_len, settings.max_running_requests, settings.dp_size)

    # --- the buffers SGLang allocates (page 0 is padding: size + page_size rows per layer) ---
    if hybrid_swa:
        k_bytes = sum(heads(layer) * layer.head_dim_k for layer in full) * dtype_bytes * (tokens + page)
        k_bytes += sum(heads(layer) * layer.head_dim_k for layer in sliding) * dtype_bytes * (swa_tokens + page)
        v_bytes = sum(heads(layer) * layer.head_dim_v for layer in full) * dtype_bytes * (tokens + page)
        v_bytes += sum(heads(layer) * layer.head_dim_v for layer in sliding) * dtype_bytes * (swa_tokens + page)
    else:
        rows = tokens + page if tokens > 0 else 0
        k_bytes = sum(per_layer_k) * dtype_bytes * rows
        v_bytes = sum(per_layer_v) * dtype_bytes * rows
    kv_bytes = k_bytes + v_bytes

    estimate = free_before_load_bytes is None
    components = [
        MemoryComponent(kind=ComponentKind.RUNTIME, label="CUDA context before loading" + (" (estimate)" if estimate
                        else ""), bytes=total - free_before, exact=not estimate,
                        basis=overheads.basis if estimate else "as given"),
        MemoryComponent(kind=ComponentKind.WEIGHTS, label="weights on this GPU", bytes=weights_per_rank,
                        exact=tp * pp == 1, basis="as given" if tp * pp == 1 else f"model weights / {tp * pp} ranks"),
        MemoryComponent(kind=ComponentKind.KV_CACHE, label=f"KV pool: {tokens} tokens", bytes=kv_bytes, exact=True,
                        basis="memory_pool.py buffers of (size + page_size) rows per layer"),
        MemoryComponent(kind=ComponentKind.ACTIVATIONS, label="left for activations and CUDA graphs "
                        "(1 - mem_fraction_static of the free memory)", bytes=max(0, total - (total - free_before)
                        - weights_per_rank - kv_bytes), exact=False,
                        basis="what the static pool leaves; SGLang does not reserve it explicitly"),
    ]

    caches = []
    if layers_for_pool:
        if hybrid_swa:
            caches.append(CacheAllocation(name="kv", layers=len(full), cells=tokens, seqs=running, type_k=dtype_name,
                                          type_v=dtype_name,
                                          k_bytes=sum(heads(x) * x.head_dim_k for x in full) * dtype_bytes * (tokens + page),
                                          v_bytes=sum(heads(x) * x.head_dim_v for x in full) * dtype_bytes * (tokens + page)))
            caches.append(CacheAllocation(name="kv_swa", layers=len(sliding), cells=swa_tokens, seqs=running,
                                          type_k=dtype_name, type_v=dtype_name,
                                          k_bytes=sum(heads(x) * x.head_dim_k for x in sliding) * dtype_bytes * (swa_tokens + page),
                                          v_bytes=sum(heads(x) * x.head_dim_v for x in sliding) * dtype_bytes * (swa_tokens + page)))
        else:
            caches.append(CacheAllocation(name="kv_mla" if mla else "kv", layers=len(layers_for_pool), cells=tokens,
                                          seqs=running, type_k=dtype_name, type_v="-" if mla else dtype_name,
                                          k_bytes=k_bytes, v_bytes=v_bytes))

    return SglangPlan(
        engine=ENGINE_ID,
        kv_bytes_per_token=cell_size,
        kv_cache_bytes=kv_bytes,
        weights_bytes=weights_per_rank,
        caches=caches,
        components=components,
        device_capacity_bytes=total,
        refusal=" ".join(refusals) or None,
        notes=notes,
        mem_fraction_static=fraction,
        mem_fraction_static_is_auto=fraction_is_auto,
        chunked_prefill_size=chunked_prefill_size,
        cuda_graph_max_bs=cuda_graph_max_bs,
        max_total_num_tokens=tokens,
        max_running_requests=running,
        context_len=context_len,
        page_size=page,
        cell_size_bytes=cell_size,
        k_bytes=k_bytes,
        v_bytes=v_bytes,
        swa_max_total_num_tokens=swa_tokens,
        rest_memory_bytes=rest_bytes,
    )

