"""vLLM's Mamba / linear-attention state: its page per layer, its dtypes, and how hybrid models align pages.

Read from vLLM v0.33.0 (the PyPI wheel, vllm/_version.py commit g4ba787ec9), file by file:
- vllm/model_executor/layers/mamba/mamba_utils.py - MambaStateShapeCalculator (conv state (conv_kernel - 1 +
  num_speculative_tokens, channels / tp); temporal state (heads / tp, head_dim, state)) and
  MambaStateDtypeCalculator (conv dtype = --mamba-cache-dtype, "auto" = model dtype; temporal dtype =
  --mamba-ssm-cache-dtype, "auto" = the conv dtype; KDA's recurrent state defaults to float32).
- vllm/model_executor/models/config.py - MambaModelConfig: prefix caching on => mamba_cache_mode "align" and
  mamba_block_size = block_size; off => mode "none" and mamba_block_size = max_model_len.
  NemotronHForCausalLMConfig: --mamba-ssm-cache-dtype auto becomes the config's mamba_ssm_cache_dtype or
  float32; Qwen3_5ForConditionalGenerationConfig: auto becomes the config's mamba_ssm_dtype when it has one.
- vllm/platforms/interface.py _align_hybrid_block_size - the attention block grows to the smallest multiple
  of the kernel alignment whose page holds one Mamba state; the Mamba page is then padded to the attention
  page ("Padding mamba page size by X% ...").
- vllm/v1/kv_cache_interface.py MambaSpec - page = sum(prod(shape) x dtype size) (or the padded page); a request
  holds 1 + num_speculative_blocks pages per Mamba layer in mode "none", 2 + num_speculative_blocks +
  num_prefill_checkpoint_blocks in mode "align".
- vllm/model_executor/layers/mamba/mamba_mixer2.py get_kv_cache_spec - Mamba2 layers export one prefill
  checkpoint block; vllm/model_executor/layers/mamba/gdn/qwen_gdn_linear_attn.py - Gated DeltaNet layers do
  only with FlashInfer's GDN prefill (CUDA Hopper, or Blackwell with 128-wide keys), which also makes Mamba
  blocks multiples of 64 tokens (FLASHINFER_GDN_CHECKPOINT_ALIGNMENT, vllm/v1/attention/backends/gdn_attn.py).
- vllm/platforms/cpu.py - the CPU build's default block size is 128 and, on CPUs with AVX-512 BF16, it resets
  --mamba-ssm-cache-dtype to float32 unless the model's GDN state already uses the half type asked for.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import ceil, lcm, prod
from typing import Literal

from calculators.engines.vllm.arg_utils import VllmSettings
from calculators.engines.vllm.cache_config import MODEL_DTYPE_BYTES
from calculators.engines.vllm.kv_cache_interface import KVCacheSpec, layer_spec
from calculators.engines.vllm.platforms import VllmPlatform
from calculators.errors import ServewiseInputError
from calculators.hardware.machine import Machine
from calculators.i18n import _, ngettext
from calculators.memory.plan import PlanNote
from calculators.model.architecture import LayerKind, ModelArchitecture, RecurrentGeometry
from calculators.units import number

MambaCacheMode = Literal["none", "align"]

_DTYPE_BYTES = {"float32": 4, "bfloat16": 2, "float16": 2}

#: vllm/v1/attention/backends/gdn_attn.py FLASHINFER_GDN_CHECKPOINT_ALIGNMENT
FLASHINFER_GDN_CHECKPOINT_ALIGNMENT_TOKENS = 64


@dataclass(frozen=True)
class MambaStateDtypes:
    """Element sizes of the conv state and the temporal (SSM) state, with the names vLLM resolved."""

    conv: str
    ssm: str

    @property
    def conv_bytes(self) -> int:
        return _DTYPE_BYTES[self.conv]

    @property
    def ssm_bytes(self) -> int:
        return _DTYPE_BYTES[self.ssm]


def resolve_state_dtypes(
    family: str,
    mixer: str,
    model_dtype: str,
    mamba_cache_dtype: str = "auto",
    mamba_ssm_cache_dtype: str = "auto",
    config_ssm_dtype: str | None = None,
    *,
    cpu_resets_ssm_to_float32: bool = False,
) -> MambaStateDtypes:
    """The dtypes vLLM stores a model's recurrent state in (see the module docstring for each rule).

    `model_dtype` is "bfloat16", "float16" or "float32"; `config_ssm_dtype` is what config.json states
    (Nemotron-H `mamba_ssm_cache_dtype`, Qwen3.5 `mamba_ssm_dtype`), None when absent.
    """
    for name, value in (("--mamba-cache-dtype", mamba_cache_dtype), ("--mamba-ssm-cache-dtype", mamba_ssm_cache_dtype)):
        if value != "auto" and value not in _DTYPE_BYTES:
            raise ServewiseInputError(_("vLLM {name} takes auto, float32, bfloat16 or float16, not '{value}'").format(
                                        name=name, value=value))
    ssm_setting = mamba_ssm_cache_dtype
    if ssm_setting == "auto" and family == "nemotron_h":
        ssm_setting = config_ssm_dtype or "float32"
    elif ssm_setting == "auto" and family.startswith("qwen3_5") and config_ssm_dtype:
        ssm_setting = config_ssm_dtype
    conv = model_dtype if mamba_cache_dtype == "auto" else mamba_cache_dtype
    if cpu_resets_ssm_to_float32 and ssm_setting != "float32":
        keeps_half = ssm_setting in ("float16", "bfloat16") and mixer == "gated_deltanet" and _ssm_of(
            mixer, conv, ssm_setting) == ssm_setting
        if not keeps_half:
            ssm_setting = "float32"
    return MambaStateDtypes(conv=conv, ssm=_ssm_of(mixer, conv, ssm_setting))


def _ssm_of(mixer: str, conv: str, ssm_setting: str) -> str:
    if ssm_setting != "auto":
        return ssm_setting
    return "float32" if mixer == "kda" else conv


def state_shapes(geometry: RecurrentGeometry, tp: int, num_speculative_tokens: int = 0) -> tuple[tuple[int, ...], ...]:
    """The (conv, temporal) state shapes of one layer on one tensor-parallel rank, as vLLM builds them.

    Mamba2, Gated DeltaNet and KDA conv states keep `num_speculative_tokens` extra positions; Mamba1 does not
    (mamba1_state_shape takes no num_spec).
    """
    spec = 0 if geometry.mixer == "mamba1" else num_speculative_tokens
    conv = (geometry.conv_kernel - 1 + spec, geometry.conv_channels(tp))
    return conv, geometry.ssm_shape(tp)


def state_page_bytes(shapes: tuple[tuple[int, ...], ...], dtypes: MambaStateDtypes) -> int:
    """MambaSpec.page_size_bytes before padding: sum of prod(shape) x element size."""
    conv, ssm = shapes
    return prod(conv) * dtypes.conv_bytes + prod(ssm) * dtypes.ssm_bytes


@dataclass(frozen=True)
class HybridAlignment:
    """What _align_hybrid_block_size decided: the block size in force and the padded Mamba page."""

    block_size: int
    block_size_raised: bool
    mamba_page_bytes: int  # the state's own bytes
    padded_page_bytes: int  # = block_size x attention bytes per token (the page every layer uses)
    kernel_alignment_tokens: int

    @property
    def padding_percent(self) -> float:
        """The figure vLLM logs: 100 x (padded - real) / real."""
        return 100 * (self.padded_page_bytes - self.mamba_page_bytes) / self.mamba_page_bytes


def align_hybrid_block_size(
    block_size: int,
    attention_bytes_per_token: int,
    mamba_page_bytes: int,
    kernel_block_tokens: int,
    checkpoint_alignment_tokens: int | None = None,
) -> HybridAlignment:
    """vllm/platforms/interface.py _align_hybrid_block_size for one attention backend.

    `kernel_block_tokens` is the backend's smallest kernel block (FlashAttention / Triton 16, the CPU backend
    32); `checkpoint_alignment_tokens` applies in align mode when every Mamba layer exports prefill checkpoints
    at that alignment (FlashInfer GDN: 64). The block only grows: a --block-size already large enough stays.
    """
    alignment = max(kernel_block_tokens, block_size)
    if checkpoint_alignment_tokens:
        alignment = lcm(alignment, checkpoint_alignment_tokens)
    needed = alignment * ceil(mamba_page_bytes / (alignment * attention_bytes_per_token))
    needed = kernel_block_tokens * ceil(needed / kernel_block_tokens)
    raised = block_size < needed
    final = needed if raised else block_size
    return HybridAlignment(
        block_size=final,
        block_size_raised=raised,
        mamba_page_bytes=mamba_page_bytes,
        padded_page_bytes=final * attention_bytes_per_token,
        kernel_alignment_tokens=alignment,
    )


def mamba_blocks_per_request(mode: MambaCacheMode, num_speculative_tokens: int, prefill_checkpoint_blocks: int) -> int:
    """Pages one request holds per Mamba layer group (MambaSpec.max_memory_usage_bytes / page)."""
    if mode == "align":
        return 2 + num_speculative_tokens + prefill_checkpoint_blocks
    return 1 + num_speculative_tokens


def prefill_checkpoint_blocks(mixer: str, mode: MambaCacheMode, flashinfer_gdn: bool) -> int:
    """1 when the layer's spec carries a prefill checkpoint block (Mamba2 always; GDN with FlashInfer in align
    mode); the count only enters the per-request pages in align mode."""
    if mixer == "mamba2":
        return 1
    if mixer == "gated_deltanet" and flashinfer_gdn and mode == "align":
        return 1
    return 0


@dataclass(frozen=True)
class MambaLayout:
    """The Mamba spec every recurrent layer gets, the block size vLLM settles on, and why."""

    spec: KVCacheSpec
    block_size: int
    alignment: HybridAlignment | None
    dtypes: MambaStateDtypes
    shapes: tuple[tuple[int, ...], ...]
    mode: MambaCacheMode
    requested_block_size: int
    notes: tuple[PlanNote, ...]


def _attention_bytes_per_token(arch: ModelArchitecture, tp: int, dtype_bytes: int, kv_cache_dtype: str,
                               platform: VllmPlatform) -> int:
    """Page bytes of one token of the model's attention layer (vLLM builds a FullAttentionSpec of block 1)."""
    layer = (arch.layers_of(LayerKind.MLA) or arch.layers_of(LayerKind.FULL, LayerKind.SLIDING))[0]
    spec = layer_spec(layer, tp, 1, dtype_bytes, kv_cache_dtype, platform)
    assert spec is not None
    return spec.real_page_bytes // spec.block_size


def _is_hopper(machine: Machine) -> bool:
    return (machine.gpu_id or "").lower().startswith(("h100", "h200", "h20", "h800"))


def mamba_layout(
    arch: ModelArchitecture,
    settings: VllmSettings,
    machine: Machine,
    platform: VllmPlatform,
    block_size: int,
    dtype_bytes: int,
    num_spec: int,
    max_model_len: int,
) -> MambaLayout | None:
    """The Mamba spec of a model's recurrent layers and the block size vLLM settles on (module docstring)."""
    geometries = {layer.recurrent for layer in arch.layers if layer.recurrent is not None}
    if not geometries:
        return None
    if len(geometries) > 1:
        raise ServewiseInputError(_("the model's recurrent layers have different state shapes; servewise plans one"))
    geometry = geometries.pop()
    has_attention = bool(arch.layers_of(LayerKind.FULL, LayerKind.SLIDING, LayerKind.MLA))
    # vllm/config/model.py is_prefix_caching_supported: generative hybrids yes, attention-free models no
    prefix = settings.enable_prefix_caching if settings.enable_prefix_caching is not None else has_attention
    mode: MambaCacheMode = "align" if prefix else "none"
    model_dtype = "float32" if MODEL_DTYPE_BYTES[settings.dtype] == 4 else "bfloat16"
    dtypes = resolve_state_dtypes(
        arch.family, geometry.mixer, model_dtype, settings.mamba_cache_dtype, settings.mamba_ssm_cache_dtype,
        arch.mamba_ssm_dtype, cpu_resets_ssm_to_float32=platform.resets_ssm_to_float32,
    )
    shapes = state_shapes(geometry, settings.tensor_parallel_size, num_spec)
    state_bytes = state_page_bytes(shapes, dtypes)
    flashinfer_gdn = geometry.mixer == "gated_deltanet" and platform.name == "cuda" and _is_hopper(machine)
    checkpoints = prefill_checkpoint_blocks(geometry.mixer, mode, flashinfer_gdn)
    notes: list[PlanNote] = []
    alignment = None
    page = state_bytes
    final_block = block_size
    if has_attention:
        kernel = platform.kernel_block_multiple  # CPU_ATTN MultipleOf(32); FlashAttention MultipleOf(16)
        ckpt_align = FLASHINFER_GDN_CHECKPOINT_ALIGNMENT_TOKENS if (flashinfer_gdn and mode == "align") else None
        attn_1 = _attention_bytes_per_token(arch, settings.tensor_parallel_size, dtype_bytes, settings.kv_cache_dtype,
                                            platform)
        alignment = align_hybrid_block_size(block_size, attn_1, state_bytes, kernel, ckpt_align)
        final_block, page = alignment.block_size, alignment.padded_page_bytes
        if alignment.block_size_raised:
            notes.append(PlanNote(
                code="vllm_hybrid_block_size_raised",
                message=_("Setting attention block size to {block} tokens to ensure that attention page "
                          "size is >= mamba page size (vLLM's own log line).").format(block=final_block),
            ))
    spec = KVCacheSpec("mamba", final_block if mode == "align" else max_model_len, 0, 0, 0, 0, mamba_page_bytes=page,
                       mamba_blocks=mamba_blocks_per_request(mode, num_spec, checkpoints))
    notes.append(PlanNote(
        code="vllm_mamba_state_in_kv_pool",
        message=ngettext("Each recurrent layer keeps its state in pages of the shared KV block pool "
                         "({state}\u00a0bytes "
                         "padded to {page}); a request holds {blocks} such page per state group (mamba_cache_mode "
                         "'{mode}'), whatever its length.",
                         "Each recurrent layer keeps its state in pages of the shared KV block pool "
                         "({state}\u00a0bytes "
                         "padded to {page}); a request holds {blocks} such pages per state group (mamba_cache_mode "
                         "'{mode}'), whatever its length.", spec.mamba_blocks).format(
                             state=number(state_bytes), page=number(page), blocks=number(spec.mamba_blocks), mode=mode),
    ))
    return MambaLayout(spec=spec, block_size=final_block, alignment=alignment, dtypes=dtypes, shapes=shapes,
                       mode=mode, requested_block_size=block_size, notes=tuple(notes))
