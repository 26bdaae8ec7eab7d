"""What a speculative drafter adds to vLLM's plan (vllm/v1/spec_decode/): its KV layers in the target's pool,
its weights on each rank, and the plan note that says so. The settings themselves are in speculative.py."""

from __future__ import annotations

from dataclasses import replace

from pydantic import BaseModel, ConfigDict, Field

from calculators.engines.vllm.arg_utils import VllmSettings
from calculators.engines.vllm.cache_config import resolve_kv_dtype_bytes
from calculators.engines.vllm.kv_cache_interface import KVCacheSpec, layer_spec
from calculators.engines.vllm.platforms import VllmPlatform
from calculators.engines.vllm.speculative import VllmSpeculativeConfig, drafter_layers
from calculators.i18n import _, ngettext
from calculators.memory.plan import PlanNote
from calculators.model.architecture import ModelArchitecture
from calculators.units import number


class VllmDraft(BaseModel):
    """The drafter checkpoint --speculative-config loads (`model`): its geometry and weight bytes."""

    model_config = ConfigDict(frozen=True, extra="forbid", arbitrary_types_allowed=True)

    arch: ModelArchitecture
    weights_bytes: int | None = Field(default=None, ge=0)


def draft_specs(
    spec_cfg: VllmSpeculativeConfig | None,
    arch: ModelArchitecture,
    draft: VllmDraft | None,
    settings: VllmSettings,
    block_size: int,
    platform: VllmPlatform,
) -> list[KVCacheSpec]:
    """KV specs of the drafter's attention layers (KVCacheSpec.is_draft), in the shared block pool."""
    if spec_cfg is None:
        return []
    layers = drafter_layers(spec_cfg, arch, draft.arch if draft else None, arch.mtp_layers)
    tp = spec_cfg.draft_tensor_parallel_size or settings.tensor_parallel_size
    kv_dtype = spec_cfg.kv_cache_dtype or settings.kv_cache_dtype
    _name, dtype_bytes = resolve_kv_dtype_bytes(settings.model_copy(update={"kv_cache_dtype": kv_dtype}))
    out = []
    for layer in layers:
        spec = layer_spec(layer, tp, block_size, dtype_bytes, kv_dtype, platform)
        if spec is not None:
            out.append(replace(spec, is_draft=True))
    return out


def draft_weights_per_rank(spec_cfg: VllmSpeculativeConfig | None, draft: VllmDraft | None, tp: int) -> int | None:
    """The drafter checkpoint's weights on one rank (0 for MTP and model-free drafting: see the plan note)."""
    if spec_cfg is None or spec_cfg.kind != "checkpoint":
        return 0 if spec_cfg is not None else None
    if draft is None or draft.weights_bytes is None:
        return None
    return draft.weights_bytes // (spec_cfg.draft_tensor_parallel_size or tp)


def speculative_note(spec: VllmSpeculativeConfig, draft: VllmDraft | None, layers: int, lookahead: int) -> PlanNote:
    """What --speculative-config adds to the plan, in words."""
    if spec.kind == "model_free":
        what = _("'{method}' proposes tokens without a model: no drafter weights or KV").format(method=spec.method)
    elif spec.kind == "mtp":
        what = ngettext("the model's {n} MTP layer drafts; its KV joins the pool (its weights come with the "
                        "checkpoint)",
                        "the model's {n} MTP layers draft; their KV joins the pool (their weights come with the "
                        "checkpoint)", layers).format(n=number(layers))
    elif draft is None:
        what = _("the '{method}' drafter is taken to be one decoder layer shaped like the model's attention (its "
                 "config.json was not given); its KV joins the pool; its weights are not counted").format(
            method=spec.method)
    else:
        what = ngettext("the drafter's {n} attention layer joins the target's KV pool",
                        "the drafter's {n} attention layers join the target's KV pool", layers).format(n=number(layers))
    extra = ngettext("; each request reserves {n} lookahead slot past its scheduled tokens",
                     "; each request reserves {n} lookahead slots past its scheduled tokens", lookahead).format(
        n=number(lookahead)) if lookahead else ""
    return PlanNote(code="vllm_speculative", message=_(
        "Speculative decoding ({n}\u00a0tokens per step): {what}{extra}. Mamba / linear-attention layers keep "
        "num_speculative_tokens more conv positions and state pages per request.").format(
        n=spec.num_speculative_tokens, what=what, extra=extra))
