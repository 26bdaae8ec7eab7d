"""Reading config.json fields: required values name the field and family; HF's own defaults are explicit.

Shared by the architecture builder (hf_config) and the parameter counter (params), so both read
each key the same way.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, overload

from calculators.errors import ConfigFieldMissing, ServewiseInputError
from calculators.i18n import _

Config = Mapping[str, Any]

#: Multimodal wrappers whose language model sits under `text_config`, and the text model_type
#: transformers assumes when `text_config` has none (Gemma3Config / Mistral3Config sub-configs).
WRAPPERS: dict[str, str] = {
    "gemma3": "gemma3_text",
    "mistral3": "mistral",
    "qwen3_5": "qwen3_5_text",
    "qwen3_5_moe": "qwen3_5_moe_text",
    "llama4": "llama4_text",
    "kimi_k25": "kimi_k2",
    "gemma4": "gemma4_text",
}

#: HF defaults: transformers' Gemma3TextConfig (configuration_gemma3.py @008f5c8c) fills these when a
#: Gemma 3 config.json omits them, as google/gemma-3-4b-it's does for heads, head_dim and vocabulary.
GEMMA3_TEXT_HF_DEFAULTS: dict[str, int] = {
    "num_attention_heads": 8,
    "num_key_value_heads": 4,
    "head_dim": 256,
    "vocab_size": 262_208,
    "max_position_embeddings": 131_072,
    "sliding_window": 4096,
    "sliding_window_pattern": 6,
}


def with_hf_defaults(cfg: Config, family: str) -> Config:
    """The config with the values transformers itself fills in for keys this family's file may omit."""
    if family == "gemma3_text":
        return {**GEMMA3_TEXT_HF_DEFAULTS, **{k: v for k, v in cfg.items() if v is not None}}
    return cfg


def require(cfg: Config, key: str, family: str) -> Any:
    """The value of `key`, or ConfigFieldMissing when it is absent or null."""
    value = cfg.get(key)
    if value is None:
        raise ConfigFieldMissing(key, family)
    return value


#: Far beyond any published model (the deepest config in tests/data/hf_configs has 126 layers). Geometry is
#: built one entry per layer, so a pasted num_hidden_layers of 10**18 would otherwise exhaust the server's memory.
MAX_LAYERS = 10_000


def int_field(cfg: Config, key: str, family: str) -> int:
    """A required positive integer field."""
    value = require(cfg, key, family)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ServewiseInputError(_("config.json for a '{family}' model has {key}={value!r}; expected a "
                                    "whole number").format(family=family, key=key, value=value))
    if key == "num_hidden_layers" and value > MAX_LAYERS:
        raise ServewiseInputError(
            _("config.json for a '{family}' model has {key}={value}; servewise accepts at most {max_layers} "
              "layers").format(family=family, key=key, value=value, max_layers=MAX_LAYERS)
        )
    return value


@overload
def int_or_hf_default(cfg: Config, key: str, family: str, hf_default: int) -> int: ...
@overload
def int_or_hf_default(cfg: Config, key: str, family: str, hf_default: None) -> int | None: ...
def int_or_hf_default(cfg: Config, key: str, family: str, hf_default: int | None) -> int | None:
    """An integer field whose absence transformers itself fills with `hf_default` (caller cites the class)."""
    if cfg.get(key) is None:
        return hf_default
    return int_field(cfg, key, family)


def routed_experts(cfg: Config, family: str) -> int:
    """Qwen MoE routed experts: `num_experts`, which transformers 5 saves as `num_local_experts`.

    transformers 5 Qwen3MoeConfig.attribute_map maps num_experts to num_local_experts, so config.json files
    it writes carry only the latter (checked with transformers 5.19.0, the version the vLLM CPU build pulls).
    """
    key = "num_experts" if cfg.get("num_experts") is not None or cfg.get("num_local_experts") is None else (
        "num_local_experts")
    return int_field(cfg, key, family)


def text_config_of(config: Config) -> tuple[Config, str]:
    """The language-model part of a config (unwrapping multimodal wrappers) and its model_type."""
    model_type = config.get("model_type")
    if not isinstance(model_type, str) or not model_type:
        raise ConfigFieldMissing("model_type", "unknown")
    if model_type in WRAPPERS:
        inner = require(config, "text_config", model_type)
        if not isinstance(inner, Mapping):
            raise ServewiseInputError(_("'{model_type}' config.json has a text_config that is not an object").format(
                                        model_type=model_type))
        inner_type = inner.get("model_type") or WRAPPERS[model_type]
        if not isinstance(inner_type, str):
            raise ServewiseInputError(
                _("'{model_type}' config.json has text_config.model_type={inner_type!r}; expected a name").format(
                  model_type=model_type, inner_type=inner_type)
            )
        return inner, inner_type
    return config, model_type


def attention_heads(cfg: Config, family: str) -> tuple[int, int]:
    """(query heads, KV heads). HF default (Llama/Mistral/Qwen/Phi3/Gemma configs): KV heads = query heads."""
    n_heads = int_field(cfg, "num_attention_heads", family)
    n_kv = int_or_hf_default(cfg, "num_key_value_heads", family, n_heads)
    if n_heads == 0 or n_kv == 0 or n_heads % n_kv:
        raise ServewiseInputError(
            _("config.json for a '{family}' model has {n_heads} attention heads and {n_kv} KV heads; the KV "
              "heads must divide the attention heads").format(family=family, n_heads=n_heads, n_kv=n_kv)
        )
    return n_heads, n_kv


def head_dim_of(cfg: Config, family: str, n_heads: int, derive: bool) -> int:
    """Per-head size: an explicit `head_dim` always wins; else hidden/heads when HF derives it that way."""
    if cfg.get("head_dim") is not None:
        return int_field(cfg, "head_dim", family)
    if not derive:
        raise ConfigFieldMissing("head_dim", family)
    # HF default (LlamaConfig, MistralConfig, Qwen2Config, Phi3Config, MixtralConfig): hidden_size // heads.
    return int_field(cfg, "hidden_size", family) // n_heads
