"""llama.cpp / llama-server: the KV, sliding-window and recurrent caches exactly as llama.cpp allocates them.

Every rule below was read in ggml-org/llama.cpp at commit 0c1e57098 (the tree vendored by
llama-cpp-python 0.3.36, whose CHANGELOG names that commit), read 2026-11-30. `file:line` comments
point into that tree. The conformance test (tests/calculators/engines/llama_cpp/test_conformance.py) loads tiny GGUF
files in that very llama.cpp and compares its `llama_kv_cache: size = ...` lines with this module.

All sizes are bytes; contexts and cells are tokens.
"""

from __future__ import annotations

from dataclasses import replace
from enum import StrEnum
from pathlib import Path

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, field_validator

from calculators.errors import ServewiseInputError
from calculators.hardware.machine import Machine
from calculators.i18n import _, ngettext
from calculators.memory.plan import (
    CacheAllocation,
    ComponentKind,
    MemoryComponent,
    MemoryPlan,
    PlanNote,
    Result,
)
from calculators.model.architecture import LayerGeometry, LayerKind, ModelArchitecture
from calculators.model.ggml_types import ggml_block, ggml_tensor_bytes
from calculators.units import MIB, number

ENGINE_ID = "llama-cpp"
LLAMACPP_COMMIT = "0c1e57098"
LLAMACPP_SOURCE = f"ggml-org/llama.cpp@{LLAMACPP_COMMIT}"

# common/arg.cpp:304-314 — the only values -ctk/-ctv accept.
KV_CACHE_TYPES: tuple[str, ...] = ("f32", "f16", "bf16", "q8_0", "q4_0", "q4_1", "iq4_nl", "q5_0", "q5_1")

CTX_PAD_TOKENS = 256  # src/llama-context.cpp:290 and :296 (GGML_PAD(..., 256))
SWA_PAD_TOKENS = 256  # src/llama-kv-cache-iswa.cpp:71-73 ("the SWA cache is always padded to 256")
LLAMA_MAX_SEQ = 256  # src/llama-cparams.h:8
SERVER_AUTO_PARALLEL = 4  # tools/server/server.cpp:156-160: -np -1 -> 4 slots and a unified KV
FIT_MIN_CTX_TOKENS = 4096  # common/common.h:480 fit_params_min_ctx
FIT_MARGIN_BYTES = 1024 * 1024 * 1024  # common/common.h:483 fit_params_target, per device
RECURRENT_STATE_TYPE = "f32"  # src/llama-model.cpp:2673-2674 (GGML_TYPE_F32 for R and S)
# common/common.h need_n_rs_seq: these speculative types keep --spec-draft-n-max extra recurrent-state rows
# per sequence (src/llama-memory-recurrent.cpp:101 n_rows = mem_size x (1 + n_rs_seq)) ...
RS_ROLLBACK_SPEC_TYPES = frozenset({"draft-mtp", "draft-eagle3", "draft-dflash", "draft-dspark"})
# ... on the architectures that support partial rollback (src/llama-arch.cpp llm_arch_supports_rs_rollback),
# by GGUF name and Hugging Face model_type; src/llama-context.cpp clamps n_rs_seq to 0 elsewhere.
RS_ROLLBACK_FAMILIES = frozenset({
    "kimi_k3", "qwen35", "qwen35moe", "qwen3_5_text", "qwen3_5_moe_text", "qwen4exp", "deepseek4", "glm5_next",
    "nemotron_h", "nemotron_h_moe", "lfm2", "lfm2moe", "bailingmoe3",
})
# Families whose llama.cpp implementation can give sliding layers their own smaller cache: the
# src/models/*.cpp files that set swa_type (GGUF architecture names, plus Hugging Face model_type
# spellings). Any other family keeps every token on every layer, e.g. Mistral-7B-v0.1 (llama) or
# Phi-3 (src/models/phi3.cpp:13-22 reads sliding_window and turns it off).
LLAMACPP_SWA_FAMILIES = frozenset(
    {
        "afmoe", "cohere2", "cohere2moe", "deepseek4", "dots3note", "exaone4", "exaone_moe", "gemma2", "gemma3",
        "gemma3_text", "gemma3n", "gemma3n_text", "gemma4", "gemma4_text", "gemma-embedding", "gpt-oss", "gpt_oss",
        "granite_swa", "laguna", "lfm2", "llama4", "llama4_text", "maple", "mellum", "mimo2", "modern-bert",
        "modernbert", "olmo2", "olmo3", "plamo3", "smallthinker", "step35",
    }
)  # fmt: skip
TYPED_GEOMETRY_FAMILY = "generic"  # calculators.memory.kv.uniform_gqa_architecture: trust the layers as typed


class FlashAttn(StrEnum):
    """-fa/--flash-attn values (common/arg.cpp:1754)."""

    ON = "on"
    OFF = "off"
    AUTO = "auto"


class LlamaCppSettings(BaseModel):
    """llama-server launch settings, named as the shared setting keys; defaults are llama-server's own.

    Defaults read at ggml-org/llama.cpp@0c1e57098: common/common.h:452-634 (n_ctx 0, n_batch 2048,
    n_ubatch 512, n_gpu_layers -1, fit on, flash_attn auto, cache types f16, swa_full false,
    kv_unified false, cont_batching true, n_cache_reuse 0, cache_ram 8192 MiB, port 8080,
    host 127.0.0.1) and common/arg.cpp:1403 (llama-server's -np defaults to -1 = auto).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    ctx_size: int = Field(default=0, ge=0, description="-c; 0 = the model's trained context")
    parallel: int = Field(default=-1, ge=-1, description="-np; -1 = auto (4 slots, unified KV)")
    cache_type_k: str = Field(default="f16", description="-ctk")
    cache_type_v: str = Field(default="f16", description="-ctv")
    flash_attn: FlashAttn = FlashAttn.AUTO
    n_gpu_layers: int = Field(default=-1, description="-ngl; -1 = auto (fit decides), <= -2 = all")
    kv_unified: bool | None = Field(default=None, description="-kvu/-no-kvu; None = on only when -np is auto")
    swa_full: bool = False
    batch_size: int = Field(default=2048, ge=1, description="-b")
    ubatch_size: int = Field(default=512, ge=0, description="-ub; 0 = same as -b")
    no_kv_offload: bool = Field(default=False, description="-nkvo: keep every KV cache in host memory")
    fit: bool = Field(default=True, description="--fit: lower unset -c/-ngl to fit free device memory")
    kv_unified_per_slot: int = Field(default=0, ge=0, description="--kv-unified-per-slot")
    cont_batching: bool = True
    cache_reuse: int = Field(default=0, ge=0)
    cache_ram: int = Field(default=8192, ge=-1, description="--cache-ram in MiB (-1 no limit, 0 off)")
    metrics: bool = False
    api_key: str | None = None
    host: str = "127.0.0.1"
    port: int = Field(default=8080, ge=0, le=65535)
    # speculative decoding (common/arg.cpp --spec-*; defaults common/common.h common_params_speculative_draft)
    spec_type: tuple[str, ...] = Field(default=(), description="--spec-type names, e.g. draft-mtp, draft-eagle3")
    spec_draft_model: str | None = Field(default=None, description="-md / --spec-draft-model")
    spec_draft_n_max: int = Field(default=3, ge=0, description="--spec-draft-n-max")
    spec_draft_type_k: str = Field(default="f16", description="-ctkd / --spec-draft-type-k")
    spec_draft_type_v: str = Field(default="f16", description="-ctvd / --spec-draft-type-v")
    spec_draft_n_gpu_layers: int = Field(default=-1, description="-ngld / --spec-draft-ngl; -1 = auto, <= -2 = all")

    @field_validator("n_gpu_layers", "spec_draft_n_gpu_layers", mode="before")
    @classmethod
    def _layer_words(cls, value: object) -> object:
        """-ngl / -ngld take a count, 'auto' (-1) or 'all' (-2) (common/arg.cpp --n-gpu-layers, --spec-draft-ngl)."""
        return {"auto": -1, "all": -2}.get(value, value) if isinstance(value, str) else value

    @field_validator("spec_type", mode="before")
    @classmethod
    def _comma_list(cls, value: object) -> object:
        """--spec-type takes a comma-separated list (common/arg.cpp)."""
        if isinstance(value, str):
            return tuple(v.strip() for v in value.split(",") if v.strip())
        return value


class DeviceShare(Result):
    """What one device (an accelerator or the host) holds under the -ngl layer split."""

    device: str = Field(description="'gpu0', 'gpu1', ... or 'host'")
    repeating_layers: int = Field(description="transformer blocks whose weights sit on this device")
    holds_output_layer: bool
    kv_cache_bytes: int = Field(description="KV + recurrent-state bytes of those layers on this device")
    weights_bytes: int | None = Field(description="share of the weights; estimated by layer count, None if unknown")


class LlamaCppPlan(MemoryPlan):
    """llama.cpp's plan: the context it settles on and one cache entry per `llama_kv_cache` log line."""

    n_ctx: int = Field(description="total KV cells over all streams after padding (llama_context: n_ctx)")
    n_ctx_seq: int = Field(description="cells per stream (llama_context: n_ctx_seq)")
    n_seq: int = Field(description="sequences = slots (llama_context: n_seq_max)")
    n_stream: int = Field(description="KV streams: 1 when unified, else n_seq")
    kv_unified: bool
    n_batch: int
    n_ubatch: int
    n_ctx_slot: int = Field(description="context a llama-server slot may fill: n_ctx_seq capped by the trained context")
    flash_attn: FlashAttn = Field(description="flash attention as the memory was created (auto stays auto)")
    n_gpu_layers: int = Field(description="offloaded layers counting the output layer, as -ngl counts them")
    devices: list[DeviceShare] = Field(default_factory=list)
    draft: LlamaCppPlan | None = Field(default=None, description="the -md draft model's own context (its caches, "
                                       "devices and weights); None without -md or when the draft is not known")

    def accelerator_loads_bytes(self) -> list[int]:
        """KV + weight bytes the -ngl split puts on each GPU (the host's share left out)."""
        return [d.kv_cache_bytes + (d.weights_bytes or 0) for d in self.devices if d.device != "host"]


class LlamaCppDraft(BaseModel):
    """The model -md loads: its geometry and weight bytes (a GGUF header gives both)."""

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    arch: ModelArchitecture
    weights_bytes: int | None = Field(default=None, ge=0)
    source: str = ""


def llamacpp_log_mib(n_bytes: int) -> float:
    """The MiB figure llama.cpp prints for a byte count: (float)bytes / (1024.0f*1024.0f), a float32 value."""
    return float(np.float32(n_bytes) / np.float32(MIB))


def ggml_row_bytes(type_name: str, n_elements: int) -> int:
    """Bytes of one ggml row of `n_elements` values of a cache type (ggml_row_size; the one ggml byte rule,
    `calculators.model.ggml_types.ggml_tensor_bytes`, for the types -ctk/-ctv accept)."""
    return ggml_tensor_bytes(_cache_type(type_name), n_elements)


def _cache_type(type_name: str) -> str:
    if type_name not in KV_CACHE_TYPES:
        raise ServewiseInputError(
            _("unknown llama.cpp cache type '{type_name}'; -ctk/-ctv accept {kv_cache_types}").format(
              type_name=type_name, kv_cache_types=', '.join(KV_CACHE_TYPES))
        )
    return type_name


def _is_quantized(type_name: str) -> bool:
    return ggml_block(_cache_type(type_name)).block_values > 1


def _pad(value: int, multiple: int) -> int:
    """GGML_PAD: round up to a multiple."""
    return (value + multiple - 1) // multiple * multiple


def _refusal(arch: ModelArchitecture, s: LlamaCppSettings) -> str | None:
    """The error llama_init_from_model logs before returning NULL (src/llama-context.cpp:3835-3870)."""
    if arch.layers_of(LayerKind.MLA) and s.cache_type_k != s.cache_type_v:
        return _("model does not support different K ({type_k}) and V ({type_v}) cache types").format(
            type_k=s.cache_type_k, type_v=s.cache_type_v)
    if _is_quantized(s.cache_type_v) and s.flash_attn is FlashAttn.OFF:
        return _("quantized V cache requires flash_attn to be enabled")
    if s.flash_attn is not FlashAttn.OFF:
        for index, (type_name, label) in enumerate(((s.cache_type_k, "k"), (s.cache_type_v, "v"))):
            block = ggml_block(_cache_type(type_name)).block_values
            for layer in dict.fromkeys(arch.layers):
                head = _head_sizes(layer)[index]
                if head % block:
                    return _("{kv} cache type {type_name} with block size {block} does not divide "
                             "n_embd_head_{label}={head}").format(
                                 kv=label.upper(), type_name=type_name, block=block, label=label, head=head)
    return None


def _head_sizes(layer: LayerGeometry) -> tuple[int, int]:
    """llama.cpp's n_embd_head_k / n_embd_head_v of a layer; an MLA layer is one head of latent + rope key."""
    if layer.kind is LayerKind.MLA:
        return layer.kv_lora_rank + layer.qk_rope_head_dim, layer.kv_lora_rank
    return layer.head_dim_k, layer.head_dim_v


def _resolve_context(
    arch: ModelArchitecture, s: LlamaCppSettings, n_seq: int, kv_unified: bool
) -> tuple[int, int, int]:
    """(requested n_ctx before padding, n_ctx, n_ctx_seq) as llama_context settles them.

    src/llama-context.cpp:133 (0 = trained context) and :290-306 (pad to 256; per-stream split).
    """
    n_stream = 1 if kv_unified else n_seq
    requested = s.ctx_size
    if requested == 0 and s.kv_unified_per_slot > 0:
        requested = n_seq * s.kv_unified_per_slot  # tools/server/server.cpp:166-171
    if requested == 0:
        if not arch.max_context_tokens:
            raise ServewiseInputError(_("-c 0 asks for the trained context, but this model does not state one"))
        # --fit resolves an unset context to the trained context for every stream (common/fit.cpp:265-279);
        # without --fit llama_context uses the trained context in total (src/llama-context.cpp:133).
        requested = arch.max_context_tokens * (n_stream if s.fit else 1)
    n_ctx = _pad(requested, CTX_PAD_TOKENS)
    if kv_unified:
        return requested, n_ctx, n_ctx
    n_ctx_seq = _pad(n_ctx // n_seq, CTX_PAD_TOKENS)
    return requested, n_ctx_seq * n_seq, n_ctx_seq


def _sliding_window(arch: ModelArchitecture) -> tuple[int, list[PlanNote]]:
    """llama.cpp keeps one n_swa per model; take the sliding layers' window (the largest if they differ)."""
    windows = {layer.sliding_window_tokens for layer in arch.layers_of(LayerKind.SLIDING)}
    if None in windows or 0 in windows:
        raise ServewiseInputError(_("{name}: a sliding-window layer has no window size").format(name=arch.name))
    windows_set = {w for w in windows if w is not None}  # the same set: None was refused just above
    notes = []
    if len(windows) > 1:
        notes.append(
            PlanNote(
                code="llamacpp_one_window",
                message=_("llama.cpp keeps one sliding window per model; using the largest of {windows_set}").format(
                          windows_set=sorted(windows_set)),
            )
        )
    return max(windows_set), notes


def _v_row_elements(layer: LayerGeometry, v_trans: bool, v_max: int) -> int:
    # src/llama-kv-cache.cpp:208-210 [TAG_V_CACHE_VARIABLE]: without flash attention V is stored transposed and
    # every layer's V row is padded to the widest V of the model.
    return v_max if v_trans else layer.v_elements_per_token


def _row_bytes(layer: LayerGeometry, s: LlamaCppSettings, v_trans: bool, v_max: int) -> tuple[int, int]:
    """K and V bytes one attention layer stores per cell (MLA caches no V: has_v = !is_mla, kv-cache.cpp:231)."""
    k = ggml_row_bytes(s.cache_type_k, layer.k_elements_per_token)
    if layer.kind is LayerKind.MLA:
        return k, 0
    return k, ggml_row_bytes(s.cache_type_v, _v_row_elements(layer, v_trans, v_max))


def resolved_flash_attn(s: LlamaCppSettings) -> FlashAttn:
    """Flash attention as the caches are created: auto becomes on for a quantized V (llama-context.cpp:3840-3849)."""
    if _is_quantized(s.cache_type_v) and s.flash_attn is FlashAttn.AUTO:
        return FlashAttn.ON
    return s.flash_attn


def rows_by_geometry(
    arch: ModelArchitecture, s: LlamaCppSettings, v_trans: bool
) -> dict[LayerGeometry, tuple[int, int]]:
    """K and V row bytes of each distinct attention layer shape of the model."""
    v_max = _v_max(arch)
    return {
        layer: _row_bytes(layer, s, v_trans, v_max)
        for layer in dict.fromkeys(arch.layers)
        if layer.kind is not LayerKind.RECURRENT
    }


def _kv_cache(
    name: str,
    layers: tuple[LayerGeometry, ...],
    cells: int,
    s: LlamaCppSettings,
    n_seq: int,
    n_stream: int,
    row_bytes: dict[LayerGeometry, tuple[int, int]],
) -> tuple[CacheAllocation, list[int]]:
    """One llama_kv_cache: K/V tensors of [row, cells, n_stream] per layer (src/llama-kv-cache.cpp:233-234)."""
    rows = [row_bytes[layer] for layer in layers]
    cache = CacheAllocation(
        name=name,
        layers=len(layers),
        cells=cells,
        seqs=n_seq,
        type_k=s.cache_type_k,
        type_v=s.cache_type_v,
        k_bytes=sum(k for k, _ in rows) * cells * n_stream,
        v_bytes=sum(v for _, v in rows) * cells * n_stream,
    )
    return cache, [(k + v) * cells * n_stream for k, v in rows]


def rs_snapshot_rows(family: str, s: LlamaCppSettings) -> int:
    """n_rs_seq: extra recurrent-state rows per sequence for speculative rollback (0 without such drafting)."""
    if family in RS_ROLLBACK_FAMILIES and RS_ROLLBACK_SPEC_TYPES.intersection(s.spec_type):
        return s.spec_draft_n_max
    return 0


def _recurrent_cache(
    layers: tuple[LayerGeometry, ...], n_seq: int, n_layer_model: int, n_rs_seq: int = 0
) -> tuple[CacheAllocation, list[int]]:
    """llama_memory_recurrent: R and S rows of f32 per sequence slot (src/llama-memory-recurrent.cpp:101-103).

    `layers` reports the model's whole layer count, as llama.cpp's log line does (its n_layer,
    src/llama-memory-recurrent.cpp:29 and :133), even when only some layers hold state.
    """
    cells = max(1, n_seq)  # src/llama-model.cpp:2675 (rs_size = max(1, n_seq_max))
    row = ggml_row_bytes(RECURRENT_STATE_TYPE, 1) * (1 + n_rs_seq)  # rows x (1 + n_rs_seq), :101
    r = [layer.recurrent_conv_elements * row * cells for layer in layers]
    st = [layer.recurrent_state_elements * row * cells for layer in layers]
    cache = CacheAllocation(
        name="recurrent",
        layers=n_layer_model,
        cells=cells,
        seqs=n_seq,
        type_k=RECURRENT_STATE_TYPE,
        type_v=RECURRENT_STATE_TYPE,
        k_bytes=sum(r),
        v_bytes=sum(st),
    )
    return cache, [a + b for a, b in zip(r, st, strict=True)]


def _layer_devices(n_layer: int, n_gpu_layers: int, n_gpus: int) -> tuple[list[int | None], int | None]:
    """Device index of every block and of the output layer; None = host (src/llama-model.cpp:1589-1611).

    The last `n_gpu_layers` of the n_layer + 1 layers (blocks, then output) go to the GPUs, split in
    proportion to free memory — equal shares here, since the devices of a `Machine` are identical.
    """
    i_gpu_start = max(n_layer + 1 - n_gpu_layers, 0)
    act = min(n_gpu_layers, n_layer + 1) if n_gpus else 0
    # float32 like the C code: splits are cumulative shares, a layer goes to the first split above its position
    splits = np.cumsum(np.ones(n_gpus, dtype=np.float32), dtype=np.float32) / np.float32(max(n_gpus, 1))
    positions = (np.arange(n_layer + 1, dtype=np.float32) - np.float32(i_gpu_start)) / np.float32(max(act, 1))
    on_gpu = (np.arange(n_layer + 1) >= i_gpu_start) & (np.arange(n_layer + 1) - i_gpu_start < act)
    index = np.searchsorted(splits, positions, side="right")
    devices = [int(i) if gpu else None for i, gpu in zip(index, on_gpu, strict=True)]
    return devices[:n_layer], devices[n_layer]


def plan_llamacpp(
    arch: ModelArchitecture,
    settings: LlamaCppSettings | None = None,
    machine: Machine | None = None,
    weights_bytes: int | None = None,
    draft: LlamaCppDraft | None = None,
) -> LlamaCppPlan:
    """The memory llama-server allocates for `arch` with `settings`: caches exact to the byte, weights split by -ngl.

    Caches follow llama.cpp's log lines (one per `llama_kv_cache`/`llama_memory_recurrent`), in bytes.
    `weights_bytes` (e.g. a GGUF's tensor bytes) is split between devices by layer count — an estimate,
    flagged inexact. Compute buffers are not modelled. With a `machine`, --fit (on by default) may
    lower an unset -c first, as llama-server does before loading. When llama.cpp would refuse these
    settings the plan is still returned, with `refusal` in llama.cpp's words.

    With -md the draft model's own context is planned beside the target's (`plan.draft`, its bytes added to
    the components): from `draft` when given, else from the -md path's GGUF header when that file can be read.
    """
    s = settings or LlamaCppSettings()
    if machine is None or not s.fit:
        return _with_draft(_plan(arch, s, machine, weights_bytes), s, machine, draft)
    fit_notes = []
    fitted_ctx = _fit_context(arch, s, machine, weights_bytes)
    if fitted_ctx is not None:
        s = s.model_copy(update={"ctx_size": fitted_ctx})
        fit_notes.append(
            PlanNote(
                code="llamacpp_fit_context",
                message=(
                    _("--fit lowers the unset context to {fitted_ctx}\u00a0tokens to keep {fit_margin_bytes}\u00a0MiB "
                      "free per device (estimate: llama.cpp also counts its compute buffers)").format(
                      fitted_ctx=fitted_ctx, fit_margin_bytes=FIT_MARGIN_BYTES // MIB)
                ),
            )
        )
    fitted_layers = _fit_layers(arch, s, machine, weights_bytes)
    if fitted_layers is not None:
        s = s.model_copy(update={"n_gpu_layers": fitted_layers})
        fit_notes.append(
            PlanNote(
                code="llamacpp_fit_layers",
                message=(
                    _("--fit offloads {fitted_layers} of {n_layers} layers (output layer included) and "
                      "keeps the rest in host memory (estimate: weights shared out by layer count, compute "
                      "buffers not counted)").format(fitted_layers=fitted_layers, n_layers=arch.n_layers + 1)
                ),
            )
        )
    plan = _plan(arch, s, machine, weights_bytes)
    return _with_draft(plan.model_copy(update={"notes": [*fit_notes, *plan.notes]}), s, machine, draft)


def _fit_layers(
    arch: ModelArchitecture, s: LlamaCppSettings, machine: Machine, weights_bytes: int | None
) -> int | None:
    """With -ngl auto, the most layers --fit can offload keeping 1 GiB free per GPU; None = all fit or -ngl set.

    common/fit.cpp:462-880 (step 3) places layers device by device; this estimate searches the
    largest -ngl whose equal split leaves every GPU its margin.
    """
    if s.n_gpu_layers != -1:
        return None  # common/fit.cpp:463-465: "n_gpu_layers already set by user"

    def fits(n_gpu_layers: int) -> bool:
        plan = _plan(arch, s.model_copy(update={"n_gpu_layers": n_gpu_layers}), machine, weights_bytes)
        limit = machine.device_memory_bytes - FIT_MARGIN_BYTES
        return all(_devices_used([d]) <= limit for d in plan.devices if d.device != "host")

    low, high = 0, arch.n_layers + 1
    if fits(high):
        return None
    while low < high:  # the largest count that fits; 0 always "fits" (nothing on the GPUs)
        middle = (low + high + 1) // 2
        if fits(middle):
            low = middle
        else:
            high = middle - 1
    return low


def _fit_context(
    arch: ModelArchitecture, s: LlamaCppSettings, machine: Machine, weights_bytes: int | None
) -> int | None:
    """The context --fit settles on when -c is unset and the devices would keep under 1 GiB free; None = unchanged.

    common/fit.cpp:265-455 (step 2): with every device short of its margin in total, interpolate
    linearly between the context at 4096 tokens per stream and the trained context, then align down
    to 256 x streams. Device use here is weights plus caches (no compute buffers).
    """
    if s.ctx_size or s.kv_unified_per_slot or not arch.max_context_tokens:
        return None
    at_max = _plan(arch, s, machine, weights_bytes)
    n_streams = at_max.n_stream
    n_ctx_max = arch.max_context_tokens * n_streams
    n_ctx_min = FIT_MIN_CTX_TOKENS * n_streams
    gpus = [d for d in at_max.devices if d.device != "host"]
    used_max = _devices_used(gpus)
    target = (machine.device_memory_bytes - FIT_MARGIN_BYTES) * len(gpus)
    if n_ctx_max <= n_ctx_min or used_max <= target:
        return None
    if len(gpus) > 1:
        # common/fit.cpp:403-411: expect half a layer wasted per device (a sixth of one for MoE models)
        model_per_layer = sum(d.weights_bytes or 0 for d in gpus) // max(min(at_max.n_gpu_layers, arch.n_layers + 1), 1)
        target -= (len(gpus) + 1) * model_per_layer // (6 if arch.moe else 2)
    at_min = _plan(arch, s.model_copy(update={"ctx_size": n_ctx_min}), machine, weights_bytes)
    used_min = _devices_used([d for d in at_min.devices if d.device != "host"])
    if target <= used_min or used_max == used_min:
        return n_ctx_min
    n_ctx = n_ctx_min + (n_ctx_max - n_ctx_min) * (target - used_min) // (used_max - used_min)
    align = CTX_PAD_TOKENS * n_streams
    return max(n_ctx - n_ctx % align, n_ctx_min)


def _devices_used(devices: list[DeviceShare]) -> int:
    """Weights plus caches on the given devices (bytes)."""
    return sum(d.kv_cache_bytes + (d.weights_bytes or 0) for d in devices)


def _plan(
    arch: ModelArchitecture, s: LlamaCppSettings, machine: Machine | None, weights_bytes: int | None
) -> LlamaCppPlan:
    """plan_llamacpp for settings whose context --fit no longer changes."""
    for type_name in (s.cache_type_k, s.cache_type_v):
        _cache_type(type_name)
    if s.parallel == 0:
        raise ServewiseInputError(_("-np 0 is not valid: use -1 for auto or a positive number of slots"))
    if weights_bytes is not None and weights_bytes < 0:
        raise ServewiseInputError(_("weights bytes cannot be negative"))

    notes: list[PlanNote] = []
    auto_parallel = s.parallel == -1
    n_seq = SERVER_AUTO_PARALLEL if auto_parallel else s.parallel
    if n_seq > LLAMA_MAX_SEQ:
        raise ServewiseInputError(_("-np {n_seq} exceeds llama.cpp's limit of {llama_max_seq} sequences").format(
                                    n_seq=n_seq, llama_max_seq=LLAMA_MAX_SEQ))
    kv_unified = s.kv_unified if s.kv_unified is not None else auto_parallel
    n_stream = 1 if kv_unified else n_seq

    requested_ctx, n_ctx, n_ctx_seq = _resolve_context(arch, s, n_seq, kv_unified)
    refusal = _refusal(arch, s)

    # src/llama-context.cpp:246-248: the batch is capped by the (unpadded) context, the ubatch by the batch.
    n_batch = min(requested_ctx, s.batch_size)
    n_ubatch = min(n_batch, s.ubatch_size or s.batch_size)

    flash_attn = resolved_flash_attn(s)
    if flash_attn is not s.flash_attn:
        notes.append(PlanNote(code="llamacpp_fa_forced", message=_("a quantized V cache turns flash attention on")))
    v_trans = flash_attn is FlashAttn.OFF  # memory is created with flash_attn = (type != DISABLED), :230

    caches, layer_bytes, cache_notes = _caches(arch, s, n_seq, kv_unified, n_ctx_seq, n_ubatch, v_trans)
    notes.extend(cache_notes)
    row_bytes = rows_by_geometry(arch, s, v_trans)
    kv_bytes_per_token = (
        0
        if arch.is_embedding_model
        else sum(sum(row_bytes[layer]) for layer in arch.layers if layer.kind is not LayerKind.RECURRENT)
    )
    kv_total = sum(c.total_bytes for c in caches if c.name != "recurrent")

    n_layer = arch.n_layers
    n_gpus = machine.n_devices if machine else 1
    # src/llama-model.cpp:2004 (-1 and <= -2 both mean every layer)
    n_gpu_layers = s.n_gpu_layers if s.n_gpu_layers >= 0 else n_layer + 1
    block_devices, output_device = _layer_devices(n_layer, n_gpu_layers, n_gpus)
    devices = _device_shares(block_devices, output_device, layer_bytes, n_gpus, s, weights_bytes, n_layer)

    components, capacity = _components(devices, machine)
    if machine is not None and s.fit:
        notes.extend(_fit_notes(devices, machine, s))

    return LlamaCppPlan(
        engine=ENGINE_ID,
        kv_bytes_per_token=kv_bytes_per_token,
        kv_cache_bytes=kv_total,
        weights_bytes=weights_bytes,
        caches=caches,
        components=components,
        device_capacity_bytes=capacity,
        refusal=refusal,
        notes=notes,
        n_ctx=n_ctx,
        n_ctx_seq=n_ctx_seq,
        n_seq=n_seq,
        n_stream=n_stream,
        kv_unified=kv_unified,
        n_batch=n_batch,
        n_ubatch=n_ubatch,
        n_ctx_slot=_slot_context(n_ctx_seq, s, arch),
        flash_attn=flash_attn,
        n_gpu_layers=min(n_gpu_layers, n_layer + 1),
        devices=devices,
    )


LayerGroup = list[tuple[int, LayerGeometry]]


def layer_groups(arch: ModelArchitecture) -> tuple[LayerGroup, LayerGroup, LayerGroup, list[PlanNote]]:
    """(full-cache, sliding-cache, recurrent) layers with their indices, as llama.cpp's create_memory splits them."""
    indexed = list(enumerate(arch.layers))
    swa_family = arch.family.lower() in LLAMACPP_SWA_FAMILIES or arch.family == TYPED_GEOMETRY_FAMILY
    base_kinds = (LayerKind.FULL, LayerKind.MLA) if swa_family else (LayerKind.FULL, LayerKind.MLA, LayerKind.SLIDING)
    base = [(i, layer) for i, layer in indexed if layer.kind in base_kinds]
    swa = [(i, layer) for i, layer in indexed if layer.kind is LayerKind.SLIDING and swa_family]
    # Falcon-H1's layers are attention and Mamba side by side: in both caches (create_memory filters)
    recurrent = [
        (i, layer) for i, layer in indexed if layer.kind is LayerKind.RECURRENT or layer.recurrent_state_elements
    ]
    notes = []
    if arch.layers_of(LayerKind.SLIDING) and not swa_family:
        notes.append(
            PlanNote(
                code="llamacpp_no_swa",
                message=_("llama.cpp's {family} model keeps the whole context on its sliding-window layers").format(
                          family=arch.family),
            )
        )
    return base, swa, recurrent, notes


def swa_cells(n_swa: int, n_ctx_seq: int, n_seq: int, kv_unified: bool, n_ubatch: int, s: LlamaCppSettings) -> int:
    """Cells of the sliding-window cache: window x seqs (if unified) + ubatch, padded
    (llama-kv-cache-iswa.cpp:71-81)."""
    if s.swa_full:
        return n_ctx_seq
    return _pad(min(n_ctx_seq, n_swa * (n_seq if kv_unified else 1) + n_ubatch), SWA_PAD_TOKENS)


def _v_max(arch: ModelArchitecture) -> int:
    """Widest V row of the model (hparams n_embd_v_gqa_max), what transposed V rows are padded to."""
    return max((layer.v_elements_per_token for layer in arch.layers), default=0)


def _caches(
    arch: ModelArchitecture,
    s: LlamaCppSettings,
    n_seq: int,
    kv_unified: bool,
    n_ctx_seq: int,
    n_ubatch: int,
    v_trans: bool,
) -> tuple[list[CacheAllocation], dict[int, int], list[PlanNote]]:
    """The caches src/llama-model.cpp:2352-2880 create_memory builds, with each layer's bytes by index."""
    notes: list[PlanNote] = []
    if arch.is_embedding_model:
        notes.append(PlanNote(code="llamacpp_no_kv", message=_("embedding models get no KV cache in llama.cpp")))
        return [], {}, notes
    n_stream = 1 if kv_unified else n_seq
    row_bytes = rows_by_geometry(arch, s, v_trans)
    base, swa, recurrent, group_notes = layer_groups(arch)
    notes.extend(group_notes)

    groups = [("kv", base, n_ctx_seq)] if base else []
    if swa:
        n_swa, window_notes = _sliding_window(arch)
        notes.extend(window_notes)
        groups = [("kv", base, n_ctx_seq), ("kv_swa", swa, swa_cells(n_swa, n_ctx_seq, n_seq, kv_unified, n_ubatch, s))]

    caches: list[CacheAllocation] = []
    layer_bytes: dict[int, int] = {}
    for name, members, cells in groups:
        cache, per_layer = _kv_cache(name, tuple(layer for _, layer in members), cells, s, n_seq, n_stream, row_bytes)
        caches.append(cache)
        layer_bytes.update({i: b for (i, _), b in zip(members, per_layer, strict=True)})
    if recurrent:
        n_rs_seq = rs_snapshot_rows(arch.family, s)
        cache, per_layer = _recurrent_cache(tuple(layer for _, layer in recurrent), n_seq, arch.n_layers, n_rs_seq)
        if n_rs_seq:
            notes.append(PlanNote(code="llamacpp_rs_seq", message=(
                _("speculative decoding keeps {n_rs_seq} extra recurrent-state snapshots per sequence "
                  "(n_rs_seq = --spec-draft-n-max), so the state can be rolled back to the last accepted "
                  "draft token").format(n_rs_seq=n_rs_seq))))
        caches.append(cache)
        for (i, _unused), b in zip(recurrent, per_layer, strict=True):
            layer_bytes[i] = layer_bytes.get(i, 0) + b  # Falcon-H1 layers also hold KV
        if len(recurrent) < arch.n_layers:
            notes.append(
                PlanNote(
                    code="llamacpp_recurrent_layers",
                    message=(
                        _("the recurrent cache counts all {n_layers} layers, as llama.cpp prints it; "
                          "{n_recurrent} of them hold state").format(n_layers=arch.n_layers, n_recurrent=len(recurrent))
                    ),
                )
            )
    return caches, layer_bytes, notes


def _slot_context(n_ctx_seq: int, s: LlamaCppSettings, arch: ModelArchitecture) -> int:
    """Tokens one llama-server slot may hold (tools/server/server-context.cpp:4007-4015 n_ctx_slot)."""
    limits = [n_ctx_seq]
    if s.kv_unified_per_slot > 0:
        limits.append(s.kv_unified_per_slot)
    if arch.max_context_tokens:
        limits.append(arch.max_context_tokens)
    return min(limits)


def _device_shares(
    block_devices: list[int | None],
    output_device: int | None,
    layer_bytes: dict[int, int],
    n_gpus: int,
    s: LlamaCppSettings,
    weights_bytes: int | None,
    n_layer: int,
) -> list[DeviceShare]:
    """Per-device layers, caches (on the layer's device unless -nkvo) and a by-layer weights estimate."""
    names = [f"gpu{i}" for i in range(n_gpus)] + ["host"]
    host = n_gpus
    shares = []
    for d, name in enumerate(names):
        blocks = [il for il, dev in enumerate(block_devices) if (host if dev is None else dev) == d]
        kv_layers = blocks if not s.no_kv_offload else (list(range(n_layer)) if d == host else [])
        holds_output = (host if output_device is None else output_device) == d
        weights = None
        if weights_bytes is not None and n_layer:
            weights = weights_bytes * len(blocks) // n_layer
        shares.append(
            DeviceShare(
                device=name,
                repeating_layers=len(blocks),
                holds_output_layer=holds_output,
                kv_cache_bytes=sum(layer_bytes.get(il, 0) for il in kv_layers),
                weights_bytes=weights,
            )
        )
    return shares


def _busiest(devices: list[DeviceShare]) -> DeviceShare:
    """The accelerator using the most memory (the host when nothing is offloaded): the one the components show."""
    offloaded = [d for d in devices if d.device != "host" and (d.repeating_layers or d.kv_cache_bytes)]
    return max(offloaded, key=lambda d: _devices_used([d])) if offloaded else devices[-1]


def _components(devices: list[DeviceShare], machine: Machine | None) -> tuple[list[MemoryComponent], int | None]:
    """Components of the busiest accelerator (or of the host when nothing is offloaded)."""
    target = _busiest(devices)
    components = [
        MemoryComponent(
            kind=ComponentKind.KV_CACHE,
            label=_("KV and recurrent caches on {device}").format(device=target.device),
            bytes=target.kv_cache_bytes,
            exact=True,
            basis=_("{llamacpp_source} src/llama-kv-cache.cpp:233-234, "
                    "src/llama-memory-recurrent.cpp:101-103").format(llamacpp_source=LLAMACPP_SOURCE),
        )
    ]
    if target.weights_bytes is not None:
        components.insert(
            0,
            MemoryComponent(
                kind=ComponentKind.WEIGHTS,
                label=_("weights of {repeating_layers} blocks on {device}").format(
                        repeating_layers=target.repeating_layers, device=target.device),
                bytes=target.weights_bytes,
                exact=False,
                basis=_("weights bytes shared out by layer count (embeddings and output not separated)"),
            ),
        )
    capacity = None
    if machine is not None and target.device != "host":
        capacity = machine.device_memory_bytes
        used = sum(c.bytes for c in components)
        components.append(
            MemoryComponent(
                kind=ComponentKind.FREE,
                label=_("left on {device} before compute buffers").format(device=target.device),
                bytes=max(capacity - used, 0),
                exact=False,
                basis=_("device memory minus the components above; compute buffers are not modelled"),
            )
        )
    return components, capacity


def _fit_notes(devices: list[DeviceShare], machine: Machine, s: LlamaCppSettings) -> list[PlanNote]:
    """--fit (on by default) lowers unset -c / -ngl when a device would keep less than 1 GiB free."""
    limit = machine.device_memory_bytes - FIT_MARGIN_BYTES
    over = [d.device for d in devices if d.device != "host" and _devices_used([d]) > limit]
    if not over:
        return []
    adjustable = [name for name, unset in (("-c", s.ctx_size == 0), ("-ngl", s.n_gpu_layers == -1)) if unset]
    if adjustable:
        message = _("{devices} would keep under 1\u00a0GiB free; --fit would lower {knobs} (context not below "
                    "{min_ctx} per stream) before loading").format(
                        devices=", ".join(over), knobs=" / ".join(adjustable), min_ctx=FIT_MIN_CTX_TOKENS)
    else:
        message = _("{devices} would keep under 1\u00a0GiB free and -c/-ngl are set, so --fit cannot help").format(
            devices=", ".join(over))
    return [PlanNote(code="llamacpp_fit_would_reduce", message=message)]


def mtp_draft_architecture(arch: ModelArchitecture) -> ModelArchitecture:
    """The layers an MTP drafting context caches: the model's nextn layers, as plain attention layers.

    src/llama-model.cpp create_memory: a LLAMA_CONTEXT_TYPE_MTP context on Qwen3-Next / Qwen3.5 / Nemotron-H
    keeps a plain KV cache filtered to il >= n_layer (the MTP blocks), not the hybrid memory.
    """
    if arch.mtp_layers <= 0:
        raise ServewiseInputError(_("--spec-type draft-mtp needs a model whose GGUF has MTP (nextn) layers"))
    attention = arch.layers_of(LayerKind.FULL, LayerKind.MLA)
    if not attention:
        raise ServewiseInputError(_("the model has no attention layer for its MTP layers to copy"))
    return replace(arch, name=f"{arch.name} MTP", layers=(attention[0],) * arch.mtp_layers, mtp_layers=0, moe=None)


def plan_llamacpp_draft(
    draft_arch: ModelArchitecture,
    settings: LlamaCppSettings,
    weights_bytes: int | None = None,
    *,
    target_n_ctx: int | None = None,
    machine: Machine | None = None,
) -> LlamaCppPlan:
    """The drafter's own context next to the target's (tools/server/server-context.cpp load_model), in bytes.

    common/speculative.cpp common_base_params_to_speculative copies the target's parameters (slots, unified
    KV, flash attention, batch sizes) and swaps in the draft model, its -ngld and its cache types (-ctkd/-ctvd,
    f16 by default); common_speculative_init_result then sets the draft context's n_ctx to the target
    context's (`target_n_ctx`, llama_n_ctx(ctx_tgt): padded, over all streams; None = the settings' -c is
    the target's already) and n_rs_seq = 0. There is no draft context-size flag at 0c1e57098. An MTP
    context runs on the target's weights (pass `mtp_draft_architecture(arch)` and no weights).
    """
    update: dict[str, object] = {
        "cache_type_k": settings.spec_draft_type_k, "cache_type_v": settings.spec_draft_type_v,
        "n_gpu_layers": settings.spec_draft_n_gpu_layers, "spec_type": (), "spec_draft_model": None, "fit": False,
    }
    if target_n_ctx is not None:
        update |= {"ctx_size": target_n_ctx, "kv_unified_per_slot": 0}
    return _plan(draft_arch, settings.model_copy(update=update), machine, weights_bytes)


def draft_from_path(path: str) -> LlamaCppDraft | None:
    """The draft model an -md path names, from its GGUF header; None when no such file can be read here."""
    from calculators.model.gguf import read_gguf_header

    if not path.lower().endswith(".gguf") or not Path(path).is_file():
        return None
    header = read_gguf_header(path)
    return LlamaCppDraft(arch=header.architecture, weights_bytes=header.weights_bytes, source=f"GGUF header {path}")


def _with_draft(
    plan: LlamaCppPlan, s: LlamaCppSettings, machine: Machine | None, draft: LlamaCppDraft | None
) -> LlamaCppPlan:
    """The target's plan with the -md draft context's caches and weights added on the busiest device."""
    if s.spec_draft_model is None:
        return plan
    sidecar = sorted(RS_ROLLBACK_SPEC_TYPES.intersection(s.spec_type))
    if sidecar:  # an MTP / EAGLE-3 / DFlash head: its context type builds other caches (src/llama-model.cpp)
        return plan.model_copy(update={"notes": [*plan.notes, PlanNote(code="llamacpp_draft_context", message=(
            _("-md {spec_draft_model} with --spec-type {sidecar}: the head's own context (its context type "
              "keeps only the head's layers, src/llama-model.cpp create_memory) is not in this plan").format(
              spec_draft_model=s.spec_draft_model, sidecar=','.join(sidecar))))]})
    draft = draft or draft_from_path(s.spec_draft_model)
    if draft is None:
        return plan.model_copy(update={"notes": [*plan.notes, PlanNote(code="llamacpp_draft_context", message=(
            _("-md {spec_draft_model}: the draft model gets a context of its own ({n_ctx} cells, these "
              "slots, cache types -ctkd {spec_draft_type_k} / -ctvd {spec_draft_type_v}); its file cannot "
              "be read here, so its weights and KV are not in this plan").format(
              spec_draft_model=s.spec_draft_model,
              n_ctx=plan.n_ctx,
              spec_draft_type_k=s.spec_draft_type_k,
              spec_draft_type_v=s.spec_draft_type_v)))]})
    dplan = plan_llamacpp_draft(draft.arch, s, draft.weights_bytes, target_n_ctx=plan.n_ctx, machine=machine)
    busiest = _busiest(plan.devices)
    share = next((d for d in dplan.devices if d.device == busiest.device), None)
    components = [c for c in plan.components if c.kind is not ComponentKind.FREE]
    if share is not None and share.kv_cache_bytes:
        components.append(MemoryComponent(
            kind=ComponentKind.KV_CACHE, label=_("draft context's KV on {device} (-md)").format(device=share.device),
            bytes=share.kv_cache_bytes, exact=True,
            basis=_("{llamacpp_source} common/speculative.cpp common_speculative_init_result (n_ctx = "
                    "target's)").format(llamacpp_source=LLAMACPP_SOURCE)))
    if share is not None and share.weights_bytes:
        components.append(MemoryComponent(
            kind=ComponentKind.WEIGHTS, label=_("draft model weights of {repeating_layers} blocks on "
                                                "{device} (-md)").format(
                                                repeating_layers=share.repeating_layers,
                                                device=share.device), bytes=share.weights_bytes, exact=False,
            basis=_("{value} shared out by layer count (-ngld)").format(value=draft.source or 'draft weights')))
    if plan.device_capacity_bytes is not None:
        used = sum(c.bytes for c in components)
        components.append(MemoryComponent(
            kind=ComponentKind.FREE, label=_("left on {device} before compute buffers").format(device=busiest.device),
            bytes=max(plan.device_capacity_bytes - used, 0), exact=False,
            basis=_("device memory minus the components above (target and draft); compute buffers are not modelled")))
    notes = [*plan.notes, PlanNote(code="llamacpp_draft_context", message=(
        ngettext("-md {model}: the draft model's own context holds {cells} cells for {slots} slot ({mib}\u00a0MiB of "
                 "{kv_type} KV); its weights load beside the target's",
                 "-md {model}: the draft model's own context holds {cells} cells for {slots} slots ({mib}\u00a0MiB of "
                 "{kv_type} KV); its weights load beside the target's", dplan.n_seq).format(
            model=s.spec_draft_model, cells=number(dplan.n_ctx), slots=number(dplan.n_seq),
            mib=number(dplan.kv_cache_bytes / MIB, 2), kv_type=dplan.caches[0].type_k if dplan.caches else "-")
        + ("; " + _("--fit here does not count the draft (llama.cpp fits both together, common/fit.cpp)")
           if s.fit and machine is not None else "")))]
    if dplan.refusal:
        notes.append(PlanNote(code="llamacpp_draft_refused", message=_("the draft context: {refusal}").format(
            refusal=dplan.refusal)))
    return plan.model_copy(update={"draft": dplan, "components": components, "notes": notes,
                                   "refusal": plan.refusal or (f"draft context: {dplan.refusal}" if dplan.refusal
                                                               else None)})


def without_speculation(settings):
    """-md and --spec-type removed (None when the settings have neither)."""
    if settings.spec_draft_model is None and not settings.spec_type:
        return None
    return settings.model_copy(update={"spec_draft_model": None, "spec_type": ()})
