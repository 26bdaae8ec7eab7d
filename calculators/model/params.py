"""Parameter counts from a Hugging Face config.json: all weights (resident) and those used per token.

Counts follow the tensors each family's transformers model creates: embeddings, attention
projections (GQA, MLA low-rank, linear attention), MLP or experts + router + shared experts, norms,
and the output head unless it is tied to the embeddings. Vision towers of multimodal wrappers are
not counted (`ParamCounts.excludes` says so).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from calculators.errors import ConfigFieldMissing, ServewiseInputError
from calculators.i18n import _
from calculators.model.config_fields import (
    attention_heads,
    head_dim_of,
    int_field,
    int_or_hf_default,
    require,
    routed_experts,
    text_config_of,
    with_hf_defaults,
)

Config = Mapping[str, Any]


@dataclass(frozen=True)
class ParamCounts:
    """Parameters (elements, not bytes) of a model's language part."""

    total: int  # every weight that must be resident
    active: int  # weights one token passes through (differs from total for MoE)
    embedding: int  # input embedding table (+ position/type tables for encoders)
    output_head: int  # lm_head, 0 when tied to the embeddings or absent (encoders)
    excludes: tuple[str, ...] = ()  # parts of the checkpoint deliberately not counted


@dataclass(frozen=True)
class _LayerCounts:
    """One block: weights always used, and the routed-expert weights of which only some run per token."""

    dense: int
    experts_total: int = 0
    experts_active: int = 0


def _tied(cfg: Config, hf_default: bool) -> bool:
    """Whether lm_head shares the embedding matrix; `hf_default` is the family config class's default."""
    value = cfg.get("tie_word_embeddings")
    return hf_default if value is None else bool(value)


def _gated_mlp(hidden: int, inter: int) -> int:
    """gate, up and down projections without bias (SwiGLU / GeGLU)."""
    return 3 * hidden * inter


def _gqa_attention(cfg: Config, family: str, hidden: int, *, qkv_bias: bool, o_bias: bool, qk_norm: bool) -> int:
    """q, k, v, o projections of grouped-query attention, with optional biases and per-head q/k norms."""
    n_heads, n_kv = attention_heads(cfg, family)
    head_dim = head_dim_of(cfg, family, n_heads, derive=family not in ("qwen3", "qwen3_moe", "qwen3_next"))
    q = n_heads * head_dim
    kv = n_kv * head_dim
    count = hidden * (q + 2 * kv) + q * hidden
    if qkv_bias:
        count += q + 2 * kv
    if o_bias:
        count += hidden
    if qk_norm:
        count += 2 * head_dim
    return count


def _dense_family(cfg: Config, family: str) -> tuple[list[_LayerCounts], bool, int]:
    """Llama / Mistral / Qwen2 / Qwen3 / Phi-3 / Gemma 2-3: (per-layer counts, tied default, final norm)."""
    hidden = int_field(cfg, "hidden_size", family)
    n_layers = int_field(cfg, "num_hidden_layers", family)
    inter = int_field(cfg, "intermediate_size", family)
    bias = bool(cfg.get("attention_bias", False))  # HF default (LlamaConfig, Gemma configs): no bias
    attention = _gqa_attention(
        cfg,
        family,
        hidden,
        qkv_bias=bias or family == "qwen2",  # Qwen2 always has q/k/v bias (Qwen2Attention)
        o_bias=bias,
        qk_norm=family in ("qwen3", "gemma3_text"),
    )
    norms = 4 * hidden if family in ("gemma2", "gemma3_text") else 2 * hidden
    layer = _LayerCounts(dense=attention + _gated_mlp(hidden, inter) + norms)
    tied_default = family in ("gemma2", "gemma3_text")  # Gemma configs tie by default; the others do not
    return [layer] * n_layers, tied_default, hidden


def _qwen_moe_layers(cfg: Config, family: str, attention: list[int], norms: int) -> list[_LayerCounts]:
    """Qwen3-MoE / Qwen3-Next blocks: routed experts + router (+ gated shared expert), or a dense MLP."""
    hidden = int_field(cfg, "hidden_size", family)
    n_layers = int_field(cfg, "num_hidden_layers", family)
    n_experts = routed_experts(cfg, family)
    k = int_field(cfg, "num_experts_per_tok", family)
    expert = _gated_mlp(hidden, int_field(cfg, "moe_intermediate_size", family))
    shared_inter = cfg.get("shared_expert_intermediate_size") or 0
    shared = _gated_mlp(hidden, shared_inter) + hidden if shared_inter else 0  # + shared_expert_gate (hidden -> 1)
    dense_layers = cfg.get("mlp_only_layers") or []  # HF default: []
    step = int_or_hf_default(cfg, "decoder_sparse_step", family, 1)  # HF default: 1
    layers = []
    for i in range(n_layers):
        if i in dense_layers or (i + 1) % step != 0:
            layers.append(
                _LayerCounts(
                    dense=attention[i] + norms + _gated_mlp(hidden, int_field(cfg, "intermediate_size", family))
                )
            )
        else:
            layers.append(
                _LayerCounts(
                    dense=attention[i] + norms + hidden * n_experts + shared,
                    experts_total=n_experts * expert,
                    experts_active=k * expert,
                )
            )
    return layers


def _qwen3_moe(cfg: Config, family: str) -> tuple[list[_LayerCounts], bool, int]:
    """Qwen3-MoE: Qwen3 attention (q/k norms) and routed experts."""
    hidden = int_field(cfg, "hidden_size", family)
    n_layers = int_field(cfg, "num_hidden_layers", family)
    attention = _gqa_attention(
        cfg, family, hidden, qkv_bias=bool(cfg.get("attention_bias", False)), o_bias=False, qk_norm=True
    )
    return _qwen_moe_layers(cfg, family, [attention] * n_layers, 2 * hidden), False, hidden


def _gated_deltanet(cfg: Config, family: str, hidden: int) -> int:
    """One Gated DeltaNet block of Qwen3-Next: qkvz and ba projections, short conv, decay terms, gated norm, out."""
    nk, dk = int_field(cfg, "linear_num_key_heads", family), int_field(cfg, "linear_key_head_dim", family)
    nv, dv = int_field(cfg, "linear_num_value_heads", family), int_field(cfg, "linear_value_head_dim", family)
    kernel = int_field(cfg, "linear_conv_kernel_dim", family)
    key_dim, value_dim = nk * dk, nv * dv
    in_proj = hidden * (2 * key_dim + 2 * value_dim) + hidden * 2 * nv
    conv = (2 * key_dim + value_dim) * kernel  # depthwise, no bias
    return in_proj + conv + 2 * nv + dv + value_dim * hidden  # dt_bias + A_log, norm, out_proj


def _qwen3_next(cfg: Config, family: str) -> tuple[list[_LayerCounts], bool, int]:
    """Qwen3-Next / Qwen3.5: gated full attention (q doubled for the output gate) or Gated DeltaNet, then MoE
    (or, for dense Qwen3.5, a gated MLP)."""
    hidden = int_field(cfg, "hidden_size", family)
    n_layers = int_field(cfg, "num_hidden_layers", family)
    n_heads, n_kv = attention_heads(cfg, family)
    head_dim = int_field(cfg, "head_dim", family)
    full = hidden * (2 * n_heads * head_dim + 2 * n_kv * head_dim) + n_heads * head_dim * hidden + 2 * head_dim
    linear = _gated_deltanet(cfg, family, hidden)
    types = cfg.get("layer_types")
    if types is None:
        interval = int_field(cfg, "full_attention_interval", family)
        types = ["full_attention" if (i + 1) % interval == 0 else "linear_attention" for i in range(n_layers)]
    attention = [full if t == "full_attention" else linear for t in types]
    if not cfg.get("num_experts"):  # Qwen3.5 dense: a gated MLP on every layer
        mlp = _gated_mlp(hidden, int_field(cfg, "intermediate_size", family))
        return [_LayerCounts(dense=a + 2 * hidden + mlp) for a in attention], False, hidden
    return _qwen_moe_layers(cfg, family, attention, 2 * hidden), False, hidden


def _mamba2_mixer(
    hidden: int, inner: int, n_groups: int, d_state: int, n_heads: int, d_conv: int, *, proj_bias: bool,
    conv_bias: bool
) -> int:
    """One Mamba2 mixer (transformers Mamba2/Bamba/NemotronH/GraniteMoeHybrid): in_proj to z, x, B, C, dt;
    depthwise conv over x, B, C; dt_bias, A_log, D per head; gated RMSNorm over the inner width; out_proj."""
    conv_dim = inner + 2 * n_groups * d_state
    in_out = inner + conv_dim + n_heads
    count = hidden * in_out + (in_out if proj_bias else 0) + inner * hidden + (hidden if proj_bias else 0)
    count += conv_dim * d_conv + (conv_dim if conv_bias else 0)
    return count + 3 * n_heads + inner


def _nemotron_h(cfg: Config, family: str) -> tuple[list[_LayerCounts], bool, int]:
    """Nemotron-H: per `hybrid_override_pattern` a Mamba2 mixer, attention or a squared-ReLU MLP, one norm each."""
    hidden = int_field(cfg, "hidden_size", family)
    heads = int_field(cfg, "mamba_num_heads", family)
    inner = heads * int_field(cfg, "mamba_head_dim", family)
    mixer = _mamba2_mixer(
        hidden, inner, int_field(cfg, "n_groups", family), int_field(cfg, "ssm_state_size", family), heads,
        int_field(cfg, "conv_kernel", family),
        proj_bias=bool(cfg.get("use_bias", False)),  # HF default (NemotronHConfig): False
        conv_bias=bool(cfg.get("use_conv_bias", True)),  # HF default (NemotronHConfig): True
    )
    bias = bool(cfg.get("attention_bias", False))  # HF default (NemotronHConfig): False
    attention = _gqa_attention(cfg, family, hidden, qkv_bias=bias, o_bias=bias, qk_norm=False)
    inter = int_field(cfg, "intermediate_size", family)
    mlp = 2 * hidden * inter + ((inter + hidden) if cfg.get("mlp_bias") else 0)  # up + down, no gate
    blocks = {"M": mixer, "*": attention, "-": mlp}
    pattern = str(require(cfg, "hybrid_override_pattern", family))
    if set(pattern) - set(blocks):
        raise ServewiseInputError(_("servewise cannot count parameters of '{family}' blocks other than M, * "
                                    "and -").format(family=family))
    return [_LayerCounts(dense=blocks[c] + hidden) for c in pattern], False, hidden


def _granite_hybrid(cfg: Config, family: str) -> tuple[list[_LayerCounts], bool, int]:
    """Granite 4.0-H: a Mamba2 mixer or attention per `layer_types`, then routed experts (+ shared MLP) or a
    shared MLP alone; two norms per layer. GraniteMoeHybridConfig ties the output head by default."""
    hidden = int_field(cfg, "hidden_size", family)
    heads = int_field(cfg, "mamba_n_heads", family)
    mixer = _mamba2_mixer(
        hidden, int_field(cfg, "mamba_expand", family) * hidden, int_field(cfg, "mamba_n_groups", family),
        int_field(cfg, "mamba_d_state", family), heads, int_field(cfg, "mamba_d_conv", family),
        proj_bias=bool(cfg.get("mamba_proj_bias", False)),  # HF default (GraniteMoeHybridConfig): False
        conv_bias=bool(cfg.get("mamba_conv_bias", True)),  # HF default (GraniteMoeHybridConfig): True
    )
    bias = bool(cfg.get("attention_bias", False))
    attention = _gqa_attention(cfg, family, hidden, qkv_bias=bias, o_bias=bias, qk_norm=False)
    shared_inter = cfg.get("shared_intermediate_size") or 0
    shared = 3 * hidden * shared_inter  # shared_mlp: input_linear (hidden -> 2 x inter) + output_linear
    n_experts = int_or_hf_default(cfg, "num_local_experts", family, 0) or 0
    expert = 3 * hidden * int_field(cfg, "intermediate_size", family)
    k = int_field(cfg, "num_experts_per_tok", family) if n_experts else 0
    layers = []
    for layer_type in require(cfg, "layer_types", family):
        mix = mixer if layer_type == "mamba" else attention
        router = hidden * n_experts
        layers.append(_LayerCounts(dense=mix + shared + router + 2 * hidden, experts_total=n_experts * expert,
                                   experts_active=k * expert))
    return layers, True, hidden


def _falcon_h1(cfg: Config, family: str) -> tuple[list[_LayerCounts], bool, int]:
    """Falcon-H1: a Mamba2 mixer and attention side by side in every layer, then a gated MLP; two norms."""
    hidden = int_field(cfg, "hidden_size", family)
    d_ssm = cfg.get("mamba_d_ssm")
    inner = int(d_ssm) if d_ssm is not None else int_field(cfg, "mamba_expand", family) * hidden
    heads = int_field(cfg, "mamba_n_heads", family)
    mixer = _mamba2_mixer(
        hidden, inner, int_field(cfg, "mamba_n_groups", family), int_field(cfg, "mamba_d_state", family), heads,
        int_field(cfg, "mamba_d_conv", family),
        proj_bias=bool(cfg.get("mamba_proj_bias", False)),  # HF default (FalconH1Config): False
        conv_bias=bool(cfg.get("mamba_conv_bias", True)),  # HF default (FalconH1Config): True
    )
    if not cfg.get("mamba_rms_norm", False):  # HF default (FalconH1Config): no gated norm
        mixer -= inner
    if cfg.get("projectors_bias", False):
        mixer += hidden
    bias = bool(cfg.get("attention_bias", False))
    attention = _gqa_attention(cfg, family, hidden, qkv_bias=bias, o_bias=bias, qk_norm=False)
    inter = int_field(cfg, "intermediate_size", family)
    mlp = _gated_mlp(hidden, inter) + ((2 * inter + hidden) if cfg.get("mlp_bias") else 0)
    layer = _LayerCounts(dense=mixer + attention + mlp + 2 * hidden)
    return [layer] * int_field(cfg, "num_hidden_layers", family), False, hidden


def _mixtral(cfg: Config, family: str) -> tuple[list[_LayerCounts], bool, int]:
    """Mixtral: Mistral attention, `num_local_experts` gated experts and a router per layer."""
    hidden = int_field(cfg, "hidden_size", family)
    n_layers = int_field(cfg, "num_hidden_layers", family)
    n_experts = int_field(cfg, "num_local_experts", family)
    k = int_field(cfg, "num_experts_per_tok", family)
    expert = _gated_mlp(hidden, int_field(cfg, "intermediate_size", family))
    attention = _gqa_attention(cfg, family, hidden, qkv_bias=False, o_bias=False, qk_norm=False)
    layer = _LayerCounts(
        dense=attention + 2 * hidden + hidden * n_experts, experts_total=n_experts * expert, experts_active=k * expert
    )
    return [layer] * n_layers, False, hidden


def _gpt_oss(cfg: Config, family: str) -> tuple[list[_LayerCounts], bool, int]:
    """gpt-oss: biased attention with per-head sinks; experts with fused biased gate_up and down; biased router."""
    hidden = int_field(cfg, "hidden_size", family)
    n_layers = int_field(cfg, "num_hidden_layers", family)
    n_heads, _unused = attention_heads(cfg, family)
    inter = int_field(cfg, "intermediate_size", family)
    n_experts = int_field(cfg, "num_local_experts", family)
    k = cfg.get("num_experts_per_tok", cfg.get("experts_per_token"))
    if k is None:
        raise ConfigFieldMissing("num_experts_per_tok", family)
    bias = bool(cfg.get("attention_bias", True))  # HF default (GptOssConfig): True
    attention = _gqa_attention(cfg, family, hidden, qkv_bias=bias, o_bias=bias, qk_norm=False) + n_heads  # sinks
    expert = hidden * 2 * inter + 2 * inter + inter * hidden + hidden
    router = hidden * n_experts + n_experts
    layer = _LayerCounts(
        dense=attention + router + 2 * hidden, experts_total=n_experts * expert, experts_active=int(k) * expert
    )
    return [layer] * n_layers, False, hidden


def _deepseek(cfg: Config, family: str) -> tuple[list[_LayerCounts], bool, int]:
    """DeepSeek V2/V3: MLA projections (low-rank q when q_lora_rank is set), dense or MoE MLP with shared experts."""
    hidden = int_field(cfg, "hidden_size", family)
    n_layers = int_field(cfg, "num_hidden_layers", family)
    n_heads = int_field(cfg, "num_attention_heads", family)
    kv_rank = int_field(cfg, "kv_lora_rank", family)
    rope, nope, v = (int_field(cfg, key, family) for key in ("qk_rope_head_dim", "qk_nope_head_dim", "v_head_dim"))
    q_rank = cfg.get("q_lora_rank")
    q_head = nope + rope
    q = hidden * q_rank + q_rank + q_rank * n_heads * q_head if q_rank else hidden * n_heads * q_head
    attention = q + hidden * (kv_rank + rope) + kv_rank + kv_rank * n_heads * (nope + v) + n_heads * v * hidden
    n_routed = cfg.get("n_routed_experts") or 0
    first_dense = int_field(cfg, "first_k_dense_replace", family)
    freq = int_or_hf_default(cfg, "moe_layer_freq", family, 1)  # HF default (DeepseekV2/V3Config): 1
    dense_mlp = _gated_mlp(hidden, int_field(cfg, "intermediate_size", family))
    layers = []
    for i in range(n_layers):
        if n_routed and i >= first_dense and i % freq == 0:
            expert = _gated_mlp(hidden, int_field(cfg, "moe_intermediate_size", family))
            n_shared = int_or_hf_default(cfg, "n_shared_experts", family, 0) or 0
            router = hidden * n_routed + (n_routed if cfg.get("topk_method") == "noaux_tc" else 0)  # + score bias
            layers.append(
                _LayerCounts(
                    dense=attention + 2 * hidden + router + n_shared * expert,
                    experts_total=n_routed * expert,
                    experts_active=int_field(cfg, "num_experts_per_tok", family) * expert,
                )
            )
        else:
            layers.append(_LayerCounts(dense=attention + 2 * hidden + dense_mlp))
    return layers, False, hidden


def _mamba_mixer(
    hidden: int, d_inner: int, d_state: int, d_conv: int, dt_rank: int, *, proj_bias: bool, conv_bias: bool
) -> int:
    """One Mamba (v1) mixer: in/out projections, depthwise conv, x/dt projections, A and D."""
    count = hidden * 2 * d_inner + d_inner * hidden + (2 * d_inner + hidden if proj_bias else 0)
    count += d_inner * d_conv + (d_inner if conv_bias else 0)
    count += d_inner * (dt_rank + 2 * d_state) + dt_rank * d_inner + d_inner  # x_proj, dt_proj (+bias)
    return count + d_inner * d_state + d_inner  # A_log, D


def _dt_rank(cfg: Config, key: str, family: str, hidden: int) -> int:
    """Mamba's dt rank: an integer, or "auto" = ceil(hidden / 16) as transformers defines it."""
    value = require(cfg, key, family)
    return math.ceil(hidden / 16) if value == "auto" else int(value)


def _mamba(cfg: Config, family: str) -> tuple[list[_LayerCounts], bool, int]:
    """Pure Mamba: a mixer and one norm per layer; MambaConfig ties the output head by default."""
    hidden = int_field(cfg, "hidden_size", family)
    d_inner = int_field(cfg, "intermediate_size", family)
    mixer = _mamba_mixer(
        hidden,
        d_inner,
        int_field(cfg, "state_size", family),
        int_field(cfg, "conv_kernel", family),
        _dt_rank(cfg, "time_step_rank", family, hidden),
        proj_bias=bool(cfg.get("use_bias", False)),  # HF default (MambaConfig): False
        conv_bias=bool(cfg.get("use_conv_bias", True)),  # HF default (MambaConfig): True
    )
    return [_LayerCounts(dense=mixer + hidden)] * int_field(cfg, "num_hidden_layers", family), True, hidden


def _jamba(cfg: Config, family: str) -> tuple[list[_LayerCounts], bool, int]:
    """Jamba: attention or Mamba mixer (with dt/B/C norms) per layer, MoE or dense MLP per layer."""
    hidden = int_field(cfg, "hidden_size", family)
    n_layers = int_field(cfg, "num_hidden_layers", family)
    inter = int_field(cfg, "intermediate_size", family)
    d_state = int_field(cfg, "mamba_d_state", family)
    d_inner = int_field(cfg, "mamba_expand", family) * hidden
    dt_rank = _dt_rank(cfg, "mamba_dt_rank", family, hidden)
    mixer = (
        _mamba_mixer(
            hidden,
            d_inner,
            d_state,
            int_field(cfg, "mamba_d_conv", family),
            dt_rank,
            proj_bias=bool(cfg.get("mamba_proj_bias", False)),  # HF default (JambaConfig): False
            conv_bias=bool(cfg.get("mamba_conv_bias", True)),  # HF default (JambaConfig): True
        )
        + dt_rank
        + 2 * d_state
    )  # dt, B and C layernorms
    attention = _gqa_attention(cfg, family, hidden, qkv_bias=False, o_bias=False, qk_norm=False)
    period, offset = int_field(cfg, "attn_layer_period", family), int_field(cfg, "attn_layer_offset", family)
    n_experts = int_field(cfg, "num_experts", family)
    e_period, e_offset = int_field(cfg, "expert_layer_period", family), int_field(cfg, "expert_layer_offset", family)
    k = int_field(cfg, "num_experts_per_tok", family)
    layers = []
    for i in range(n_layers):
        mix = attention if i % period == offset else mixer
        if n_experts > 1 and i % e_period == e_offset:
            expert = _gated_mlp(hidden, inter)
            layers.append(
                _LayerCounts(
                    dense=mix + 2 * hidden + hidden * n_experts,
                    experts_total=n_experts * expert,
                    experts_active=k * expert,
                )
            )
        else:
            layers.append(_LayerCounts(dense=mix + 2 * hidden + _gated_mlp(hidden, inter)))
    return layers, False, hidden


def _encoder(cfg: Config, family: str) -> ParamCounts:
    """BERT / XLM-RoBERTa encoder with its pooler: embeddings (word, position, type), biased layers, LayerNorms."""
    hidden = int_field(cfg, "hidden_size", family)
    inter = int_field(cfg, "intermediate_size", family)
    n_layers = int_field(cfg, "num_hidden_layers", family)
    embedding = (
        int_field(cfg, "vocab_size", family) * hidden
        + int_field(cfg, "max_position_embeddings", family) * hidden
        + int_field(cfg, "type_vocab_size", family) * hidden
    )
    layer = 4 * (hidden * hidden + hidden) + 2 * hidden + hidden * inter + inter + inter * hidden + hidden + 2 * hidden
    total = embedding + 2 * hidden + n_layers * layer + hidden * hidden + hidden  # embedding LayerNorm, pooler
    return ParamCounts(total=total, active=total, embedding=embedding, output_head=0)


# --- kb counters (issue 17) ---
def _llama4(cfg: Config, family: str) -> tuple[list[_LayerCounts], bool, int]:
    """Llama 4 text: GQA without bias (its q/k L2 norm has no weights); every `interleave_moe_layer_step`-th
    layer is MoE (router, fused gate/up and down experts, one shared expert), the others a dense MLP of
    `intermediate_size_mlp`."""
    hidden = int_field(cfg, "hidden_size", family)
    n_layers = int_field(cfg, "num_hidden_layers", family)
    attention = _gqa_attention(cfg, family, hidden, qkv_bias=False, o_bias=False, qk_norm=False)
    n_experts = int_field(cfg, "num_local_experts", family)
    k = int_field(cfg, "num_experts_per_tok", family)
    inter = int_field(cfg, "intermediate_size", family)
    step = int_or_hf_default(cfg, "interleave_moe_layer_step", family, 1)  # HF default (Llama4TextConfig): 1
    moe_layers = cfg.get("moe_layers")
    if moe_layers is None:
        moe_layers = list(range(step - 1, n_layers, step))
    expert = _gated_mlp(hidden, inter)
    layers = []
    for i in range(n_layers):
        if i in moe_layers:
            layers.append(_LayerCounts(dense=attention + 2 * hidden + hidden * n_experts + expert,
                                       experts_total=n_experts * expert, experts_active=k * expert))
        else:
            dense_inter = int_field(cfg, "intermediate_size_mlp", family)
            layers.append(_LayerCounts(dense=attention + 2 * hidden + _gated_mlp(hidden, dense_inter)))
    return layers, False, hidden


def _minimax_m2(cfg: Config, family: str) -> tuple[list[_LayerCounts], bool, int]:
    """MiniMax-M2: GQA with per-layer q/k RMSNorms over all heads, sigmoid router with a score bias, gated experts.
    The multi-token-prediction modules (use_mtp) are not part of the model transformers builds."""
    hidden = int_field(cfg, "hidden_size", family)
    n_layers = int_field(cfg, "num_hidden_layers", family)
    n_heads, n_kv = attention_heads(cfg, family)
    head_dim = int_field(cfg, "head_dim", family)
    attention = _gqa_attention(cfg, family, hidden, qkv_bias=False, o_bias=False, qk_norm=False)
    attention += (n_heads + n_kv) * head_dim  # q_norm / k_norm over every head ("per_layer")
    n_experts = int_field(cfg, "num_local_experts", family)
    k = int_field(cfg, "num_experts_per_tok", family)
    expert = _gated_mlp(hidden, int_field(cfg, "intermediate_size", family))
    router = hidden * n_experts + (n_experts if cfg.get("use_routing_bias", True) else 0)
    layer = _LayerCounts(dense=attention + 2 * hidden + router, experts_total=n_experts * expert,
                         experts_active=k * expert)
    return [layer] * n_layers, False, hidden


def _gemma4_dense(cfg: Config, family: str) -> tuple[list[_LayerCounts], bool, int]:
    """Gemma 4 dense text: sliding layers use `head_dim` and `num_key_value_heads`; full layers use
    `global_head_dim` and `num_global_key_value_heads`, and with attention_k_eq_v they have no v_proj.
    q/k norms per head, four norms per block, a gated MLP; embeddings tied by default."""
    if cfg.get("enable_moe_block") or cfg.get("hidden_size_per_layer_input") or cfg.get("num_kv_shared_layers"):
        raise ServewiseInputError(
            _("servewise counts Gemma 4 dense models only (no MoE block, per-layer inputs or shared-KV layers) yet")
        )
    hidden = int_field(cfg, "hidden_size", family)
    n_layers = int_field(cfg, "num_hidden_layers", family)
    n_heads = int_field(cfg, "num_attention_heads", family)
    mlp = _gated_mlp(hidden, int_field(cfg, "intermediate_size", family))
    types = _gemma4_layer_types(cfg, family, n_layers)
    layers = []
    for layer_type in types:
        if layer_type == "full_attention":
            head_dim = int_field(cfg, "global_head_dim", family)
            n_kv = int_field(cfg, "num_global_key_value_heads", family)
            kv_projections = 1 if cfg.get("attention_k_eq_v") else 2
        else:
            head_dim = int_field(cfg, "head_dim", family)
            n_kv = int_field(cfg, "num_key_value_heads", family)
            kv_projections = 2
        q = n_heads * head_dim
        attention = hidden * q + kv_projections * hidden * n_kv * head_dim + q * hidden + 2 * head_dim
        layers.append(_LayerCounts(dense=attention + mlp + 4 * hidden))
    return layers, True, hidden


def _gemma4_layer_types(cfg: Config, family: str, n_layers: int) -> list[str]:
    types = cfg.get("layer_types")
    if not isinstance(types, list) or len(types) != n_layers:
        raise ConfigFieldMissing("layer_types", family)
    return [str(t) for t in types]


def _deepseek_sparse(cfg: Config, family: str) -> tuple[list[_LayerCounts], bool, int]:
    """DeepSeek-V3.2 / GLM-5 (DeepSeek Sparse Attention): the DeepSeek MLA + MoE blocks plus a lightning
    indexer per layer (wq_b from the q latent, wk, a LayerNorm on its keys, per-head weights). Layers whose
    `indexer_types` entry is "shared" reuse the previous indexer and carry none."""
    layers, tied, final_norm = _deepseek(cfg, family)
    hidden = int_field(cfg, "hidden_size", family)
    n_idx, idx_dim = int_field(cfg, "index_n_heads", family), int_field(cfg, "index_head_dim", family)
    q_rank = int_field(cfg, "q_lora_rank", family)
    indexer = q_rank * n_idx * idx_dim + hidden * idx_dim + 2 * idx_dim + hidden * n_idx
    kinds = cfg.get("indexer_types") or ["full"] * len(layers)
    return [
        _LayerCounts(dense=layer.dense + (indexer if kind == "full" else 0), experts_total=layer.experts_total,
                     experts_active=layer.experts_active)
        for layer, kind in zip(layers, kinds, strict=True)
    ], tied, final_norm


_COUNTERS: dict[str, Callable[[Config, str], tuple[list[_LayerCounts], bool, int]]] = {
    "llama": _dense_family,
    "mistral": _dense_family,
    "qwen2": _dense_family,
    "qwen3": _dense_family,
    "phi3": _dense_family,
    "gemma2": _dense_family,
    "gemma3_text": _dense_family,
    "qwen3_moe": _qwen3_moe,
    "qwen3_next": _qwen3_next,
    "qwen3_5_text": _qwen3_next,
    "qwen3_5_moe_text": _qwen3_next,
    "nemotron_h": _nemotron_h,
    "granitemoehybrid": _granite_hybrid,
    "falcon_h1": _falcon_h1,
    "mixtral": _mixtral,
    "gpt_oss": _gpt_oss,
    "deepseek_v2": _deepseek,
    "deepseek_v3": _deepseek,
    "mamba": _mamba,
    "falcon_mamba": _mamba,
    "jamba": _jamba,
    "kimi_k2": _deepseek,
    "deepseek_v32": _deepseek_sparse,
    "glm_moe_dsa": _deepseek_sparse,
    "llama4_text": _llama4,
    "minimax_m2": _minimax_m2,
    "gemma4_text": _gemma4_dense,
}


def count_parameters(config: Config) -> ParamCounts:
    """Total and per-token parameters of the language model described by a config.json dict (elements)."""
    text, family = text_config_of(config)
    excludes = ("vision tower and projector",) if text is not config else ()
    if family in ("bert", "xlm-roberta", "roberta"):
        return _encoder(text, family)
    counter = _COUNTERS.get(family)
    if counter is None:
        raise ServewiseInputError(_("servewise cannot count parameters for model_type '{family}' yet").format(
                                    family=family))
    text = with_hf_defaults(text, family)
    layers, tied_default, final_norm = counter(text, family)
    hidden = int_field(text, "hidden_size", family)
    embedding = int_field(text, "vocab_size", family) * hidden
    head = 0 if _tied(text, tied_default) else embedding
    fixed = embedding + head + final_norm + sum(layer.dense for layer in layers)
    return ParamCounts(
        total=fixed + sum(layer.experts_total for layer in layers),
        active=fixed + sum(layer.experts_active for layer in layers),
        embedding=embedding,
        output_head=head,
        excludes=excludes,
    )
