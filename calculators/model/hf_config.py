"""Build a `ModelArchitecture` from a Hugging Face config.json (a dict, pasted text, or a file).

Every family reads the keys its transformers configuration class reads. A key the family needs and
the config lacks raises `ConfigFieldMissing(field, family)`; the only values filled in are the
defaults transformers itself defines for that family, each marked `HF default` in a comment below
with the configuration class it comes from (transformers configuration_<family>.py).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

from calculators.errors import ConfigFieldMissing, ServewiseInputError, json_problem
from calculators.i18n import N_, _, ngettext
from calculators.model.architecture import (
    LayerGeometry,
    LayerKind,
    ModelArchitecture,
    MoEGeometry,
    RecurrentGeometry,
)
from calculators.model.config_fields import (
    WRAPPERS,
    Config,
    attention_heads,
    head_dim_of,
    int_field,
    int_or_hf_default,
    routed_experts,
    text_config_of,
    with_hf_defaults,
)
from calculators.units import number

#: Encoder-only families served as embedding models (no generation, no growing KV cache).
_ENCODER_FAMILIES = ("bert", "xlm-roberta", "roberta")

#: Families the engines serve that servewise does not plan yet, with the reason: a config.json of one of them
#: is refused with it, and the memory page lists them (issue 14).
NOT_MODELLED: dict[str, str] = {
    "kimi_linear": N_(
        "Kimi Linear (model_type kimi_linear: Kimi Delta Attention layers with a fixed state beside MLA layers) "
        "is not planned yet: vLLM 0.33.0 (KimiLinearForCausalLM) and SGLang 0.5.23 (srt/models/kimi_linear.py) "
        "serve it, but no complete public copy of its config.json could be read and cited, so servewise has no "
        "checked layer builder, parameter count or state sizes for it."
    ),
}


def load_config_text(text: str, source: str = "pasted config.json") -> dict[str, Any]:
    """Parse config.json text into a dict; malformed JSON or a non-object gives a ServewiseInputError."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ServewiseInputError(
            _("{source} is not valid JSON (line {lineno}, column {colno}: {msg}); paste the whole "
              "config.json file").format(source=source, lineno=exc.lineno, colno=exc.colno, msg=json_problem(exc.msg))
        ) from exc
    if not isinstance(data, dict):
        raise ServewiseInputError(
            _("{source} must be a JSON object like a Hugging Face config.json, not {name}").format(
              source=source, name=type(data).__name__)
        )
    return data


def architecture_from_config_text(
    text: str, source: str = "pasted config.json", name: str | None = None
) -> ModelArchitecture:
    """Architecture from config.json text (see `architecture_from_config`)."""
    return architecture_from_config(load_config_text(text, source), name=name, source=source)


def architecture_from_config_file(path: str | Path, name: str | None = None) -> ModelArchitecture:
    """Architecture from a config.json file on disk (see `architecture_from_config`)."""
    file = Path(path)
    try:
        text = file.read_text(encoding="utf-8")
    except OSError as exc:
        raise ServewiseInputError(_("cannot read {file}: {value}").format(
                                    file=file, value=exc.strerror or exc)) from exc
    except UnicodeDecodeError as exc:
        raise ServewiseInputError(_("{file} is not a UTF-8 text file; expected a Hugging Face config.json").format(
                                    file=file)) from exc
    return architecture_from_config(load_config_text(text, str(file)), name=name or file.stem, source=str(file))


def architecture_from_config(
    config: Config, name: str | None = None, source: str = "config.json", is_embedding_model: bool | None = None
) -> ModelArchitecture:
    """A model's layer-by-layer geometry, MoE layout and parameter counts from its config.json dict.

    `is_embedding_model` overrides detection (a decoder such as Qwen3-Embedding has the same
    config.json as a chat model; only its sentence-transformers files say it embeds).
    """
    if not isinstance(config, Mapping):
        raise ServewiseInputError(_("a config.json must be a JSON object"))
    text, model_type = text_config_of(config)
    builder = _BUILDERS.get(model_type)
    if builder is None and model_type in NOT_MODELLED:
        raise ServewiseInputError(_(NOT_MODELLED[model_type]))
    if builder is None:
        known = ", ".join(sorted(set(_BUILDERS) | set(WRAPPERS)))
        raise ServewiseInputError(
            _("model_type '{model_type}' is not a family servewise knows yet (known: {known}); describe the "
              "geometry by hand or pick a catalog model").format(model_type=model_type, known=known)
        )
    with _field_types_checked(model_type):
        arch = builder(text, model_type)
    display = name or _name_from(config) or model_type
    embedding = model_type in _ENCODER_FAMILIES if is_embedding_model is None else is_embedding_model
    wrapper = config["model_type"] if text is not config else None
    arch = replace(arch, name=display, source=source, is_embedding_model=embedding, wrapper_model_type=wrapper)
    from calculators.model.params import count_parameters  # params reads the same config; import here avoids a cycle

    try:
        with _field_types_checked(model_type):
            counts = count_parameters(config)
    except ConfigFieldMissing as missing:
        # The KV geometry is complete; only the weight count lacks a field. Say so instead of guessing.
        note = _("parameter count unknown: config.json has no '{field}'").format(field=missing.field)
        return replace(arch, notes=(*arch.notes, note))
    return replace(arch, params_total=counts.total, params_active=counts.active)


@contextmanager
def _field_types_checked(family: str) -> Iterator[None]:
    """Turn arithmetic on a field of the wrong type or value into a ServewiseInputError.

    The field readers in config_fields name the field in most cases; this net catches the rest (a list where
    a number goes, a zero divisor, a boolean where a list goes), so a hand-edited config.json never crashes a
    page or the CLI.
    """
    try:
        yield
    except ServewiseInputError:
        raise
    except (TypeError, ValueError, ZeroDivisionError, OverflowError, KeyError, IndexError, AttributeError) as exc:
        raise ServewiseInputError(
            _("config.json for a '{family}' model has a field of the wrong type or value ({name}: {exc}); "
              "compare it with the model's original config.json").format(
              family=family, name=type(exc).__name__, exc=exc)
        ) from exc


def _name_from(config: Config) -> str | None:
    """The model's own name when config.json records it (`_name_or_path`)."""
    value = config.get("_name_or_path")
    return value.rsplit("/", 1)[-1] if isinstance(value, str) and value else None


# ---------------------------------------------------------------------------------------------------
# Shared pieces


def _common(cfg: Config, family: str) -> dict[str, Any]:
    """Fields every decoder family has: hidden size, vocabulary, trained context, query heads."""
    return {
        "family": family,
        "hidden_size": int_field(cfg, "hidden_size", family),
        "vocab_size": int_field(cfg, "vocab_size", family),
        "max_context_tokens": int_or_hf_default(cfg, "max_position_embeddings", family, None),
    }


def _attention_layer(kind: LayerKind, n_kv: int, head_dim: int, window: int | None = None) -> LayerGeometry:
    """One full or sliding attention layer with equal key and value head sizes."""
    return LayerGeometry(
        kind=kind,
        n_kv_heads=n_kv,
        head_dim_k=head_dim,
        head_dim_v=head_dim,
        sliding_window_tokens=window if kind is LayerKind.SLIDING else None,
    )


def _layers_from_types(cfg: Config, family: str, n_layers: int) -> list[str] | None:
    """The per-layer `layer_types` list when the config has one (newer transformers write it out)."""
    types = cfg.get("layer_types")
    if types is None:
        return None
    if not isinstance(types, list) or len(types) != n_layers:
        raise ServewiseInputError(
            _("config.json for a '{family}' model has a layer_types list that does not have one entry per "
              "layer ({n_layers})").format(family=family, n_layers=n_layers)
        )
    return [str(t) for t in types]


def _kinds_to_layers(
    types: list[str], family: str, n_kv: int, head_dim: int, window: int | None
) -> tuple[LayerGeometry, ...]:
    """Turn `sliding_attention` / `full_attention` entries into layer geometries."""
    layers = []
    for layer_type in types:
        if layer_type == "sliding_attention":
            if window is None:
                raise ConfigFieldMissing("sliding_window", family)
            layers.append(_attention_layer(LayerKind.SLIDING, n_kv, head_dim, window))
        elif layer_type == "full_attention":
            layers.append(_attention_layer(LayerKind.FULL, n_kv, head_dim))
        else:
            raise ServewiseInputError(_("config.json for a '{family}' model has an unknown layer type "
                                        "'{layer_type}'").format(family=family, layer_type=layer_type))
    return tuple(layers)


def _window_binds(window: int | None, max_context: int | None) -> bool:
    """A window at least as long as the trained context never limits what a layer keeps."""
    return window is not None and (max_context is None or window < max_context)


def _arch(cfg: Config, family: str, layers: tuple[LayerGeometry, ...], n_heads: int, **extra: Any) -> ModelArchitecture:
    """Assemble the architecture; name, source and parameter counts are filled in by the caller."""
    return ModelArchitecture(name=family, layers=layers, n_heads=n_heads, **_common(cfg, family), **extra)


# ---------------------------------------------------------------------------------------------------
# Families


def _dense_gqa(cfg: Config, family: str) -> ModelArchitecture:
    """Llama 3.x, Mistral, Qwen2/2.5, Qwen3, Phi-3/Phi-4: grouped-query (or multi-head) attention."""
    n_layers = int_field(cfg, "num_hidden_layers", family)
    n_heads, n_kv = attention_heads(cfg, family)
    # Qwen3Config's own head_dim default is 128, not hidden/heads; every Qwen3 config.json states it,
    # so servewise asks for it rather than guess which rule applies.
    head_dim = head_dim_of(cfg, family, n_heads, derive=family not in ("qwen3", "qwen3_moe"))
    max_context = int_or_hf_default(cfg, "max_position_embeddings", family, None)
    notes: list[str] = []
    types = _layers_from_types(cfg, family, n_layers)
    window = int_or_hf_default(cfg, "sliding_window", family, None)
    if types is None:
        if family in ("qwen2", "qwen3", "qwen3_moe", "qwen2_moe"):
            # HF Qwen2/Qwen3 configs: the window applies only when use_sliding_window is true (HF default
            # false), and then only to layers from max_window_layers on.
            use_window = bool(cfg.get("use_sliding_window", False))
            first_windowed = int_or_hf_default(cfg, "max_window_layers", family, n_layers) if use_window else n_layers
            types = [
                "sliding_attention" if use_window and i >= first_windowed else "full_attention" for i in range(n_layers)
            ]
        elif _window_binds(window, max_context):
            # Mistral / Phi-3 apply `sliding_window` to every layer.
            types = ["sliding_attention"] * n_layers
        else:
            if window is not None:
                notes.append(
                    _("sliding_window {window} is not shorter than the trained context; treated as full "
                      "attention").format(window=window)
                )
            types = ["full_attention"] * n_layers
    layers = _kinds_to_layers(types, family, n_kv, head_dim, window)
    moe = _qwen_moe(cfg, family, n_layers) if family in ("qwen3_moe", "qwen2_moe") else None
    return _arch(cfg, family, layers, n_heads, moe=moe, notes=tuple(notes))


def _qwen_moe(cfg: Config, family: str, n_layers: int) -> MoEGeometry:
    """Qwen MoE: `num_experts` routed experts, `num_experts_per_tok` active, dense layers in `mlp_only_layers`."""
    dense_layers = cfg.get("mlp_only_layers") or []  # HF default (Qwen3MoeConfig): [] — every layer sparse
    step = int_or_hf_default(cfg, "decoder_sparse_step", family, 1)  # HF default (Qwen3MoeConfig): 1
    n_dense = sum(1 for i in range(n_layers) if i in dense_layers or (i + 1) % step != 0)
    shared = 1 if (cfg.get("shared_expert_intermediate_size") or 0) > 0 else 0
    return MoEGeometry(
        n_experts=routed_experts(cfg, family),
        n_active=int_field(cfg, "num_experts_per_tok", family),
        n_shared=shared,
        expert_intermediate_size=int_field(cfg, "moe_intermediate_size", family),
        n_dense_layers=n_dense,
    )


def _mixtral(cfg: Config, family: str) -> ModelArchitecture:
    """Mixtral: Mistral attention with `num_local_experts` experts per layer, `num_experts_per_tok` active."""
    arch = _dense_gqa(cfg, family)
    moe = MoEGeometry(
        n_experts=int_field(cfg, "num_local_experts", family),
        n_active=int_field(cfg, "num_experts_per_tok", family),
        expert_intermediate_size=int_field(cfg, "intermediate_size", family),
    )
    return replace(arch, moe=moe)


def _gemma2(cfg: Config, family: str) -> ModelArchitecture:
    """Gemma 2: sliding window on even layers (0, 2, ...), global attention on odd ones (Gemma2Config)."""
    n_layers = int_field(cfg, "num_hidden_layers", family)
    n_heads, n_kv = attention_heads(cfg, family)
    head_dim = int_field(cfg, "head_dim", family)
    window = int_field(cfg, "sliding_window", family)
    types = _layers_from_types(cfg, family, n_layers) or [
        "sliding_attention" if i % 2 == 0 else "full_attention" for i in range(n_layers)
    ]
    return _arch(cfg, family, _kinds_to_layers(types, family, n_kv, head_dim, window), n_heads)


def _gemma3_text(cfg: Config, family: str) -> ModelArchitecture:
    """Gemma 3: 5 local (sliding) layers then 1 global, from `layer_types` or `sliding_window_pattern`.

    Gemma 3's published config.json files omit many keys; transformers' Gemma3TextConfig defines
    them (`GEMMA3_TEXT_HF_DEFAULTS`).
    """
    full = with_hf_defaults(cfg, family)
    n_layers = int_field(full, "num_hidden_layers", family)
    n_heads, n_kv = attention_heads(full, family)
    head_dim = int_field(full, "head_dim", family)
    window = int_field(full, "sliding_window", family)
    types = _layers_from_types(full, family, n_layers)
    if types is None:
        pattern = int_field(full, "sliding_window_pattern", family)
        types = ["full_attention" if (i + 1) % pattern == 0 else "sliding_attention" for i in range(n_layers)]
    return _arch(full, family, _kinds_to_layers(types, family, n_kv, head_dim, window), n_heads)


def _gpt_oss(cfg: Config, family: str) -> ModelArchitecture:
    """gpt-oss: alternating sliding (window 128) and full layers from `layer_types`; MoE in every layer."""
    n_layers = int_field(cfg, "num_hidden_layers", family)
    n_heads, n_kv = attention_heads(cfg, family)
    head_dim = int_field(cfg, "head_dim", family)
    window = int_field(cfg, "sliding_window", family)
    types = _layers_from_types(cfg, family, n_layers)
    if types is None:
        raise ConfigFieldMissing("layer_types", family)
    active = cfg.get("num_experts_per_tok", cfg.get("experts_per_token"))
    if active is None:
        raise ConfigFieldMissing("num_experts_per_tok", family)
    moe = MoEGeometry(
        n_experts=int_field(cfg, "num_local_experts", family),
        n_active=int(active),
        expert_intermediate_size=int_field(cfg, "intermediate_size", family),
    )
    return _arch(cfg, family, _kinds_to_layers(types, family, n_kv, head_dim, window), n_heads, moe=moe)


def _deepseek(cfg: Config, family: str) -> ModelArchitecture:
    """DeepSeek V2/V3: multi-head latent attention (one latent of `kv_lora_rank` + a rope key per token).

    Key/value head sizes are recorded too (qk_nope + qk_rope, v_head_dim) for engines that expand
    MLA into ordinary per-head K and V.
    """
    n_layers = int_field(cfg, "num_hidden_layers", family)
    n_heads = int_field(cfg, "num_attention_heads", family)
    kv_lora_rank = int_field(cfg, "kv_lora_rank", family)
    rope_dim = int_field(cfg, "qk_rope_head_dim", family)
    nope_dim = int_field(cfg, "qk_nope_head_dim", family)
    v_dim = int_field(cfg, "v_head_dim", family)
    layer = LayerGeometry(
        kind=LayerKind.MLA,
        n_kv_heads=n_heads,
        head_dim_k=nope_dim + rope_dim,
        head_dim_v=v_dim,
        kv_lora_rank=kv_lora_rank,
        qk_rope_head_dim=rope_dim,
    )
    n_routed = cfg.get("n_routed_experts")
    moe = None
    if n_routed:
        # HF's defaults differ between DeepseekV2Config (0) and DeepseekV3Config (3): ask rather than guess.
        first_dense = int_field(cfg, "first_k_dense_replace", family)
        freq = int_or_hf_default(cfg, "moe_layer_freq", family, 1)  # HF default (DeepseekV2/V3Config): 1
        n_dense = sum(1 for i in range(n_layers) if not (i >= first_dense and i % freq == 0))
        moe = MoEGeometry(
            n_experts=int(n_routed),
            n_active=int_field(cfg, "num_experts_per_tok", family),
            n_shared=int_or_hf_default(cfg, "n_shared_experts", family, 0) or 0,
            expert_intermediate_size=int_field(cfg, "moe_intermediate_size", family),
            n_dense_layers=n_dense,
        )
    return _arch(cfg, family, (layer,) * n_layers, n_heads, moe=moe, **_mtp(cfg))


def recurrent_layer(geometry: RecurrentGeometry) -> LayerGeometry:
    """A recurrent layer whose per-sequence element counts come from its state shapes."""
    return LayerGeometry(
        kind=LayerKind.RECURRENT,
        recurrent_conv_elements=geometry.conv_elements,
        recurrent_state_elements=geometry.state_elements,
        recurrent=geometry,
    )


def gated_deltanet_geometry(cfg: Config, family: str) -> RecurrentGeometry:
    """One Gated DeltaNet layer (Qwen3-Next, Qwen3.5): conv over q, k, v; state (v_heads, v_dim, k_dim).

    vllm/model_executor/layers/mamba/mamba_utils.py gated_delta_net_state_shape and llama.cpp's
    n_embd_r / n_embd_s (src/llama-hparams.cpp; its converter maps d_inner = v_dim x v_heads,
    n_group = k_heads, d_state = k_dim) count the same elements.
    """
    k_heads = int_field(cfg, "linear_num_key_heads", family)
    v_heads = int_field(cfg, "linear_num_value_heads", family)
    k_dim = int_field(cfg, "linear_key_head_dim", family)
    v_dim = int_field(cfg, "linear_value_head_dim", family)
    return RecurrentGeometry(
        mixer="gated_deltanet", conv_kernel=int_field(cfg, "linear_conv_kernel_dim", family),
        inner=v_heads * v_dim, n_groups=k_heads, group_dim=k_dim, heads=v_heads, head_dim=v_dim, state_dim=k_dim,
    )


def mamba_state_elements(d_conv: int, d_state: int, d_inner: int, n_group: int = 0) -> tuple[int, int]:
    """Per-sequence (conv, state) elements of one Mamba layer as llama.cpp sizes them (n_embd_r, n_embd_s)."""
    return (d_conv - 1) * (d_inner + 2 * n_group * d_state) if d_conv > 0 else 0, d_state * d_inner


def mamba1_geometry(d_conv: int, d_state: int, d_inner: int) -> RecurrentGeometry:
    """One Mamba (v1) layer: conv over d_inner, state (d_inner, d_state) (vLLM mamba1_state_shape)."""
    return RecurrentGeometry(
        mixer="mamba1", conv_kernel=d_conv, inner=d_inner, n_groups=0, group_dim=0, heads=d_inner, head_dim=1,
        state_dim=d_state,
    )


def mamba2_geometry(
    d_conv: int, d_state: int, d_inner: int, n_groups: int, n_heads: int, head_dim: int
) -> RecurrentGeometry:
    """One Mamba2 layer: conv over d_inner + 2 x n_groups x d_state, state (heads, head_dim, d_state)."""
    return RecurrentGeometry(
        mixer="mamba2", conv_kernel=d_conv, inner=d_inner, n_groups=n_groups, group_dim=d_state, heads=n_heads,
        head_dim=head_dim, state_dim=d_state,
    )


def _linear_attention_stack(
    cfg: Config, family: str, n_layers: int, attention: LayerGeometry
) -> tuple[LayerGeometry, ...]:
    """Qwen3-Next / Qwen3.5 layers: `layer_types`, or full attention every `full_attention_interval` layers."""
    types = _layers_from_types(cfg, family, n_layers)
    if types is None:
        interval = int_field(cfg, "full_attention_interval", family)
        types = ["full_attention" if (i + 1) % interval == 0 else "linear_attention" for i in range(n_layers)]
    recurrent = recurrent_layer(gated_deltanet_geometry(cfg, family))
    layers = []
    for layer_type in types:
        if layer_type == "linear_attention":
            layers.append(recurrent)
        elif layer_type == "full_attention":
            layers.append(attention)
        else:
            raise ServewiseInputError(_("config.json for a '{family}' model has an unknown layer type "
                                        "'{layer_type}'").format(family=family, layer_type=layer_type))
    return tuple(layers)


def _qwen3_next(cfg: Config, family: str) -> ModelArchitecture:
    """Qwen3-Next and Qwen3.5: full attention every `full_attention_interval` layers, Gated DeltaNet elsewhere.

    Qwen3.5 (qwen3_5_text / qwen3_5_moe_text) keeps Qwen3-Next's keys; its dense variant has no experts.
    """
    n_layers = int_field(cfg, "num_hidden_layers", family)
    n_heads, n_kv = attention_heads(cfg, family)
    head_dim = int_field(cfg, "head_dim", family)
    layers = _linear_attention_stack(cfg, family, n_layers, _attention_layer(LayerKind.FULL, n_kv, head_dim))
    moe = _qwen_moe(cfg, family, n_layers) if cfg.get("num_experts") else None
    return _arch(cfg, family, layers, n_heads, moe=moe, mamba_ssm_dtype=_ssm_dtype(cfg, "mamba_ssm_dtype"), **_mtp(cfg))


def _ssm_dtype(cfg: Config, key: str) -> str | None:
    value = cfg.get(key)
    return str(value) if value is not None else None


def _mtp(cfg: Config) -> dict[str, Any]:
    """The checkpoint's multi-token-prediction layers (Qwen3-Next/3.5 `mtp_num_hidden_layers`, DeepSeek and
    Nemotron-H `num_nextn_predict_layers`) with a note; engines run them only as a speculative drafter."""
    layers = int(cfg.get("mtp_num_hidden_layers") or cfg.get("num_nextn_predict_layers") or 0)
    if not layers:
        return {}
    return {"mtp_layers": layers, "notes": (
        ngettext("{layers} multi-token-prediction layer ships with the model and is not counted as a transformer "
                 "block: engines add it (and its KV) only when speculative decoding uses it",
                 "{layers} multi-token-prediction layers ship with the model and are not counted as transformer "
                 "blocks: engines add them (and their KV) only when speculative decoding uses them", layers).format(
                     layers=number(layers)),)}


def _mamba_inner(cfg: Config, family: str, expand_key: str) -> int:
    """Mamba inner width: `intermediate_size` when given (MambaConfig), else expand x hidden."""
    if cfg.get("intermediate_size") is not None and family in ("mamba", "falcon_mamba"):
        return int_field(cfg, "intermediate_size", family)
    return int_field(cfg, expand_key, family) * int_field(cfg, "hidden_size", family)


def _mamba(cfg: Config, family: str) -> ModelArchitecture:
    """Pure Mamba (v1): every layer a state-space layer with a fixed per-sequence state."""
    n_layers = int_field(cfg, "num_hidden_layers", family)
    d_inner = _mamba_inner(cfg, family, "expand")
    layer = recurrent_layer(mamba1_geometry(
        int_field(cfg, "conv_kernel", family), int_field(cfg, "state_size", family), d_inner
    ))
    arch = ModelArchitecture(
        name=family,
        family=family,
        layers=(layer,) * n_layers,
        n_heads=0,
        hidden_size=int_field(cfg, "hidden_size", family),
        vocab_size=int_field(cfg, "vocab_size", family),
        max_context_tokens=None,
        notes=(_("a state-space model has no trained context limit in its config.json"),),
    )
    return arch


def _jamba(cfg: Config, family: str) -> ModelArchitecture:
    """Jamba: attention on layers where i % attn_layer_period == attn_layer_offset, Mamba elsewhere; MoE every
    `expert_layer_period` layers from `expert_layer_offset`."""
    n_layers = int_field(cfg, "num_hidden_layers", family)
    n_heads, n_kv = attention_heads(cfg, family)
    head_dim = int_field(cfg, "hidden_size", family) // n_heads  # JambaConfig has no head_dim: hidden / heads
    period = int_field(cfg, "attn_layer_period", family)
    offset = int_field(cfg, "attn_layer_offset", family)
    d_inner = _mamba_inner(cfg, family, "mamba_expand")
    recurrent = recurrent_layer(mamba1_geometry(
        int_field(cfg, "mamba_d_conv", family), int_field(cfg, "mamba_d_state", family), d_inner
    ))
    layers = tuple(
        _attention_layer(LayerKind.FULL, n_kv, head_dim) if i % period == offset else recurrent for i in range(n_layers)
    )
    moe = None
    n_experts = int_field(cfg, "num_experts", family)
    if n_experts > 1:
        e_period = int_field(cfg, "expert_layer_period", family)
        e_offset = int_field(cfg, "expert_layer_offset", family)
        moe = MoEGeometry(
            n_experts=n_experts,
            n_active=int_field(cfg, "num_experts_per_tok", family),
            expert_intermediate_size=int_field(cfg, "intermediate_size", family),
            n_dense_layers=sum(1 for i in range(n_layers) if i % e_period != e_offset),
        )
    return _arch(cfg, family, layers, n_heads, moe=moe)


#: Nemotron-H's hybrid_override_pattern letters (transformers configuration_nemotron_h.py): Mamba2 mixer,
#: attention, MLP-only block, mixture-of-experts block (the last two keep nothing between tokens).
_NEMOTRON_BLOCKS = {"M": "mamba", "*": "attention", "-": "mlp", "E": "moe"}


def _nemotron_h(cfg: Config, family: str) -> ModelArchitecture:
    """Nemotron-H (Nano 9B v2, Nemotron 3): one block type per layer from `hybrid_override_pattern`."""
    n_layers = int_field(cfg, "num_hidden_layers", family)
    pattern = cfg.get("hybrid_override_pattern")
    if not isinstance(pattern, str) or len(pattern) != n_layers or set(pattern) - set(_NEMOTRON_BLOCKS):
        raise ServewiseInputError(
            _("config.json for a '{family}' model needs hybrid_override_pattern with one of "
              "{nemotron_blocks} per layer ({n_layers})").format(
              family=family, nemotron_blocks=''.join(_NEMOTRON_BLOCKS), n_layers=n_layers)
        )
    n_heads, n_kv = attention_heads(cfg, family)
    head_dim = head_dim_of(cfg, family, n_heads, derive=True)
    heads = int_field(cfg, "mamba_num_heads", family)
    mamba_head_dim = int_field(cfg, "mamba_head_dim", family)
    mamba = recurrent_layer(mamba2_geometry(
        int_field(cfg, "conv_kernel", family), int_field(cfg, "ssm_state_size", family), heads * mamba_head_dim,
        int_field(cfg, "n_groups", family), heads, mamba_head_dim,
    ))
    attention = _attention_layer(LayerKind.FULL, n_kv, head_dim)
    stateless = LayerGeometry(kind=LayerKind.NONE)
    layers = tuple(mamba if c == "M" else attention if c == "*" else stateless for c in pattern)
    return _arch(cfg, family, layers, n_heads, mamba_ssm_dtype=_ssm_dtype(cfg, "mamba_ssm_cache_dtype"), **_mtp(cfg))


def _granite_hybrid(cfg: Config, family: str) -> ModelArchitecture:
    """Granite 4.0-H (granitemoehybrid): `layer_types` of mamba / attention; Mamba2 mixers; MoE on every layer."""
    n_layers = int_field(cfg, "num_hidden_layers", family)
    n_heads, n_kv = attention_heads(cfg, family)
    head_dim = int_field(cfg, "hidden_size", family) // n_heads  # GraniteMoeHybridConfig has no head_dim
    types = _layers_from_types(cfg, family, n_layers)
    if types is None:
        raise ConfigFieldMissing("layer_types", family)
    heads = int_field(cfg, "mamba_n_heads", family)
    mamba = recurrent_layer(mamba2_geometry(
        int_field(cfg, "mamba_d_conv", family), int_field(cfg, "mamba_d_state", family),
        int_field(cfg, "mamba_expand", family) * int_field(cfg, "hidden_size", family),
        int_field(cfg, "mamba_n_groups", family), heads, int_field(cfg, "mamba_d_head", family),
    ))
    attention = _attention_layer(LayerKind.FULL, n_kv, head_dim)
    layers = []
    for layer_type in types:
        if layer_type not in ("mamba", "attention"):
            raise ServewiseInputError(_("config.json for a '{family}' model has an unknown layer type "
                                        "'{layer_type}'").format(family=family, layer_type=layer_type))
        layers.append(mamba if layer_type == "mamba" else attention)
    moe = None
    n_experts = int_or_hf_default(cfg, "num_local_experts", family, 0) or 0
    if n_experts > 0:
        moe = MoEGeometry(
            n_experts=n_experts, n_active=int_field(cfg, "num_experts_per_tok", family),
            n_shared=1 if (cfg.get("shared_intermediate_size") or 0) > 0 else 0,
            expert_intermediate_size=int_field(cfg, "intermediate_size", family),
        )
    return _arch(cfg, family, tuple(layers), n_heads, moe=moe)


def _falcon_h1(cfg: Config, family: str) -> ModelArchitecture:
    """Falcon-H1: attention and a Mamba2 mixer side by side in every layer, so every layer keeps both a KV
    cache and a fixed state (a FULL layer carrying `recurrent`): vLLM gives each layer an attention spec and a
    Mamba spec, llama.cpp's hybrid memory filters every layer into both caches (src/llama-model.cpp
    create_memory, LLM_ARCH_FALCON_H1), mlx-lm builds CacheList(ArraysCache, KVCache) per layer."""
    n_layers = int_field(cfg, "num_hidden_layers", family)
    n_heads, n_kv = attention_heads(cfg, family)
    head_dim = head_dim_of(cfg, family, n_heads, derive=True)
    hidden = int_field(cfg, "hidden_size", family)
    d_ssm = cfg.get("mamba_d_ssm")
    inner = int(d_ssm) if d_ssm is not None else int_field(cfg, "mamba_expand", family) * hidden
    geometry = mamba2_geometry(
        int_field(cfg, "mamba_d_conv", family), int_field(cfg, "mamba_d_state", family), inner,
        int_field(cfg, "mamba_n_groups", family), int_field(cfg, "mamba_n_heads", family),
        int_field(cfg, "mamba_d_head", family),
    )
    layer = replace(_attention_layer(LayerKind.FULL, n_kv, head_dim), recurrent=geometry,
                    recurrent_conv_elements=geometry.conv_elements, recurrent_state_elements=geometry.state_elements)
    return _arch(cfg, family, (layer,) * n_layers, n_heads)


def _encoder(cfg: Config, family: str) -> ModelArchitecture:
    """BERT / XLM-RoBERTa encoders (bge-m3 style): multi-head attention, no KV cache kept between requests."""
    n_layers = int_field(cfg, "num_hidden_layers", family)
    n_heads = int_field(cfg, "num_attention_heads", family)
    head_dim = int_field(cfg, "hidden_size", family) // n_heads  # BertConfig has no head_dim: hidden / heads
    layer = _attention_layer(LayerKind.FULL, n_heads, head_dim)
    return _arch(
        cfg,
        family,
        (layer,) * n_layers,
        n_heads,
        notes=(_("encoder: attention runs over each input once; nothing is cached between requests"),),
    )


# --- kb builders (issue 17) ---
def _minimax_m2(cfg: Config, family: str) -> ModelArchitecture:
    """MiniMax-M2: full GQA attention in every layer (head_dim stated), `num_local_experts` experts per layer."""
    arch = _dense_gqa(cfg, family)
    moe = MoEGeometry(
        n_experts=int_field(cfg, "num_local_experts", family),
        n_active=int_field(cfg, "num_experts_per_tok", family),
        expert_intermediate_size=int_field(cfg, "intermediate_size", family),
    )
    notes = arch.notes
    if cfg.get("use_mtp"):
        notes += (_("multi-token-prediction modules (use_mtp) are not counted as transformer blocks"),)
    return replace(arch, moe=moe, notes=notes)


def _llama4_text(cfg: Config, family: str) -> ModelArchitecture:
    """Llama 4: chunked local attention (attention_chunk_size) on rope layers, full attention on every
    `no_rope_layer_interval`-th (NoPE) layer; MoE on `moe_layers` (every `interleave_moe_layer_step`-th).

    A chunked layer attends within its current chunk only, so it is held here as a window of
    `attention_chunk_size` tokens: an approximation of how engines size it (vLLM has its own chunked spec).
    """
    n_layers = int_field(cfg, "num_hidden_layers", family)
    n_heads, n_kv = attention_heads(cfg, family)
    head_dim = head_dim_of(cfg, family, n_heads, derive=True)
    chunk = int_or_hf_default(cfg, "attention_chunk_size", family, 8192)  # HF default (Llama4TextConfig): 8192
    interval = int_or_hf_default(cfg, "no_rope_layer_interval", family, 4)  # HF default: 4
    uses_rope = cfg.get("no_rope_layers") or [int((i + 1) % interval != 0) for i in range(n_layers)]
    layers = tuple(
        _attention_layer(LayerKind.SLIDING, n_kv, head_dim, chunk)
        if rope
        else _attention_layer(LayerKind.FULL, n_kv, head_dim)
        for rope in uses_rope
    )
    step = int_or_hf_default(cfg, "interleave_moe_layer_step", family, 1)  # HF default: 1
    moe_layers = cfg.get("moe_layers") or list(range(step - 1, n_layers, step))
    moe = MoEGeometry(
        n_experts=int_field(cfg, "num_local_experts", family),
        n_active=int_field(cfg, "num_experts_per_tok", family),
        n_shared=1,
        expert_intermediate_size=int_field(cfg, "intermediate_size", family),
        n_dense_layers=n_layers - len(moe_layers),
    )
    notes = (_("chunked attention (chunks of {chunk}\u00a0tokens) is held as a {chunk}-token window; an "
               "approximation").format(chunk=chunk),)
    return _arch(cfg, family, layers, n_heads, moe=moe, notes=notes)


def _gemma4_text(cfg: Config, family: str) -> ModelArchitecture:
    """Gemma 4 (dense): sliding layers with `head_dim` and `num_key_value_heads`, full layers with
    `global_head_dim` and `num_global_key_value_heads`, per `layer_types`.

    With attention_k_eq_v the full layers compute V from K's projection; whether an engine then stores V
    separately was not established, so both are counted (an upper bound).
    """
    n_layers = int_field(cfg, "num_hidden_layers", family)
    n_heads = int_field(cfg, "num_attention_heads", family)
    types = _layers_from_types(cfg, family, n_layers)
    if types is None:
        raise ConfigFieldMissing("layer_types", family)
    window = int_field(cfg, "sliding_window", family)
    local = _attention_layer(LayerKind.SLIDING, int_field(cfg, "num_key_value_heads", family),
                             int_field(cfg, "head_dim", family), window)
    full = _attention_layer(LayerKind.FULL, int_field(cfg, "num_global_key_value_heads", family),
                            int_field(cfg, "global_head_dim", family))
    layers = []
    for layer_type in types:
        if layer_type not in ("sliding_attention", "full_attention"):
            raise ServewiseInputError(_("config.json for a '{family}' model has an unknown layer type "
                                        "'{layer_type}'").format(family=family, layer_type=layer_type))
        layers.append(local if layer_type == "sliding_attention" else full)
    notes: tuple[str, ...] = ()
    if cfg.get("attention_k_eq_v"):
        notes = (_("attention_k_eq_v: full layers derive V from K; K and V are both counted (an upper bound)"),)
    return _arch(cfg, family, tuple(layers), n_heads, notes=notes)


def _deepseek_sparse(cfg: Config, family: str) -> ModelArchitecture:
    """DeepSeek-V3.2 / GLM-5: DeepSeek's MLA and MoE layout plus DeepSeek Sparse Attention's indexer."""
    arch = _deepseek(cfg, family)
    note = _(
        "DeepSeek Sparse Attention: an indexer ({heads} heads of {head_dim}) picks {topk}\u00a0tokens per query and "
        "keeps its own key cache, not counted here").format(
        heads=cfg.get("index_n_heads"), head_dim=cfg.get("index_head_dim"), topk=cfg.get("index_topk"))
    return replace(arch, notes=(*arch.notes, note))


_BUILDERS: dict[str, Callable[[Config, str], ModelArchitecture]] = {
    "llama": _dense_gqa,
    "mistral": _dense_gqa,
    "qwen2": _dense_gqa,
    "qwen3": _dense_gqa,
    "phi3": _dense_gqa,
    "qwen3_moe": _dense_gqa,
    "mixtral": _mixtral,
    "gemma2": _gemma2,
    "gemma3_text": _gemma3_text,
    "gpt_oss": _gpt_oss,
    "deepseek_v2": _deepseek,
    "deepseek_v3": _deepseek,
    "qwen3_next": _qwen3_next,
    "qwen3_5_text": _qwen3_next,
    "qwen3_5_moe_text": _qwen3_next,
    "nemotron_h": _nemotron_h,
    "granitemoehybrid": _granite_hybrid,
    "falcon_h1": _falcon_h1,
    "mamba": _mamba,
    "falcon_mamba": _mamba,
    "jamba": _jamba,
    "kimi_k2": _deepseek,
    "deepseek_v32": _deepseek_sparse,
    "glm_moe_dsa": _deepseek_sparse,
    "llama4_text": _llama4_text,
    "minimax_m2": _minimax_m2,
    "gemma4_text": _gemma4_text,
    "bert": _encoder,
    "xlm-roberta": _encoder,
    "roberta": _encoder,
}

SUPPORTED_MODEL_TYPES: tuple[str, ...] = tuple(sorted(set(_BUILDERS) | set(WRAPPERS)))
