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

Checked against SGLang 0.5.23 itself (the installed package's python/sglang/srt/, read at that version) on
the CPU device: tests/data/conformance/sglang/conformance-0.5.23.json. There the device memory is the host's
(utils/common.py get_available_gpu_memory "cpu" branch: get_free_cpu_memory / NUMA nodes;
get_cpu_memory_capacity for the automatic rules), the budget is mem_cache/kv_cache_configurator.py
_profile_available_bytes, the request cap resolve_max_num_reqs, the argument checks
arg_groups/validation_hook.py, the chunk table arg_groups/memory_hook.py.
"""

from __future__ import annotations

import math
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from calculators.engines.vllm.distributed_utils import pipeline_stage_layer_counts
from calculators.errors import ServewiseInputError
from calculators.hardware.machine import Machine
from calculators.i18n import _, ngettext
from calculators.memory.plan import CacheAllocation, ComponentKind, MemoryComponent, MemoryPlan, PlanNote
from calculators.model.architecture import LayerKind, ModelArchitecture, RecurrentGeometry
from calculators.units import GIB, MIB, number

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
    # hybrid (Mamba / linear-attention) models: the state pool (arg_groups/fields/schedule.py, exec_.py)
    max_mamba_cache_size: int | None = Field(default=None, gt=0)
    mamba_full_memory_ratio: float = Field(default=0.9, gt=0)  # Arg(fallback=0.9)
    mamba_ssm_dtype: str | None = None  # None = config.json's mamba_ssm_dtype, else float32
    mamba_radix_cache_strategy: str = "auto"  # auto / no_buffer / extra_buffer / extra_buffer_lazy
    disable_overlap_schedule: bool = False
    speculative_num_draft_tokens: int | None = Field(default=None, gt=0)
    speculative_draft_model_path: str | None = None
    speculative_num_steps: int | None = Field(default=None, gt=0)
    speculative_eagle_topk: int | None = Field(default=None, gt=0)
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
    mamba: SglangMambaPool | None = None
    draft_kv_layers: int = Field(default=0, description="drafter layers whose KV shares each token's cell")
    draft_weights_bytes: int | None = None


class SglangMambaPool(BaseModel):
    """The recurrent-state pool of a hybrid model (mem_cache/memory_pool.py MambaPool), per rank."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    layers: int
    conv_shape: tuple[int, int]
    ssm_shape: tuple[int, int, int]
    conv_dtype: str
    ssm_dtype: str
    bytes_per_request: int = Field(description="mamba_cache_per_req: one slot over all state layers")
    max_mamba_cache_size: int = Field(description="state slots; the pool holds one more (padding slot)")
    sizing: Literal["max_mamba_cache_size", "max_running_requests", "mamba_full_memory_ratio"]
    slots_per_request: int = Field(description="_calculate_mamba_ratio: slots each running request needs")
    strategy: str
    conv_state_bytes: int
    ssm_state_bytes: int
    intermediate_bytes: int = Field(description="speculative verify scratch (intermediate SSM + conv windows)")
    caps_running_requests: bool

    @property
    def total_bytes(self) -> int:
        return self.conv_state_bytes + self.ssm_state_bytes + self.intermediate_bytes


#: families whose hybrid sliding-window pool SGLang disables (arg_groups/model_overrides/gemma2_gemma3.py, v0.5.23:
#: Gemma2ForCausalLM, Gemma3ForCausalLM, Gemma3ForConditionalGeneration, Gemma3n*)
_NO_HYBRID_SWA_FAMILIES = ("gemma2", "gemma3", "gemma3_text", "gemma3n", "gemma3n_text")


def auto_chunk_and_graph_sizes(gpu_mem_mib: float, tp_size: int) -> tuple[int, int]:
    """(chunked_prefill_size, cuda_graph_max_bs) SGLang picks for a device of `gpu_mem_mib` MiB.

    python/sglang/srt/arg_groups/memory_hook.py `_handle_gpu_memory_settings` at v0.5.23; on the CPU device
    the memory is the host's (utils/common.py get_cpu_memory_capacity: RAM, capped by the cgroup, per NUMA
    node), e.g. 4096 for this workplace's 24,105 MiB machine (tests/data/conformance/sglang/).
    """
    if gpu_mem_mib < 20 * 1024:
        return 2048, 8
    if gpu_mem_mib < 35 * 1024:  # A10, 4090, 5090: 4096 and 48 since the RTX 5090 change (was 2048, 24)
        return 4096, 48 if tp_size < 4 else 160
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
    """SGLang's request-slot count from the token pool: clamp(tokens / context x 512, 2048, 4096), <= tokens // 2.

    mem_cache/kv_cache_configurator.py `resolve_max_num_reqs` (v0.5.23): a requested --max-running-requests is
    taken per DP worker (at least 1) and only bounded by tokens // 2, not by the estimate.
    """
    if requested is not None:
        return min(max(1, requested // dp_size), tokens // 2)
    estimated = max(min(int(tokens / context_len * 512), 4096), 2048)
    return min(estimated, tokens // 2)


def _dtype_bytes(settings: SglangSettings) -> tuple[str, int]:
    if settings.dtype not in _MODEL_DTYPE_BYTES:
        raise ServewiseInputError(_("unknown SGLang --dtype '{dtype}'; use one of {model_dtype_bytes}").format(
                                    dtype=settings.dtype, model_dtype_bytes=sorted(_MODEL_DTYPE_BYTES)))
    if settings.kv_cache_dtype == "auto":
        size = _MODEL_DTYPE_BYTES[settings.dtype]
        return ("float32" if size == 4 else "bfloat16"), size
    if settings.kv_cache_dtype not in _KV_DTYPE_BYTES:
        known = sorted([*_KV_DTYPE_BYTES, "auto"])
        raise ServewiseInputError(_("unknown SGLang --kv-cache-dtype '{kv_cache_dtype}'; use one of {known}").format(
                                    kv_cache_dtype=settings.kv_cache_dtype, known=known))
    return settings.kv_cache_dtype, _KV_DTYPE_BYTES[settings.kv_cache_dtype]


def plan_sglang(
    arch: ModelArchitecture,
    settings: SglangSettings,
    machine: Machine,
    weights_bytes: int | None,
    *,
    overheads: SglangOverheads | None = None,
    free_before_load_bytes: int | None = None,
    free_after_load_bytes: int | None = None,
    draft: ModelArchitecture | None = None,
    draft_weights_bytes: int | None = None,
) -> SglangPlan:
    """SGLang's memory plan per GPU (bytes, tokens); `weights_bytes` is the whole model as loaded on GPUs.

    `free_before_load_bytes` is what SGLang measures as free before loading (its "total_gpu_memory");
    when not given it is estimated as device memory minus the runtime context (exact=False).
    `free_after_load_bytes` is what it measures when it sizes the pool (after loading); by default the free
    memory before loading minus this rank's weights. On the CPU device both are the host's available memory
    (psutil, capped by the cgroup), which other processes move, so give the two readings SGLang took.
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
    fraction = settings.mem_fraction_static if settings.mem_fraction_static is not None else auto_mem_fraction_static(
        gpu_mem_mib, settings, chunked_prefill_size, cuda_graph_max_bs)  # (fraction_is_auto, spelled for mypy)
    if fraction_is_auto and arch.family in ("llava", "qwen2_vl", "qwen2_5_vl", "mllama", "gemma3"):
        notes.append(PlanNote(code="sglang_vlm_fraction", message=_("SGLang lowers the automatic fraction further "
                              "for multimodal models (adjust_mem_fraction_for_vlm); not modelled.")))

    if machine.device_kind == "cpu":
        if settings.kv_cache_dtype == "fp8_e4m3":
            notes.append(PlanNote(code="sglang_cpu_fp8", message=(
                _("SGLang's CPU platform refuses an fp8_e4m3 KV cache without AMX, without the intel_amx attention "
                "backend or with MLA (kv_cache_configurator.py configure, v0.5.23); the torch-native path run here "
                "(PyPI's CUDA torch on the CPU device) skipped that check and started; servewise does not refuse "
                "it."))))
        if fraction_is_auto:
            notes.append(PlanNote(code="sglang_cpu_auto_fraction", message=(
                _("On the CPU device SGLang's automatic mem_fraction_static reserves its graph memory for the "
                "torch.compile batch sizes, which servewise does not model: the fraction may differ in the third "
                "decimal (recorded: SGLang 0.716, servewise 0.715 on a 24,105\u00a0MiB host); pass "
                "--mem-fraction-static for an exact pool."))))
        notes.append(PlanNote(code="sglang_cpu_memory", message=(
            _("On the CPU device SGLang's 'GPU memory' is the host's: its automatic rules read the RAM per NUMA node "
            "(capped by the cgroup's memory.max), and the pool is sized from the host's available memory (psutil, "
            "minus the cgroup's usage) read before loading and again when the pool is built; other processes move "
            "both, so the plan is exact only when given those two readings. More than one NUMA node (each rank "
            "gets RAM / nodes) and explicit per-rank core binding (no capacity: fallback rules) are not modelled."))))
    # arg_groups/validation_hook.py (v0.5.23): refused while the server arguments are checked
    if chunked_prefill_size > 0 and chunked_prefill_size % settings.page_size:
        refusals.append(_("chunked_prefill_size must be divisible by page_size"))

    context_len = settings.context_length or arch.max_context_tokens
    if context_len is None:
        raise ServewiseInputError(_("the model's maximum context is unknown: give context_length explicitly"))

    # --- this rank's KV layers and cell size ---
    stage_layers = arch.layers[: pipeline_stage_layer_counts(arch.n_layers, pp)[0]]
    mla = [layer for layer in stage_layers if layer.kind is LayerKind.MLA]
    full = [layer for layer in stage_layers if layer.kind is LayerKind.FULL]
    sliding = [layer for layer in stage_layers if layer.kind is LayerKind.SLIDING]
    state_layers = [layer for layer in stage_layers if layer.recurrent is not None]
    if any(layer.kind is LayerKind.RECURRENT for layer in arch.layers) and not state_layers:
        notes.append(PlanNote(code="sglang_mamba_pool_unmodelled", message=_("this architecture's recurrent layers "
                              "come without state shapes (a GGUF header gives only element counts); servewise plans "
                              "the KV layers as if they had the whole budget.")))
    if arch.n_heads % tp:
        notes.append(PlanNote(code="sglang_tp_heads", message=_("{n_heads} attention heads do not split "
            "evenly over tp_size {tp}; SGLang is expected to refuse this model at load.").format(
            n_heads=arch.n_heads, tp=tp)))

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
    hybrid_swa = bool(full) and bool(sliding) and not mla and arch.family not in _NO_HYBRID_SWA_FAMILIES
    if full and sliding and not mla and not hybrid_swa:
        notes.append(PlanNote(code="sglang_gemma_no_swa_pool", message=(
            _("SGLang turns its sliding-window pool off for Gemma 2 / 3 / 3n (disable_hybrid_swa_memory, "
            "arg_groups/model_overrides/gemma2_gemma3.py at v0.5.23): every layer keeps every token, window or not"))))
    if mla and settings.page_size == 1:
        notes.append(PlanNote(code="sglang_mla_page_size", message=_("MLA attention backends such as flashmla, "
                              "cutlass_mla and trtllm_mla run with larger pages (64 or 128\u00a0tokens); pass the "
                              "page_size the server logs to match its pool exactly.")))

    # model_executor/pool_configurator.py DefaultPoolConfigurator: EAGLE / EAGLE3 / NEXTN / STANDALONE drafters get
    # KV in the same token slots, sized as the target's cell x draft layers / target layers
    draft_layers = _draft_kv_layers(settings, arch, draft)
    full_cell = sum(heads(layer) * (layer.head_dim_k + layer.head_dim_v) for layer in full) * dtype_bytes
    swa_cell = sum(heads(layer) * (layer.head_dim_k + layer.head_dim_v) for layer in sliding) * dtype_bytes
    cell_size = (sum(per_layer_k) + sum(per_layer_v)) * dtype_bytes
    if draft_layers and layers_for_pool:
        cell_size += int(cell_size * draft_layers / len(layers_for_pool))
        notes.append(PlanNote(code="sglang_draft_kv", message=(
            ngettext("{speculative_algorithm}: the drafter's {draft_layers} layer keeps KV for every token slot "
                     "too, so each token costs that much more and the pool holds fewer tokens",
                     "{speculative_algorithm}: the drafter's {draft_layers} layers keep KV for every token slot "
                     "too, so each token costs that much more and the pool holds fewer tokens", draft_layers).format(
              speculative_algorithm=settings.speculative_algorithm, draft_layers=number(draft_layers)))))

    # --- the budget ---
    if weights_bytes is None:
        raise ServewiseInputError(_("the model's weight bytes are unknown: SGLang's pool is what remains after them"))
    weights_per_rank = weights_bytes // (tp * pp)
    if draft_weights_bytes is not None:
        weights_per_rank += draft_weights_bytes // tp  # "If using speculative decoding, draft weights are now counted"
    free_before = free_before_load_bytes if free_before_load_bytes is not None else (
        total - overheads.runtime_context_bytes)
    free_after = free_after_load_bytes if free_after_load_bytes is not None else free_before - weights_per_rank
    rest_bytes = int((free_after / GIB - free_before / GIB * (1 - fraction)) * GIB)
    page = settings.page_size

    mamba_pool: SglangMambaPool | None = None
    if state_layers:
        mamba_pool, rest_bytes = _mamba_pool(arch, state_layers, settings, rest_bytes)
        notes.append(PlanNote(code="sglang_mamba_pool", message=(
            ngettext("The recurrent state takes a pool of its own: {max_mamba_cache_size} + 1 slots of "
                     "{bytes_per_request}\u00a0bytes ({sizing}); only what is left goes to the KV pool, and each "
                     "running request holds {slots_per_request} slot",
                     "The recurrent state takes a pool of its own: {max_mamba_cache_size} + 1 slots of "
                     "{bytes_per_request}\u00a0bytes ({sizing}); only what is left goes to the KV pool, and each "
                     "running request holds {slots_per_request} slots", mamba_pool.slots_per_request).format(
              max_mamba_cache_size=number(mamba_pool.max_mamba_cache_size),
              bytes_per_request=number(mamba_pool.bytes_per_request),
              sizing=mamba_pool.sizing,
              slots_per_request=mamba_pool.slots_per_request))))

    if rest_bytes <= 0:  # kv_cache_configurator.py _profile_available_bytes (v0.5.23)
        minimum = 1 - (free_after / GIB) / (free_before / GIB)
        refusals.append(_("Loaded weights leave no GPU memory for the KV cache under "
                          "--mem-fraction-static={fraction}. Raise --mem-fraction-static above {ceil} "
                          "(minimum viable = 1 - available/pre = {minimum}). If using speculative "
                          "decoding, draft weights are now counted.").format(
                          # the flag value as typed on a command line (a "." decimal in every language)
                          fraction=fraction, ceil=f"{math.ceil(minimum * 1000) / 1000:.3f}",
                          minimum=number(minimum, 4)))
    swa_tokens: int | None = None
    if hybrid_swa:
        ratio = settings.swa_full_tokens_ratio
        per_full_token = full_cell + ratio * swa_cell
        tokens = (int(rest_bytes / per_full_token) // page) * page if rest_bytes > 0 else 0
        notes.append(
            PlanNote(
                code="sglang_hybrid_swa",
                message=_("Sliding-window layers get their own pool of swa_full_tokens_ratio ({ratio}) × "
                          "the full-attention tokens (HybridSWAPoolConfigurator); SGLang does this for the "
                          "architectures it marks hybrid-SWA (gpt-oss, ...; not Gemma 2/3).").format(ratio=ratio),
            )
        )
    else:
        tokens = max(0, rest_bytes // cell_size) if cell_size else 0
    if settings.max_total_tokens is not None:
        if settings.max_total_tokens > tokens:
            notes.append(PlanNote(code="sglang_max_total_tokens_too_large", message=_(
                "max_total_tokens={max_total_tokens} is larger than the profiled value {tokens}; SGLang uses the "
                "profiled value.").format(
                max_total_tokens=settings.max_total_tokens, tokens=tokens)))
        tokens = min(tokens, settings.max_total_tokens)
    tokens = tokens // page * page
    if hybrid_swa:
        swa_tokens = int(tokens * settings.swa_full_tokens_ratio) // page * page
    if tokens <= 0 and rest_bytes > 0:
        refusals.append(_("Not enough memory. Please try to increase --mem-fraction-static."))

    running = max_running_requests_for(tokens, context_len, settings.max_running_requests, settings.dp_size)
    if mamba_pool is not None:
        cap = mamba_pool.max_mamba_cache_size // mamba_pool.slots_per_request
        if cap < running:
            running = cap
            mamba_pool = mamba_pool.model_copy(update={"caps_running_requests": True})
            notes.append(PlanNote(code="sglang_mamba_caps_requests", message=(
                _("max_running_requests is capped to {cap} by the mamba state cache "
                  "(max_mamba_cache_size={max_mamba_cache_size}, {slots_per_request} state slots per "
                  "request)").format(
                  cap=cap,
                  max_mamba_cache_size=mamba_pool.max_mamba_cache_size,
                  slots_per_request=mamba_pool.slots_per_request))))
        if running <= 0:
            refusals.append(_("Hybrid (mamba/linear-attention) state cache is too small to serve any requests."))

    # --- the buffers SGLang allocates (page 0 is padding: size + page_size rows per layer) ---
    if hybrid_swa:
        assert swa_tokens is not None  # set above whenever hybrid_swa
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
        MemoryComponent(kind=ComponentKind.RUNTIME, label=_("CUDA context before loading (estimate)") if estimate
                        else _("CUDA context before loading"), bytes=total - free_before, exact=not estimate,
                        basis=overheads.basis if estimate else _("as given")),
        MemoryComponent(kind=ComponentKind.WEIGHTS, label=_("weights on this GPU"), bytes=weights_per_rank,
                        exact=tp * pp == 1, basis=_("as given") if tp * pp == 1 else _("model weights / {tp} "
                            "ranks").format(tp=tp * pp)),
        MemoryComponent(kind=ComponentKind.KV_CACHE, label=_("KV pool: {tokens}\u00a0tokens").format(
                                                             tokens=tokens), bytes=kv_bytes, exact=True,
                        basis=_("memory_pool.py buffers of (size + page_size) rows per layer")),
        *([MemoryComponent(kind=ComponentKind.RECURRENT_STATE, label=_("Mamba state pool: "
            "{max_mamba_cache_size} + 1 slots").format(
            max_mamba_cache_size=mamba_pool.max_mamba_cache_size), bytes=mamba_pool.total_bytes, exact=True,
                           basis=_("mem_cache/memory_pool.py MambaPool conv + temporal (+ speculative scratch)"))]
          if mamba_pool else []),
        MemoryComponent(kind=ComponentKind.ACTIVATIONS, label=_("left for activations and CUDA graphs "
                        "(1 - mem_fraction_static of the free memory)"), bytes=max(0, total - (total - free_before)
                        - weights_per_rank - kv_bytes - (mamba_pool.total_bytes if mamba_pool else 0)), exact=False,
                        basis=_("what the static pool leaves; SGLang does not reserve it explicitly")),
    ]

    caches = []
    if layers_for_pool:
        if hybrid_swa:
            assert swa_tokens is not None  # set above whenever hybrid_swa

            def pool(name: str, group: list, cells: int) -> CacheAllocation:
                """One of the hybrid SWA pools: its layers' K and V over `cells` tokens plus one page."""
                return CacheAllocation(
                    name=name, layers=len(group), cells=cells, seqs=running, type_k=dtype_name, type_v=dtype_name,
                    k_bytes=sum(heads(x) * x.head_dim_k for x in group) * dtype_bytes * (cells + page),
                    v_bytes=sum(heads(x) * x.head_dim_v for x in group) * dtype_bytes * (cells + page),
                )

            caches += [pool("kv", full, tokens), pool("kv_swa", sliding, swa_tokens)]
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
        mamba=mamba_pool,
        draft_kv_layers=draft_layers,
        draft_weights_bytes=draft_weights_bytes,
    )


#: --speculative-algorithm values whose drafter keeps KV in the target's token slots
_DRAFT_KV_ALGORITHMS = ("EAGLE", "EAGLE3", "NEXTN", "STANDALONE")


def _draft_kv_layers(settings: SglangSettings, arch: ModelArchitecture, draft: ModelArchitecture | None) -> int:
    """eagle_draft_num_layers (model_runner_components/spec_aux_hidden_state.py): the drafter's
    num_nextn_predict_layers, else its KV layer count; NEXTN without a draft path runs the target's MTP layers."""
    algorithm = (settings.speculative_algorithm or "").upper()
    if algorithm not in _DRAFT_KV_ALGORITHMS:
        return 0
    if draft is not None:
        return draft.mtp_layers or len(draft.layers_of(LayerKind.FULL, LayerKind.SLIDING, LayerKind.MLA))
    if (algorithm == "NEXTN" or settings.speculative_draft_model_path is None) and arch.mtp_layers:
        return arch.mtp_layers
    if algorithm in ("EAGLE", "EAGLE3"):
        return 1  # published EAGLE heads: one decoder layer (its config.json was not given)
    raise ServewiseInputError(_("--speculative-algorithm {algorithm} needs the draft model's config.json to "
                                "size its KV").format(algorithm=algorithm))


_STATE_DTYPE_BYTES = {"float32": 4, "bfloat16": 2, "float16": 2}


def mamba_slots_per_request(settings: SglangSettings) -> tuple[int, str]:
    """(_calculate_mamba_ratio, the resolved mamba_radix_cache_strategy) for CUDA with the triton backend.

    mem_cache/kv_cache_configurator.py: 1 slot without the radix cache; else 3 plus the extra buffer's
    tracking slots (2 with the overlap scheduler, 1 without or lazy). arg_groups/overrides.py resolves "auto"
    to extra_buffer when the overlap scheduler or paging is on (every hybrid family servewise reads supports
    it), else no_buffer (which also turns the overlap scheduler off).
    """
    if settings.disable_radix_cache:
        return 1, "none (radix cache disabled)"
    strategy = settings.mamba_radix_cache_strategy
    overlap = not settings.disable_overlap_schedule
    if strategy == "auto":
        strategy = "extra_buffer" if (overlap or settings.page_size > 1) else "no_buffer"
    if strategy == "no_buffer":
        return 3, strategy
    if strategy == "extra_buffer_lazy":
        return 4, strategy
    if strategy == "extra_buffer":
        return 3 + (2 if overlap else 1), strategy
    raise ServewiseInputError(_("unknown SGLang --mamba-radix-cache-strategy '{strategy}'").format(strategy=strategy))


def _state_shapes(geometry: RecurrentGeometry, tp: int) -> tuple[tuple[int, int], tuple[int, int, int]]:
    """configs/mamba_utils.py Mamba2StateShape: conv (channels / tp, conv_kernel - 1), temporal (heads / tp, ...)."""
    return (geometry.conv_channels(tp), geometry.conv_kernel - 1), geometry.ssm_shape(tp)


def _mamba_pool(
    arch: ModelArchitecture, layers: list, settings: SglangSettings, rest_bytes: int
) -> tuple[SglangMambaPool, int]:
    """Size the state pool out of the pool budget; returns it and the budget left for the KV pool (bytes).

    mem_cache/kv_cache_configurator.py _handle_max_mamba_cache, in GB = 2^30 floats as SGLang computes it.
    """
    geometries = {layer.recurrent for layer in layers}
    if len(geometries) > 1:
        raise ServewiseInputError(_("the model's recurrent layers have different state shapes; servewise plans one"))
    geometry = geometries.pop()
    conv_shape, ssm_shape = _state_shapes(geometry, settings.tp_size)
    # configs/mamba_utils.py mamba2_state_dtype reads config.json's `mamba_ssm_dtype` (Qwen3.5); Nemotron-H's
    # `mamba_ssm_cache_dtype` (what arch.mamba_ssm_dtype holds for it) is vLLM's key, not SGLang's
    from_config = arch.mamba_ssm_dtype if arch.family != "nemotron_h" else None
    ssm_dtype = settings.mamba_ssm_dtype or from_config or "float32"
    if ssm_dtype not in _STATE_DTYPE_BYTES:
        raise ServewiseInputError(_("SGLang --mamba-ssm-dtype takes float32, bfloat16 or float16, not "
                                    "'{ssm_dtype}'").format(ssm_dtype=ssm_dtype))
    conv_dtype = "bfloat16"  # SGLANG_MAMBA_CONV_DTYPE default (environ.py)
    conv_elems = conv_shape[0] * conv_shape[1]
    ssm_elems = ssm_shape[0] * ssm_shape[1] * ssm_shape[2]
    n = len(layers)
    per_req = (conv_elems * _STATE_DTYPE_BYTES[conv_dtype] + ssm_elems * _STATE_DTYPE_BYTES[ssm_dtype]) * n
    ratio, strategy = mamba_slots_per_request(settings)
    draft_tokens = settings.speculative_num_draft_tokens if settings.speculative_algorithm else None
    rest_gb = rest_bytes / GIB
    intermediate_gb = 0.0
    if settings.max_mamba_cache_size is not None:
        size, sizing = settings.max_mamba_cache_size // settings.dp_size, "max_mamba_cache_size"
        if draft_tokens:
            capped = min(max(1, (settings.max_running_requests or size) // settings.dp_size), size // ratio)
            intermediate_gb = per_req * (capped + 1) * draft_tokens / GIB
    elif settings.disable_radix_cache and settings.max_running_requests is not None:
        size, sizing = max(1, settings.max_running_requests // settings.dp_size), "max_running_requests"
        if draft_tokens:
            intermediate_gb = per_req * (size + 1) * draft_tokens / GIB
    else:
        sizing = "mamba_full_memory_ratio"
        r = settings.mamba_full_memory_ratio
        budget = rest_gb * r / (1 + r) * GIB
        if draft_tokens:
            size = int((budget - per_req * (1 + draft_tokens)) // (per_req * (1 + draft_tokens / ratio)))
            capped = min(max(1, (settings.max_running_requests or size) // settings.dp_size), size // ratio)
            intermediate_gb = per_req * (capped + 1) * draft_tokens / GIB
        else:
            size = int((budget - per_req) // per_req)
    if size <= 0:
        raise ServewiseInputError(
            _("Not enough GPU memory for hybrid (mamba/linear-attention) state cache. Computed "
              "max_mamba_cache_size={size} (mamba_cache_per_req={per_req}\u00a0MB); SGLang refuses to start.").format(
              size=size, per_req=number(per_req / MIB, 2))
        )
    left_gb = rest_gb - intermediate_gb - (size + 1) * per_req / GIB
    pool = SglangMambaPool(
        layers=n, conv_shape=conv_shape, ssm_shape=ssm_shape, conv_dtype=conv_dtype, ssm_dtype=ssm_dtype,
        bytes_per_request=per_req, max_mamba_cache_size=size, sizing=sizing, slots_per_request=ratio,
        strategy=strategy,
        conv_state_bytes=n * (size + 1) * conv_elems * _STATE_DTYPE_BYTES[conv_dtype],
        ssm_state_bytes=n * (size + 1) * ssm_elems * _STATE_DTYPE_BYTES[ssm_dtype],
        intermediate_bytes=int(intermediate_gb * GIB), caps_running_requests=False,
    )
    return pool, int(left_gb * GIB)


def without_speculation(settings):
    """--speculative-algorithm and its drafter removed (None when the settings have none)."""
    if settings.speculative_algorithm is None:
        return None
    return settings.model_copy(update={"speculative_algorithm": None, "speculative_draft_model_path": None,
                                       "speculative_num_draft_tokens": None})
