"""vLLM (v1 engine): the KV-cache budget, block pool and start-up checks as vLLM computes them.

Sources read (vllm-project/vllm, through the code index; commit per file):
- vllm/v1/core/kv_cache_utils.py @ 001cabc1be16 - grouping, num_blocks, "Maximum concurrency", the
  max-seq-len check and its estimated maximum model length, auto-fit (-1). Newer releases log
  "GPU KV cache size" as int(max_concurrency x max_model_len) (group-aware; quoted from vLLM main in
  https://github.com/vllm-project/vllm/issues/51041); at 001cabc1 it was num_blocks // groups x block_size.
  Both agree for single-group models when max_model_len is a multiple of the block size; servewise
  follows the newer rule.
- vllm/config/vllm.py (v0.27+, as quoted in public source excerpts): sliding-window layers reserve
  window - 1 + max_in_flight_tokens, where max_in_flight_tokens = concurrent batches (2 with async
  scheduling, else the pipeline size) x max_num_batched_tokens.
- vllm/v1/kv_cache_interface.py @ 001cabc1be16 - page sizes (full, MLA, sliding window) and the per-layer
  maximum memory of one request.
- vllm/v1/worker/gpu_worker.py @ 35d5cda123ec - requested memory = total x gpu_memory_utilization;
  available KV = requested - (weights + torch peak increase + non-torch increase); kv_cache_memory_bytes
  replaces that figure exactly.
- vllm/config/model.py @ 18ec6629253 - KV heads per rank max(1, kv_heads // tp); MLA is one latent "head";
  the "attention heads must be divisible by tensor parallel size" check.
- vllm/distributed/utils.py @ 5a6541db9bf - how pipeline stages split the layers.
- vllm/engine/arg_utils.py @ 99d7eb5d6a5 - max_num_seqs / max_num_batched_tokens defaults by GPU.
- vllm/platforms/cuda.py (several public copies) - MLA backends force block size 64 (FlashMLA) or 128
  (CUTLASS MLA) when the user leaves --block-size unset.
- vllm/config/cache.py - block size 16 (DEFAULT_BLOCK_SIZE) and gpu_memory_utilization 0.92, as rendered
  from the source at https://docs.vllm.ai/en/stable/api/vllm/config/cache/ (0.9 before ~v0.25).

The activation peak and non-torch memory come from vLLM's own profile run and cannot be derived from first
principles: they are estimates (`VllmOverheads`) and are marked `exact=False`. Everything computed from the
resulting budget (blocks, tokens, concurrency, refusal) follows vLLM's integer arithmetic exactly.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from math import ceil
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from calculators.errors import ServewiseInputError
from calculators.hardware.machine import Machine
from calculators.memory.plan import CacheAllocation, ComponentKind, MemoryComponent, MemoryPlan, PlanNote
from calculators.model.architecture import LayerGeometry, LayerKind, ModelArchitecture
from calculators.units import GIB

ENGINE_ID = "vllm"

# vllm/config/cache.py: CacheConfig.DEFAULT_BLOCK_SIZE
DEFAULT_BLOCK_SIZE_TOKENS = 16

# Element size of each --kv-cache-dtype vLLM accepts and servewise models (vllm/config/cache.py CacheDType;
# fp8 variants store one byte per element, vllm/v1/kv_cache_interface.py uses the dtype's element size).
_KV_DTYPE_BYTES: dict[str, int] = {
    "bfloat16": 2,
    "float16": 2,
    "fp8": 1,
    "fp8_e4m3": 1,
    "fp8_e5m2": 1,
    "fp8_inc": 1,
    "int8_per_token_head": 1,
    "fp8_per_token_head": 1,
}
# --dtype values (model dtype); "auto" runs 16-bit (vLLM casts float32 checkpoints down by default).
_MODEL_DTYPE_BYTES: dict[str, int] = {
    "auto": 2,
    "half": 2,
    "float16": 2,
    "bfloat16": 2,
    "float": 4,
    "float32": 4,
}
# fp8_ds_mla stores 656 bytes per token per layer (vllm/v1/kv_cache_interface.py MLAAttentionSpec).
_FP8_DS_MLA_BYTES_PER_TOKEN = 656


class VllmSettings(BaseModel):
    """vLLM launch settings that change memory, named as `vllm serve` names them (snake_case)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    # None = the model's max_position_embeddings; "auto" (or -1) = the largest length that fits
    # (vllm/v1/core/kv_cache_utils.py _auto_fit_max_model_len).
    max_model_len: int | Literal["auto"] | None = None
    # vllm/config/cache.py (docs.vllm.ai stable source): Field(default=0.92, gt=0, le=1)
    gpu_memory_utilization: float = Field(default=0.92, gt=0, le=1)
    # None = by GPU, vllm/engine/arg_utils.py _set_default_args @ 99d7eb5d6a5
    max_num_seqs: int | None = Field(default=None, gt=0)
    max_num_batched_tokens: int | None = Field(default=None, gt=0)
    block_size: int | None = Field(default=None, gt=0)  # None = 16 (CacheConfig.DEFAULT_BLOCK_SIZE)
    kv_cache_dtype: str = "auto"  # vllm/config/cache.py: "auto" = model dtype
    dtype: str = "auto"
    tensor_parallel_size: int = Field(default=1, ge=1)
    pipeline_parallel_size: int = Field(default=1, ge=1)
    data_parallel_size: int = Field(default=1, ge=1)
    kv_cache_memory_bytes: int | None = Field(default=None, gt=0)  # per GPU; ignores gpu_memory_utilization
    enable_prefix_caching: bool | None = None
    enable_chunked_prefill: bool | None = None  # v1 turns it on for generative models (arg_utils.py)
    disable_hybrid_kv_cache_manager: bool = False
    async_scheduling: bool = True  # two batches in flight (vllm/config/vllm.py max_concurrent_batches)
    cpu_offload_gb: float = Field(default=0, ge=0)
    quantization: str | None = None
    api_key: str | None = None
    host: str | None = None  # vllm/entrypoints/openai/cli_args.py FrontendArgs: None = all interfaces
    port: int = 8000  # FrontendArgs.port


class VllmOverheads(BaseModel):
    """Per-GPU memory vLLM measures in its profile run; servewise can only estimate these (bytes)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    activation_peak_bytes: int = Field(ge=0)
    non_torch_bytes: int = Field(ge=0)
    # Newer vLLM also subtracts its CUDA-graph estimate when VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS is on
    # (gpu_worker.py: requested - non_kv_cache_memory - cudagraph_memory_estimate_applied); 0 = not counted,
    # as in the version read above. llm-d measured graphs at -0.88 to +1.03 GiB on H100 (vLLM 0.11).
    cudagraph_bytes: int = 0
    basis: str


# Measured by llm-d (vLLM 0.11, H100 79.18 GiB, max_num_batched_tokens 8192, block 128):
# llm-d/llm-d-benchmark:config_explorer/empirical-vllm-memory-results.md @ 4f4d44943c39.
# Dense text models peaked at 4.76-5.64 GiB, the MoE gpt-oss at 7.38 GiB, a vision model at 2.12 GiB;
# non-torch memory was 0.13-0.14 GiB at TP1 and 0.54-0.55 GiB at TP2. servewise takes the largest
# figure of each class, so the KV budget errs small rather than promising memory vLLM will not find.
_LLMD_SOURCE = "llm-d/llm-d-benchmark:config_explorer/empirical-vllm-memory-results.md@4f4d44943c39"
_ACTIVATION_DENSE_BYTES = int(5.64 * GIB)
_ACTIVATION_MOE_BYTES = int(7.38 * GIB)
_NON_TORCH_TP1_BYTES = int(0.14 * GIB)
_NON_TORCH_TP_MULTI_BYTES = int(0.55 * GIB)


def default_vllm_overheads(arch: ModelArchitecture, tensor_parallel_size: int) -> VllmOverheads:
    """Estimated activation peak and non-torch bytes per GPU from public vLLM measurements (see source)."""
    activation = _ACTIVATION_MOE_BYTES if arch.moe is not None else _ACTIVATION_DENSE_BYTES
    non_torch = _NON_TORCH_TP1_BYTES if tensor_parallel_size == 1 else _NON_TORCH_TP_MULTI_BYTES
    kind = "MoE" if arch.moe is not None else "dense"
    return VllmOverheads(
        activation_peak_bytes=activation,
        non_torch_bytes=non_torch,
        basis=f"largest {kind} figure measured by llm-d on H100 with vLLM 0.11 ({_LLMD_SOURCE}); "
        "the real peak grows with max_num_batched_tokens",
    )


class VllmCacheGroup(BaseModel):
    """One KV-cache group: layers that share one block table (vLLM's KVCacheGroupSpec)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: Literal["full", "sliding", "mla"]
    layers: int = Field(description="layers of this group on the reporting rank (incl. padding slots)")
    block_size: int
    page_bytes: int = Field(description="bytes of one block of one layer")
    sliding_window_tokens: int | None = None


class VllmPlan(MemoryPlan):
    """vLLM's plan per GPU with the figures vLLM logs at start-up."""

    requested_memory_bytes: int | None
    available_kv_cache_bytes: int = Field(description="the 'Available KV cache memory' figure (may be <= 0)")
    num_gpu_blocks: int
    kv_tokens: int = Field(description="'GPU KV cache size: N tokens' = int(max_concurrency x max_model_len)")
    max_concurrency: float = Field(description="'Maximum concurrency for L tokens per request: C x'")
    max_model_len: int
    estimated_max_model_len: int | None = Field(description="vLLM's own estimate when it refuses; else None")
    block_size: int
    kv_cache_dtype: str
    kv_heads_per_rank: int
    tensor_parallel_size: int
    pipeline_parallel_size: int
    layers_per_stage: list[int]
    max_num_seqs: int
    max_num_batched_tokens: int
    max_in_flight_tokens: int
    kv_cache_groups: list[VllmCacheGroup]


# ---------------------------------------------------------------------------------------------------
# Per-layer KV specs (vllm/v1/kv_cache_interface.py)
# ---------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Spec:
    """A layer's KV spec; equality follows vLLM's (same kind, shape, dtype, window, block size)."""

    kind: Literal["full", "sliding", "mla"]
    block_size: int
    kv_heads: int
    head_size_k: int
    head_size_v: int
    dtype_bytes: int
    sliding_window: int | None = None
    fixed_bytes_per_token: int | None = None  # fp8_ds_mla

    @property
    def page_bytes(self) -> int:
        """Bytes of one block of this layer (real page size; vLLM adds no padding for attention layers)."""
        if self.fixed_bytes_per_token is not None:
            return self.block_size * self.fixed_bytes_per_token
        if self.kind == "mla":
            return self.block_size * self.kv_heads * self.head_size_k * self.dtype_bytes
        return self.block_size * self.kv_heads * (self.head_size_k + self.head_size_v) * self.dtype_bytes

    def max_memory_usage_bytes(self, max_model_len: int, in_flight_tokens: int) -> int:
        """Bytes one request of max_model_len tokens can occupy in this layer (vLLM's max_memory_usage_bytes)."""
        if self.kind == "sliding":
            assert self.sliding_window is not None
            tokens = min(self.sliding_window - 1 + in_flight_tokens, max_model_len)
            return (ceil(tokens / self.block_size) + 1) * self.page_bytes
        return ceil(max_model_len / self.block_size) * self.page_bytes


def _layer_spec(
    layer: LayerGeometry, tp: int, block_size: int, dtype_bytes: int, kv_cache_dtype: str, hybrid_manager: bool
) -> _Spec | None:
    """The spec vLLM gives one layer on one tensor-parallel rank (None: the layer has no KV cache)."""
    if layer.kind is LayerKind.RECURRENT:
        return None
    if layer.kind is LayerKind.MLA:
        fixed = _FP8_DS_MLA_BYTES_PER_TOKEN if kv_cache_dtype == "fp8_ds_mla" else None
        latent = layer.kv_lora_rank + layer.qk_rope_head_dim  # not split across ranks
        return _Spec("mla", block_size, 1, latent, 0, dtype_bytes, fixed_bytes_per_token=fixed)
    kv_heads = max(1, layer.n_kv_heads // tp)  # replicated when tp exceeds the KV heads
    if layer.kind is LayerKind.SLIDING and layer.sliding_window_tokens and hybrid_manager:
        return _Spec("sliding", block_size, kv_heads, layer.head_dim_k, layer.head_dim_v, dtype_bytes,
                     sliding_window=layer.sliding_window_tokens)
    return _Spec("full", block_size, kv_heads, layer.head_dim_k, layer.head_dim_v, dtype_bytes)


def pipeline_stage_layer_counts(n_layers: int, pipeline_parallel_size: int) -> list[int]:
    """Layers per pipeline stage as vLLM splits them: extra layers go to the stages before the last."""
    counts = [n_layers // pipeline_parallel_size] * pipeline_parallel_size
    for i in range(2, n_layers % pipeline_parallel_size + 2):
        counts[-i] += 1
    return counts


# ---------------------------------------------------------------------------------------------------
# Grouping (vllm/v1/core/kv_cache_utils.py get_kv_cache_groups)
# ---------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Group:
    spec: _Spec | None  # None for the "uniform type" group, whose layers keep their own specs
    layers: tuple[int, ...]  # global layer indices
    layer_specs: tuple[_Spec, ...] = ()  # uniform-type group only

    @property
    def is_uniform_type(self) -> bool:
        return self.spec is None

    @property
    def block_size(self) -> int:
        return self.layer_specs[0].block_size if self.is_uniform_type else self.spec.block_size

    def page_bytes(self) -> int:
        """Page size of the group (uniform type: the sum over its layers)."""
        if self.is_uniform_type:
            return sum(s.page_bytes for s in self.layer_specs)
        return self.spec.page_bytes

    def max_memory_usage_bytes(self, max_model_len: int, in_flight: int) -> int:
        """A request's maximum bytes for this group's spec (uniform type: pages of the worst layer x page)."""
        if self.is_uniform_type:
            pages = max(ceil(s.max_memory_usage_bytes(max_model_len, in_flight) / s.page_bytes) for s in self.layer_specs)
            return pages * self.page_bytes()
        return self.spec.max_memory_usage_bytes(max_model_len, in_flight)


def _uniform_type(specs: list[_Spec]) -> bool:
    """vLLM's UniformTypeKVCacheSpecs.is_uniform_type: one block size and one attention type (and window)."""
    if len({s.block_size for s in specs}) > 1:
        return False
    first = specs[0]
    if first.kind in ("full", "mla"):
        return all(s.kind in ("full", "mla") for s in specs)
    return all(s.kind == "sliding" and s.sliding_window == first.sliding_window for s in specs)


def _kv_cache_groups(specs: dict[int, _Spec]) -> list[_Group]:
    """Split the KV layers into groups exactly as vLLM's get_kv_cache_groups does."""
    if not specs:
        return []
    values = list(specs.values())
    if all(v == values[0] for v in values):
        return [_Group(values[0], tuple(specs))]
    if _uniform_type(values):
        return [_Group(None, tuple(specs), tuple(values))]
    # unify_kv_cache_spec_page_size: grow the block size of layers whose page is smaller
    max_page = max(s.page_bytes for s in values)
    unified: dict[int, _Spec] = {}
    for index, spec in specs.items():
        if spec.page_bytes != max_page:
            if max_page % spec.page_bytes:
                raise ServewiseInputError(
                    "vLLM cannot unify this model's KV page sizes (not divisible); servewise cannot plan it"
                )
            spec = replace(spec, block_size=spec.block_size * (max_page // spec.page_bytes))
        unified[index] = spec
    same_type: dict[_Spec, list[int]] = {}
    for index, spec in unified.items():
        same_type.setdefault(spec, []).append(index)
    sizes = [len(layers) for layers in same_type.values()]
    group_size = min(sizes)
    if max(sizes) < group_size * 1.5:
        group_size = max(sizes)
    groups: list[_Group] = []
    for spec, layers in same_type.items():
        n_groups = ceil(len(layers) / group_size)
        groups.extend(_Group(spec, tuple(layers[i::n_groups])) for i in range(n_groups))
    return groups


def _project(groups: list[_Group], stage_layers: set[int]) -> list[_Group]:
    """The global groups restricted to one pipeline stage's layers (vLLM's _project_kv_cache_groups_to_worker)."""
    projected = []
    for group in groups:
        keep = tuple(i for i in group.layers if i in stage_layers)
        if group.is_uniform_type:
            by_layer = dict(zip(group.layers, group.layer_specs, strict=True))
            projected.append(_Group(None, keep, tuple(by_layer[i] for i in keep)))
        else:
            projected.append(_Group(group.spec, keep))
    return projected


def _group_size(groups: list[_Group]) -> int:
    return max(len(g.layers) for g in groups)


def _num_blocks(groups: list[_Group], available_bytes: int) -> int:
    """Blocks that fit in one worker's budget (vLLM's get_kv_cache_config_from_groups)."""
    if not groups:
        return 1  # attention-free: the block pool still keeps a null block
    if len(groups) == 1 and groups[0].is_uniform_type:
        return max(0, available_bytes // groups[0].page_bytes())
    return max(0, int(available_bytes // groups[0].page_bytes() // _group_size(groups)))


def _pool_bytes(groups: list[_Group], num_blocks: int) -> int:
    """Bytes of the KV tensors vLLM allocates on one worker for `num_blocks` blocks."""
    if not groups:
        return 0
    if len(groups) == 1 and groups[0].is_uniform_type:
        return groups[0].page_bytes() * num_blocks
    return _group_size(groups) * groups[0].page_bytes() * num_blocks


def _needed_bytes(groups: list[_Group], max_model_len: int, in_flight: int) -> int:
    """Bytes one request of max_model_len needs on one worker (vLLM's _max_memory_usage_bytes_from_groups)."""
    if not groups:
        return 0
    if len(groups) == 1 and groups[0].is_uniform_type:
        return sum(s.max_memory_usage_bytes(max_model_len, in_flight) for s in groups[0].layer_specs)
    page = groups[0].page_bytes()
    blocks = sum(ceil(g.max_memory_usage_bytes(max_model_len, in_flight) / page) for g in groups)
    return _group_size(groups) * page * blocks


def _estimate_max_model_len(groups: list[_Group], available_bytes: int, upper: int, in_flight: int) -> int:
    """Largest max_model_len whose request fits in `available_bytes` (vLLM's binary search); 0 if none."""
    if _needed_bytes(groups, 1, in_flight) > available_bytes:
        return 0
    left, right, result = 1, upper, 1
    while left <= right:
        mid = (left + right) // 2
        if _needed_bytes(groups, mid, in_flight) <= available_bytes:
            result, left = mid, mid + 1
        else:
            right = mid - 1
    return result


def _max_concurrency(groups: list[_Group], num_blocks: int, max_model_len: int, in_flight: int) -> float:
    """vLLM's get_max_concurrency_for_kv_cache_config: blocks in the pool / blocks one full request needs."""
    if not groups:
        return 0.0
    layers_per_group = _group_size(groups)
    per_request = layers_per_group * sum(g.max_memory_usage_bytes(max_model_len, in_flight) for g in groups)
    per_block = groups[0].page_bytes() * layers_per_group
    return num_blocks / ceil(per_request / per_block)


# ---------------------------------------------------------------------------------------------------
# Defaults (vllm/engine/arg_utils.py)
# ---------------------------------------------------------------------------------------------------


def default_batch_limits(machine: Machine) -> tuple[int, int]:
    """(max_num_seqs, max_num_batched_tokens) vLLM's API server picks when unset, from the GPU's memory.

    GPUs with at least 70 GiB that are not A100s get 1024 / 8192, all others 256 / 2048
    (vllm/engine/arg_utils.py _set_default_args, OPENAI_API_SERVER context).
    """
    is_a100 = machine.gpu_id is not None and "a100" in machine.gpu_id.lower()
    if machine.device_memory_bytes >= 70 * GIB and not is_a100:
        return 1024, 8192
    return 256, 2048


def _default_block_size(arch: ModelArchitecture, machine: Machine) -> int:
    """Tokens per block when --block-size is unset: 16, but MLA backends force their own on CUDA.

    vllm/platforms/cuda.py check_and_update_config: "Forcing kv cache block size to 64 for FlashMLA backend"
    (Hopper) and "... to 128 for CUTLASS_MLA backend" (Blackwell); other GPUs keep CacheConfig's 16.
    """
    if not arch.layers_of(LayerKind.MLA):
        return DEFAULT_BLOCK_SIZE_TOKENS
    gpu = (machine.gpu_id or "").lower()
    if gpu.startswith(("b200", "b300", "gb200", "gb300")):
        return 128
    if gpu.startswith(("h100", "h200", "h20", "h800")) or not gpu:
        return 64
    return DEFAULT_BLOCK_SIZE_TOKENS


def resolve_kv_dtype_bytes(settings: VllmSettings) -> tuple[str, int]:
    """The cache dtype name vLLM uses and its bytes per element (auto = the model's dtype)."""
    if settings.dtype not in _MODEL_DTYPE_BYTES:
        raise ServewiseInputError(f"unknown vLLM --dtype '{settings.dtype}'; use one of {sorted(_MODEL_DTYPE_BYTES)}")
    if settings.kv_cache_dtype == "auto":
        model_bytes = _MODEL_DTYPE_BYTES[settings.dtype]
        return ("float32" if model_bytes == 4 else "bfloat16/float16 (model dtype)"), model_bytes
    if settings.kv_cache_dtype == "fp8_ds_mla":
        return "fp8_ds_mla", 1
    if settings.kv_cache_dtype not in _KV_DTYPE_BYTES:
        known = sorted([*_KV_DTYPE_BYTES, "auto", "fp8_ds_mla"])
        raise ServewiseInputError(f"unknown or unmodelled vLLM --kv-cache-dtype '{settings.kv_cache_dtype}'; use one of {known}")
    return settings.kv_cache_dtype, _KV_DTYPE_BYTES[settings.kv_cache_dtype]


# ---------------------------------------------------------------------------------------------------
# The plan
# ---------------------------------------------------------------------------------------------------


def plan_vllm(
    arch: ModelArchitecture,
    settings: VllmSettings,
    machine: Machine,
    weights_bytes: int | None,
    *,
    overheads: VllmOverheads | None = None,
) -> VllmPlan:
    """vLLM's memory plan per GPU (bytes, tokens); `weights_bytes` is the whole model as loaded on GPUs.

    The budget is requested memory minus weights (split over TP x PP ranks), the profiled activation peak and
    non-torch memory (estimates unless given); `kv_cache_memory_bytes` replaces the budget as vLLM does.
    """
    tp, pp = settings.tensor_parallel_size, settings.pipeline_parallel_size
    if pp > arch.n_layers:
        raise ServewiseInputError(f"pipeline_parallel_size {pp} is larger than the model's {arch.n_layers} layers")
    block_size = settings.block_size or _default_block_size(arch, machine)
    kv_dtype_name, dtype_bytes = resolve_kv_dtype_bytes(settings)
    if settings.kv_cache_dtype == "fp8_ds_mla" and not arch.layers_of(LayerKind.MLA):
        raise ServewiseInputError("--kv-cache-dtype fp8_ds_mla only applies to MLA models (DeepSeek V3.2 family)")
    notes: list[PlanNote] = []
    refusals: list[str] = []

    model_max_len = arch.max_context_tokens
    requested_len = settings.max_model_len
    auto_fit = requested_len == "auto" or requested_len == -1
    if requested_len is None or auto_fit:
        if model_max_len is None:
            raise ServewiseInputError("the model's maximum context is unknown: give max_model_len explicitly")
        max_model_len = model_max_len
    else:
        if requested_len <= 0:
            raise ServewiseInputError("max_model_len must be positive, or 'auto' / -1")
        max_model_len = requested_len
        if model_max_len is not None and requested_len > model_max_len:
            refusals.append(
                f"User-specified max_model_len ({requested_len}) is greater than the derived max_model_len "
                f"({model_max_len}); vLLM refuses unless VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 is set."
            )

    if arch.n_heads % tp:
        refusals.append(
            f"Total number of attention heads ({arch.n_heads}) must be divisible by tensor parallel size ({tp})."
        )
    world = tp * pp * settings.data_parallel_size
    if world > machine.n_devices:
        refusals.append(f"vLLM needs {world} GPUs (TP {tp} x PP {pp} x DP {settings.data_parallel_size}); "
                        f"the machine has {machine.n_devices}.")

    default_seqs, default_batched = default_batch_limits(machine)
    chunked = settings.enable_chunked_prefill is not False
    batched = settings.max_num_batched_tokens or (default_batched if chunked else max_model_len)
    max_num_seqs = settings.max_num_seqs or min(default_seqs, batched)
    concurrent_batches = 2 if settings.async_scheduling and pp == 1 else pp
    in_flight = concurrent_batches * batched

    hybrid_manager = not settings.disable_hybrid_kv_cache_manager
    specs = {
        i: spec
        for i, layer in enumerate(arch.layers)
        if (spec := _layer_spec(layer, tp, block_size, dtype_bytes, settings.kv_cache_dtype, hybrid_manager))
    }
    if arch.layers_of(LayerKind.RECURRENT):
        notes.append(PlanNote(
            code="vllm_recurrent_state_unmodelled",
            message="vLLM keeps recurrent (Mamba / linear-attention) state in pages padded to the attention page "
            "and may enlarge the block size to match; servewise plans the attention layers only here.",
        ))
    groups = _kv_cache_groups(specs)
    stage_counts = pipeline_stage_layer_counts(arch.n_layers, pp)
    stage_starts = [sum(stage_counts[:i]) for i in range(pp)]
    stages = [set(range(start, start + count)) for start, count in zip(stage_starts, stage_counts, strict=True)]
    per_stage_groups = [[g for g in _project(groups, stage) if g.layers] if groups else [] for stage in stages]

    # --- the budget ---
    if weights_bytes is not None and weights_bytes < 0:
        raise ServewiseInputError("weights_bytes must be zero or positive")
    # --cpu-offload-gb keeps that many GiB of each GPU's weights in host memory (vllm/config/cache.py)
    weights_per_rank = None if weights_bytes is None else max(
        0, weights_bytes // (tp * pp) - int(settings.cpu_offload_gb * GIB))
    if settings.cpu_offload_gb:
        notes.append(PlanNote(code="vllm_cpu_offload", message=f"{settings.cpu_offload_gb} GiB of weights per GPU "
                              "stay in host memory and cross PCIe on every forward pass."))
    components: list[MemoryComponent] = []
    total = machine.device_memory_bytes
    requested: int | None = None
    if settings.kv_cache_memory_bytes is not None:
        available = settings.kv_cache_memory_bytes
        notes.append(PlanNote(
            code="vllm_kv_cache_memory_bytes",
            message="kv_cache_memory_bytes replaces the profiled budget; vLLM then ignores gpu_memory_utilization "
            "for the KV cache (it still checks that the requested fraction is free at start-up).",
        ))
        if weights_per_rank is not None:
            components.append(_weights_component(weights_per_rank, tp * pp))
    else:
        requested = int(total * settings.gpu_memory_utilization)
        est = overheads or default_vllm_overheads(arch, tp)
        if weights_per_rank is None:
            raise ServewiseInputError(
                "the model's weight bytes are unknown: vLLM's KV budget subtracts them (or give kv_cache_memory_bytes)"
            )
        available = int(total * settings.gpu_memory_utilization
                        - (weights_per_rank + est.activation_peak_bytes + est.non_torch_bytes)
                        - est.cudagraph_bytes)
        components += [
            _weights_component(weights_per_rank, tp * pp),
            MemoryComponent(kind=ComponentKind.ACTIVATIONS, label="profiled activation peak (estimate)",
                            bytes=est.activation_peak_bytes, exact=False, basis=est.basis),
            MemoryComponent(kind=ComponentKind.RUNTIME, label="non-torch memory: CUDA context, NCCL (estimate)",
                            bytes=est.non_torch_bytes, exact=False, basis=est.basis),
        ]
        if est.cudagraph_bytes:
            components.append(MemoryComponent(kind=ComponentKind.RUNTIME, label="CUDA graphs (estimate)",
                                              bytes=est.cudagraph_bytes, exact=False, basis=est.basis))

    # --- auto-fit and the max-seq-len check, per pipeline stage ---
    estimated_len: int | None = None
    if groups:
        if auto_fit:
            fitted = min(_estimate_max_model_len(g, available, max_model_len, in_flight) for g in per_stage_groups)
            if fitted <= 0:
                refusals.append("Cannot auto-fit max_model_len: not enough GPU memory available to serve even a "
                                "single token. Try increasing `gpu_memory_utilization`.")
            else:
                if fitted < max_model_len:
                    notes.append(PlanNote(code="vllm_auto_fit",
                                          message=f"Auto-fit max_model_len: reduced from {max_model_len} to {fitted}."))
                max_model_len = min(max_model_len, fitted)
        if available <= 0:
            refusals.append("No available memory for the cache blocks. Try increasing `gpu_memory_utilization` "
                            "when initializing the engine.")
        else:
            for stage_groups in per_stage_groups:
                needed = _needed_bytes(stage_groups, max_model_len, in_flight)
                if needed > available:
                    estimated_len = _estimate_max_model_len(stage_groups, available, max_model_len, in_flight)
                    hint = (f"Based on the available memory, the estimated maximum model length is {estimated_len}. "
                            if estimated_len > 0 else "")
                    refusals.append(
                        f"To serve at least one request with the models's max seq len ({max_model_len}), "
                        f"({needed / GIB:.2f} GiB KV cache is needed, which is larger than the available KV cache "
                        f"memory ({available / GIB:.2f} GiB). {hint}Try increasing `gpu_memory_utilization` or "
                        "decreasing `max_model_len` when initializing the engine."
                    )
                    break

    # --- blocks, tokens, concurrency (rank 0 reports) ---
    num_blocks = min(_num_blocks(g, max(available, 0)) for g in per_stage_groups) if groups else 1
    report_groups = per_stage_groups[0]
    if report_groups:
        concurrency = _max_concurrency(report_groups, num_blocks, max_model_len, in_flight)
        kv_tokens = int(concurrency * max_model_len)
    else:
        kv_tokens, concurrency = 0, 0.0
    kv_bytes = _pool_bytes(report_groups, num_blocks) if groups else 0
    k_bytes, v_bytes = _split_k_v(report_groups, kv_bytes)

    components.append(MemoryComponent(
        kind=ComponentKind.KV_CACHE, label=f"KV cache: {num_blocks} blocks of {block_size} tokens",
        bytes=kv_bytes, exact=True,
        basis="vllm/v1/core/kv_cache_utils.py get_kv_cache_config_from_groups",
    ))
    if requested is not None:
        if available > kv_bytes:
            components.append(MemoryComponent(
                kind=ComponentKind.RESERVED, label="KV budget left over by whole blocks", bytes=available - kv_bytes,
                exact=True, basis="remainder of the integer division into blocks"))
        components.append(MemoryComponent(
            kind=ComponentKind.RESERVED, label="outside gpu_memory_utilization", bytes=max(0, total - requested),
            exact=True, basis="total x (1 - gpu_memory_utilization)"))
    used = sum(c.bytes for c in components)
    if used < total:
        components.append(MemoryComponent(kind=ComponentKind.FREE, label="free", bytes=total - used, exact=False,
                                          basis="device memory not assigned above"))

    first_stage_layers = [arch.layers[i] for i in sorted(stages[0])]
    plan_caches = []
    if report_groups:
        name = "kv_mla" if all(g.layers and _group_kind(g) == "mla" for g in report_groups) else (
            "kv" if len(report_groups) == 1 else "kv_hybrid_pool")
        plan_caches.append(CacheAllocation(
            name=name, layers=_group_size(report_groups), cells=num_blocks * min(g.block_size for g in report_groups),
            seqs=max_num_seqs, type_k=kv_dtype_name, type_v=kv_dtype_name if v_bytes else "-",
            k_bytes=k_bytes, v_bytes=v_bytes,
        ))
    if kv_tokens and max_model_len:
        notes.append(PlanNote(
            code="vllm_concurrency_is_a_bound",
            message="Maximum concurrency assumes every request reaches max_model_len; shorter requests fit more, "
            "and max_num_seqs caps the running batch separately.",
        ))

    return VllmPlan(
        engine=ENGINE_ID,
        kv_bytes_per_token=_bytes_per_token(first_stage_layers, tp, dtype_bytes, settings.kv_cache_dtype),
        kv_cache_bytes=kv_bytes,
        weights_bytes=weights_per_rank,
        caches=plan_caches,
        components=components,
        device_capacity_bytes=total,
        refusal=" ".join(refusals) or None,
        notes=notes,
        requested_memory_bytes=requested,
        available_kv_cache_bytes=available,
        num_gpu_blocks=num_blocks,
        kv_tokens=kv_tokens,
        max_concurrency=concurrency,
        max_model_len=max_model_len,
        estimated_max_model_len=estimated_len,
        block_size=block_size,
        kv_cache_dtype=kv_dtype_name,
        kv_heads_per_rank=_kv_heads_per_rank(arch, tp),
        tensor_parallel_size=tp,
        pipeline_parallel_size=pp,
        layers_per_stage=stage_counts,
        max_num_seqs=max_num_seqs,
        max_num_batched_tokens=batched,
        max_in_flight_tokens=in_flight,
        kv_cache_groups=[_describe(g) for g in report_groups],
    )


def _weights_component(weights_per_rank: int, ranks: int) -> MemoryComponent:
    return MemoryComponent(
        kind=ComponentKind.WEIGHTS, label="weights on this GPU", bytes=weights_per_rank, exact=ranks == 1,
        basis="as given" if ranks == 1 else f"model weights / {ranks} ranks (replicated pieces not counted)",
    )


def _group_kind(group: _Group) -> str:
    return group.layer_specs[0].kind if group.is_uniform_type else group.spec.kind


def _describe(group: _Group) -> VllmCacheGroup:
    spec = group.layer_specs[0] if group.is_uniform_type else group.spec
    return VllmCacheGroup(kind=spec.kind, layers=len(group.layers), block_size=group.block_size,
                          page_bytes=group.page_bytes(), sliding_window_tokens=spec.sliding_window)


def _split_k_v(groups: list[_Group], total_bytes: int) -> tuple[int, int]:
    """K and V bytes of the pool: by the K/V element ratio (MLA latent counts as K)."""
    k_elems = v_elems = 0
    for group in groups:
        for spec in (group.layer_specs if group.is_uniform_type else (group.spec,) * len(group.layers)):
            if spec.kind == "mla":
                k_elems += spec.head_size_k
            else:
                k_elems += spec.kv_heads * spec.head_size_k
                v_elems += spec.kv_heads * spec.head_size_v
    if k_elems + v_elems == 0:
        return 0, 0
    v_bytes = total_bytes * v_elems // (k_elems + v_elems)
    return total_bytes - v_bytes, v_bytes


def _kv_heads_per_rank(arch: ModelArchitecture, tp: int) -> int:
    attention = arch.layers_of(LayerKind.FULL, LayerKind.SLIDING)
    if attention:
        return max(1, max(layer.n_kv_heads for layer in attention) // tp)
    return 1 if arch.layers_of(LayerKind.MLA) else 0


def _bytes_per_token(layers: list[LayerGeometry], tp: int, dtype_bytes: int, kv_cache_dtype: str) -> int:
    """KV bytes one token costs on this rank, summed over its KV-holding layers (before block rounding)."""
    total = 0
    for layer in layers:
        spec = _layer_spec(layer, tp, 1, dtype_bytes, kv_cache_dtype, hybrid_manager=False)
        if spec is not None:
            total += spec.page_bytes
    return total
