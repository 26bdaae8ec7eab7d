"""vLLM's --speculative-config: which drafter runs, what it adds to the KV pool and to the scheduler's budget.

Read from vLLM v0.33.0 (PyPI wheel, commit g4ba787ec9):
- vllm/config/speculative.py - `method` ("draft_model", "eagle", "eagle3", "mtp" and the per-model MTP names,
  "ngram", "suffix", ...), `num_speculative_tokens`, `model`, `draft_tensor_parallel_size`, `kv_cache_dtype`.
- vllm/v1/kv_cache_interface.py KVCacheSpec.is_draft - a drafter's attention layers get KV specs like the
  target's and are grouped with them ("excluded from equality so it never affects grouping"); so an EAGLE
  head's layer, an MTP layer or a whole draft model's layers share the target's block pool.
- vllm/config/vllm.py num_lookahead_tokens - EAGLE/MTP and draft models reserve num_speculative_tokens slots
  past the scheduled tokens; _set_max_num_scheduled_tokens refuses when max_num_batched_tokens <= that.
- vllm/model_executor/layers/mamba/mamba_utils.py - Mamba2 / GDN conv states keep num_speculative_tokens more
  positions, and MambaSpec holds num_speculative_blocks (= num_speculative_tokens) more pages per request.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from calculators.errors import ServewiseInputError
from calculators.i18n import _
from calculators.model.architecture import LayerGeometry, LayerKind, ModelArchitecture

#: methods whose drafter is a separate checkpoint loaded as its own model
DRAFT_CHECKPOINT_METHODS = ("draft_model", "eagle", "eagle3")
#: methods that run the target checkpoint's own multi-token-prediction layers (config/speculative.py MTPModelTypes)
MTP_METHODS = ("mtp", "deepseek_mtp", "qwen3_next_mtp", "qwen3_5_mtp", "nemotron_h_mtp", "glm4_moe_mtp", "mimo_mtp",
               "ernie_mtp", "longcat_flash_mtp")
#: methods with no model at all: proposals come from the prompt or earlier outputs
MODEL_FREE_METHODS = ("ngram", "suffix", "ngram_gpu")


class VllmSpeculativeConfig(BaseModel):
    """The keys of --speculative-config servewise models (JSON keys as vLLM names them)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    method: str
    num_speculative_tokens: int = Field(gt=0)
    model: str | None = None
    draft_tensor_parallel_size: int | None = Field(default=None, ge=1)
    kv_cache_dtype: str | None = None
    max_model_len: int | None = Field(default=None, ge=1)
    prompt_lookup_max: int | None = Field(default=None, ge=1)  # ngram: no memory of its own
    prompt_lookup_min: int | None = Field(default=None, ge=1)

    @property
    def kind(self) -> Literal["checkpoint", "mtp", "model_free"]:
        """Where the drafter's weights come from."""
        if self.method in DRAFT_CHECKPOINT_METHODS:
            return "checkpoint"
        if self.method in MTP_METHODS:
            return "mtp"
        if self.method in MODEL_FREE_METHODS:
            return "model_free"
        raise ServewiseInputError(
            _("vLLM speculative method '{method}' is not modelled by servewise; known: "
              "{draft_checkpoint_methods}").format(
              method=self.method,
              draft_checkpoint_methods=', '.join(DRAFT_CHECKPOINT_METHODS + MTP_METHODS + MODEL_FREE_METHODS))
        )


def parse_speculative_config(value: object) -> object:
    """A --speculative-config value: JSON text becomes a dict (vLLM parses it the same way); others pass."""
    if not isinstance(value, str):
        return value
    import json

    try:
        parsed = json.loads(value)
    except json.JSONDecodeError as exc:
        example = '{"method": "eagle3", "model": "...", "num_speculative_tokens": 3}'
        raise ValueError(f"--speculative-config must be a JSON object, e.g. '{example}' ({exc.msg})") from exc
    if not isinstance(parsed, dict):
        raise ValueError("--speculative-config must be a JSON object")
    return parsed


def num_lookahead_tokens(spec: VllmSpeculativeConfig | None) -> int:
    """KV slots reserved past the scheduled tokens (vllm/config/vllm.py num_lookahead_tokens)."""
    if spec is None or spec.kind == "model_free":
        return 0
    return spec.num_speculative_tokens


def mtp_layer_count(arch_config_layers: int | None) -> int:
    """MTP layers the checkpoint ships (config.json mtp_num_hidden_layers / num_nextn_predict_layers)."""
    return int(arch_config_layers or 0)


def drafter_layers(
    spec: VllmSpeculativeConfig, target: ModelArchitecture, draft: ModelArchitecture | None, mtp_layers: int
) -> tuple[LayerGeometry, ...]:
    """The attention layers the drafter adds to the KV pool, in the geometry their KV specs use.

    A draft model or EAGLE head brings its own layers (its config.json); MTP layers repeat the target's
    full-attention (or MLA) geometry, one per MTP layer; n-gram and suffix drafting add none.
    """
    if spec.kind == "model_free":
        return ()
    if spec.kind == "checkpoint":
        if draft is None and spec.method in ("eagle", "eagle3"):
            # published EAGLE / EAGLE-3 heads are one decoder layer with the target's attention shape
            # (e.g. SpecForge configs/llama3-8B-eagle3.json: num_hidden_layers 1, 8 KV heads like Llama 3.1 8B)
            attention = target.layers_of(LayerKind.FULL, LayerKind.MLA)
            return attention[:1]
        if draft is None:
            raise ServewiseInputError(
                _("speculative method '{method}' loads a drafter from `model`; give its config.json so "
                  "servewise can size its KV layers and weights").format(method=spec.method)
            )
        return draft.layers_of(LayerKind.FULL, LayerKind.SLIDING, LayerKind.MLA)
    if mtp_layers <= 0:
        raise ServewiseInputError(
            _("speculative method '{method}' runs the model's multi-token-prediction layers, but its "
              "config.json declares none (mtp_num_hidden_layers / num_nextn_predict_layers)").format(method=spec.method)
        )
    attention = target.layers_of(LayerKind.MLA, LayerKind.FULL)
    if not attention:
        raise ServewiseInputError(_("the model has no full-attention layer for its MTP layers to copy"))
    return (attention[0],) * mtp_layers


def without_speculation(settings):
    """--speculative-config removed (None when the settings have none)."""
    if settings.speculative_config is None:
        return None
    return settings.model_copy(update={"speculative_config": None})
