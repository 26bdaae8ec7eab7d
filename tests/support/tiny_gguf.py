"""Tiny random-weight GGUF files that carry the attention geometry of real models, for llama.cpp to load.

Hidden and feed-forward sizes are shrunk so each file loads in milliseconds; what sizes llama.cpp's
caches (layers, KV heads, key/value length, sliding window, recurrent state sizes) is kept.
Shapes are written in ggml order (ne0 first), hence the reversed numpy shapes.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import gguf
import numpy as np

from calculators.model.architecture import LayerGeometry, LayerKind, ModelArchitecture

N_VOCAB = 32  # the "none" tokenizer only needs a vocabulary size


@dataclass(frozen=True)
class TinyAttentionModel:
    """A decoder whose KV geometry mirrors a real model; `swa_pattern` 0 means no sliding layers."""

    name: str
    arch: str  # GGUF general.architecture: llama, gemma2, gemma3
    n_layer: int
    n_head: int
    n_head_kv: int
    head_dim: int
    n_ctx_train: int
    n_embd: int = 64
    n_ff: int = 64
    sliding_window: int = 0
    swa_pattern: int = 0  # llama.cpp: layer il slides when il % pattern < pattern - 1
    config_slides_everywhere: bool = False  # the HF config gives every layer the window (Mistral-7B-v0.1)

    def is_sliding(self, il: int) -> bool:
        """Whether the model's config makes layer `il` sliding-window (llama-hparams.cpp set_swa_pattern)."""
        if self.config_slides_everywhere:
            return True
        return bool(self.swa_pattern) and il % self.swa_pattern < self.swa_pattern - 1

    def architecture(self) -> ModelArchitecture:
        """The servewise architecture this file describes."""
        layers = tuple(
            LayerGeometry(
                kind=LayerKind.SLIDING if self.is_sliding(il) else LayerKind.FULL,
                n_kv_heads=self.n_head_kv,
                head_dim_k=self.head_dim,
                head_dim_v=self.head_dim,
                sliding_window_tokens=self.sliding_window if self.is_sliding(il) else None,
            )
            for il in range(self.n_layer)
        )
        return _architecture(self, self.arch, layers, self.n_head)

    def write(self, path: Path) -> Path:
        """Write the GGUF file; returns its path."""
        w = _start_file(path, self.arch, self)
        w.add_feed_forward_length(self.n_ff)
        w.add_head_count(self.n_head)
        w.add_head_count_kv(self.n_head_kv)
        w.add_key_length(self.head_dim)
        w.add_value_length(self.head_dim)
        w.add_rope_dimension_count(self.head_dim)
        w.add_layer_norm_rms_eps(1e-6)
        if self.sliding_window:
            w.add_sliding_window(self.sliding_window)
        tensor = _tensor_adder(w)
        tensor("token_embd.weight", self.n_embd, N_VOCAB)
        tensor("output_norm.weight", self.n_embd)
        if self.arch == "llama":
            tensor("output.weight", self.n_embd, N_VOCAB)
        q_width, kv_width = self.head_dim * self.n_head, self.head_dim * self.n_head_kv
        for i in range(self.n_layer):
            blk = f"blk.{i}."
            tensor(blk + "attn_norm.weight", self.n_embd)
            tensor(blk + "attn_q.weight", self.n_embd, q_width)
            tensor(blk + "attn_k.weight", self.n_embd, kv_width)
            tensor(blk + "attn_v.weight", self.n_embd, kv_width)
            tensor(blk + "attn_output.weight", q_width, self.n_embd)
            tensor(blk + "ffn_norm.weight", self.n_embd)
            tensor(blk + "ffn_gate.weight", self.n_embd, self.n_ff)
            tensor(blk + "ffn_up.weight", self.n_embd, self.n_ff)
            tensor(blk + "ffn_down.weight", self.n_ff, self.n_embd)
            if self.arch in ("gemma2", "gemma3"):
                tensor(blk + "post_attention_norm.weight", self.n_embd)
                tensor(blk + "post_ffw_norm.weight", self.n_embd)
            if self.arch == "gemma3":
                tensor(blk + "attn_q_norm.weight", self.head_dim)
                tensor(blk + "attn_k_norm.weight", self.head_dim)
        _finish(w)
        return path


@dataclass(frozen=True)
class TinyMambaModel:
    """A Mamba-1 stack: no KV, a conv state (R) and an SSM state (S) per sequence and layer."""

    name: str
    n_layer: int
    n_embd: int
    d_state: int
    d_conv: int
    dt_rank: int
    n_ctx_train: int = 2048

    @property
    def d_inner(self) -> int:
        """llama.cpp only supports an expansion factor of 2 (models/mamba.cpp)."""
        return 2 * self.n_embd

    def architecture(self) -> ModelArchitecture:
        """Recurrent layers with llama.cpp's state sizes: R = (d_conv - 1) x d_inner, S = d_state x d_inner."""
        layer = _mamba_layer(self.d_inner, self.d_state, self.d_conv)
        return _architecture(self, "mamba", (layer,) * self.n_layer, 0)

    def write(self, path: Path) -> Path:
        """Write the GGUF file; returns its path."""
        w = _start_file(path, "mamba", self)
        _add_ssm_keys(w, self.d_conv, self.d_inner, self.d_state, self.dt_rank)
        w.add_layer_norm_rms_eps(1e-5)
        w.add_feed_forward_length(0)
        w.add_head_count(0)
        w.add_head_count_kv(0)
        tensor = _tensor_adder(w)
        tensor("token_embd.weight", self.n_embd, N_VOCAB)
        tensor("output_norm.weight", self.n_embd)
        for i in range(self.n_layer):
            tensor(f"blk.{i}.attn_norm.weight", self.n_embd)
            _add_mamba_tensors(tensor, f"blk.{i}.", self.n_embd, self.d_conv, self.d_state, self.dt_rank, norms=False)
        _finish(w)
        return path


def _mamba_layer(d_inner: int, d_state: int, d_conv: int) -> LayerGeometry:
    """A Mamba-1 layer with llama.cpp's state sizes: R = (d_conv - 1) x d_inner, S = d_state x d_inner."""
    return LayerGeometry(
        kind=LayerKind.RECURRENT,
        recurrent_conv_elements=(d_conv - 1) * d_inner,
        recurrent_state_elements=d_state * d_inner,
    )


def _add_ssm_keys(w: gguf.GGUFWriter, d_conv: int, d_inner: int, d_state: int, dt_rank: int) -> None:
    w.add_ssm_conv_kernel(d_conv)
    w.add_ssm_inner_size(d_inner)
    w.add_ssm_state_size(d_state)
    w.add_ssm_time_step_rank(dt_rank)


def _add_mamba_tensors(tensor, blk: str, n_embd: int, d_conv: int, d_state: int, dt_rank: int, norms: bool) -> None:
    """One Mamba mixer (models/mamba.cpp); Jamba adds RMS norms on dt, B and C (models/jamba.cpp)."""
    d_inner = 2 * n_embd
    tensor(blk + "ssm_in.weight", n_embd, 2 * d_inner)
    tensor(blk + "ssm_conv1d.weight", d_conv, d_inner)
    tensor(blk + "ssm_conv1d.bias", d_inner)
    tensor(blk + "ssm_x.weight", d_inner, dt_rank + 2 * d_state)
    tensor(blk + "ssm_dt.weight", dt_rank, d_inner)
    tensor(blk + "ssm_dt.bias", d_inner)
    tensor(blk + "ssm_a", d_state, d_inner)
    tensor(blk + "ssm_d", d_inner)
    tensor(blk + "ssm_out.weight", d_inner, n_embd)
    if norms:
        tensor(blk + "ssm_dt_norm.weight", dt_rank)
        tensor(blk + "ssm_b_norm.weight", d_state)
        tensor(blk + "ssm_c_norm.weight", d_state)


def _architecture(spec, family: str, layers: tuple[LayerGeometry, ...], n_heads: int) -> ModelArchitecture:
    """The servewise architecture of a tiny model spec (name, n_embd, n_ctx_train taken from it)."""
    return ModelArchitecture(
        name=spec.name,
        family=family,
        layers=layers,
        n_heads=n_heads,
        hidden_size=spec.n_embd,
        vocab_size=N_VOCAB,
        max_context_tokens=spec.n_ctx_train,
        source="tests/support/tiny_gguf.py",
    )


def _start_file(path: Path, arch: str, spec) -> gguf.GGUFWriter:
    """A writer with the keys every tiny model has: trained context, width, depth, vocabulary."""
    w = gguf.GGUFWriter(str(path), arch)
    w.add_context_length(spec.n_ctx_train)
    w.add_embedding_length(spec.n_embd)
    w.add_block_count(spec.n_layer)
    _add_vocab(w)
    return w


def _add_vocab(w: gguf.GGUFWriter) -> None:
    # llama-vocab.cpp: tokenizer model "none" needs nothing but a vocabulary size
    w.add_tokenizer_model("none")
    w.add_vocab_size(N_VOCAB)


def _tensor_adder(w: gguf.GGUFWriter):
    rng = np.random.default_rng(0)

    def add(name: str, *ggml_shape: int) -> None:
        w.add_tensor(name, rng.standard_normal(tuple(reversed(ggml_shape))).astype(np.float32))

    return add


def _finish(w: gguf.GGUFWriter) -> None:
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


@dataclass(frozen=True)
class TinyJambaModel:
    """A Jamba-style hybrid: attention where `attention_layers` says, Mamba layers elsewhere.

    llama.cpp marks a layer recurrent when its KV head count is 0 (models/jamba.cpp), and Jamba's
    attention heads are hidden / heads wide.
    """

    name: str
    n_layer: int
    attention_layers: tuple[int, ...]
    n_head: int
    n_head_kv: int
    head_dim: int
    d_state: int
    d_conv: int
    dt_rank: int
    n_ff: int = 64
    n_ctx_train: int = 4096

    @property
    def n_embd(self) -> int:
        """Jamba's attention uses hidden = heads x head size."""
        return self.n_head * self.head_dim

    @property
    def d_inner(self) -> int:
        """Expansion factor 2, the only one llama.cpp supports."""
        return 2 * self.n_embd

    def architecture(self) -> ModelArchitecture:
        """Full-attention and recurrent layers in the file's order."""
        attention = LayerGeometry(
            kind=LayerKind.FULL, n_kv_heads=self.n_head_kv, head_dim_k=self.head_dim, head_dim_v=self.head_dim
        )
        recurrent = _mamba_layer(self.d_inner, self.d_state, self.d_conv)
        layers = tuple(attention if il in self.attention_layers else recurrent for il in range(self.n_layer))
        return _architecture(self, "jamba", layers, self.n_head)

    def write(self, path: Path) -> Path:
        """Write the GGUF file; returns its path."""
        w = _start_file(path, "jamba", self)
        w.add_feed_forward_length(self.n_ff)
        w.add_head_count(self.n_head)
        w.add_head_count_kv([self.n_head_kv if il in self.attention_layers else 0 for il in range(self.n_layer)])
        _add_ssm_keys(w, self.d_conv, self.d_inner, self.d_state, self.dt_rank)
        w.add_layer_norm_rms_eps(1e-6)
        tensor = _tensor_adder(w)
        n_embd = self.n_embd
        tensor("token_embd.weight", n_embd, N_VOCAB)
        tensor("output_norm.weight", n_embd)
        for i in range(self.n_layer):
            blk = f"blk.{i}."
            tensor(blk + "attn_norm.weight", n_embd)
            if i in self.attention_layers:
                kv_width = self.n_head_kv * self.head_dim
                tensor(blk + "attn_q.weight", n_embd, n_embd)
                tensor(blk + "attn_k.weight", n_embd, kv_width)
                tensor(blk + "attn_v.weight", n_embd, kv_width)
                tensor(blk + "attn_output.weight", n_embd, n_embd)
            else:
                _add_mamba_tensors(tensor, blk, n_embd, self.d_conv, self.d_state, self.dt_rank, norms=True)
            tensor(blk + "ffn_norm.weight", n_embd)
            tensor(blk + "ffn_gate.weight", n_embd, self.n_ff)
            tensor(blk + "ffn_up.weight", n_embd, self.n_ff)
            tensor(blk + "ffn_down.weight", self.n_ff, n_embd)
        _finish(w)
        return path


@dataclass(frozen=True)
class TinyMlaModel:
    """A DeepSeek-V2-style decoder with multi-head latent attention and dense feed-forward layers only.

    llama.cpp caches, per token and layer, one row of kv_lora_rank + rope width (stored as a single
    "KV head" of key_length = kv_lora_rank + n_rot) and no V row.
    """

    name: str
    n_layer: int
    n_head: int
    kv_lora_rank: int
    qk_rope_head_dim: int
    qk_nope_head_dim: int
    v_head_dim: int
    q_lora_rank: int = 32
    n_embd: int = 64
    n_ff: int = 64
    n_ctx_train: int = 4096

    def architecture(self) -> ModelArchitecture:
        """MLA layers carrying the latent and the rope key."""
        layer = LayerGeometry(
            kind=LayerKind.MLA, kv_lora_rank=self.kv_lora_rank, qk_rope_head_dim=self.qk_rope_head_dim
        )
        return _architecture(self, "deepseek2", (layer,) * self.n_layer, self.n_head)

    def write(self, path: Path) -> Path:
        """Write the GGUF file in the split k_b / v_b layout current converters produce; returns its path."""
        w = _start_file(path, "deepseek2", self)
        k_mla, rope = self.qk_nope_head_dim + self.qk_rope_head_dim, self.qk_rope_head_dim
        w.add_feed_forward_length(self.n_ff)
        w.add_head_count(self.n_head)
        w.add_head_count_kv(1)
        w.add_key_length(self.kv_lora_rank + rope)
        w.add_value_length(self.kv_lora_rank)
        w.add_key_length_mla(k_mla)
        w.add_value_length_mla(self.v_head_dim)
        w.add_rope_dimension_count(rope)
        w.add_q_lora_rank(self.q_lora_rank)
        w.add_kv_lora_rank(self.kv_lora_rank)
        w.add_leading_dense_block_count(self.n_layer)
        w.add_expert_feed_forward_length(self.n_ff)
        w.add_expert_shared_count(0)
        w.add_layer_norm_rms_eps(1e-6)
        tensor = _tensor_adder(w)
        n_embd = self.n_embd
        tensor("token_embd.weight", n_embd, N_VOCAB)
        tensor("output_norm.weight", n_embd)
        tensor("output.weight", n_embd, N_VOCAB)
        for i in range(self.n_layer):
            blk = f"blk.{i}."
            tensor(blk + "attn_norm.weight", n_embd)
            tensor(blk + "attn_q_a_norm.weight", self.q_lora_rank)
            tensor(blk + "attn_kv_a_norm.weight", self.kv_lora_rank)
            tensor(blk + "attn_q_a.weight", n_embd, self.q_lora_rank)
            tensor(blk + "attn_q_b.weight", self.q_lora_rank, self.n_head * k_mla)
            tensor(blk + "attn_kv_a_mqa.weight", n_embd, self.kv_lora_rank + rope)
            tensor(blk + "attn_k_b.weight", self.qk_nope_head_dim, self.kv_lora_rank, self.n_head)
            tensor(blk + "attn_v_b.weight", self.kv_lora_rank, self.v_head_dim, self.n_head)
            tensor(blk + "attn_output.weight", self.n_head * self.v_head_dim, n_embd)
            tensor(blk + "ffn_norm.weight", n_embd)
            tensor(blk + "ffn_gate.weight", n_embd, self.n_ff)
            tensor(blk + "ffn_up.weight", n_embd, self.n_ff)
            tensor(blk + "ffn_down.weight", self.n_ff, n_embd)
        _finish(w)
        return path


@dataclass(frozen=True)
class TinyOpenElmModel:
    """An OpenELM-style decoder whose query and KV head counts change from layer to layer.

    Its V rows differ in width, so without flash attention llama.cpp pads every V row to the widest
    (src/llama-kv-cache.cpp [TAG_V_CACHE_VARIABLE]).
    """

    name: str
    n_heads: tuple[int, ...]
    n_kv_heads: tuple[int, ...]
    head_dim: int
    n_embd: int = 64
    n_ff: int = 64
    n_ctx_train: int = 2048

    @property
    def n_layer(self) -> int:
        """One entry of `n_heads` per layer."""
        return len(self.n_heads)

    def architecture(self) -> ModelArchitecture:
        """Full-attention layers with per-layer KV head counts."""
        layers = tuple(
            LayerGeometry(kind=LayerKind.FULL, n_kv_heads=kv, head_dim_k=self.head_dim, head_dim_v=self.head_dim)
            for kv in self.n_kv_heads
        )
        return _architecture(self, "openelm", layers, max(self.n_heads))

    def write(self, path: Path) -> Path:
        """Write the GGUF file; returns its path."""
        w = _start_file(path, "openelm", self)
        w.add_feed_forward_length([self.n_ff] * self.n_layer)
        w.add_head_count(list(self.n_heads))
        w.add_head_count_kv(list(self.n_kv_heads))
        w.add_key_length(self.head_dim)
        w.add_value_length(self.head_dim)
        w.add_rope_dimension_count(self.head_dim)
        w.add_layer_norm_rms_eps(1e-6)
        tensor = _tensor_adder(w)
        tensor("token_embd.weight", self.n_embd, N_VOCAB)
        tensor("output_norm.weight", self.n_embd)
        for i, (n_head, n_kv) in enumerate(zip(self.n_heads, self.n_kv_heads, strict=True)):
            blk = f"blk.{i}."
            tensor(blk + "attn_norm.weight", self.n_embd)
            tensor(blk + "attn_qkv.weight", self.n_embd, (n_head + 2 * n_kv) * self.head_dim)
            tensor(blk + "attn_q_norm.weight", self.head_dim)
            tensor(blk + "attn_k_norm.weight", self.head_dim)
            tensor(blk + "attn_output.weight", n_head * self.head_dim, self.n_embd)
            tensor(blk + "ffn_norm.weight", self.n_embd)
            tensor(blk + "ffn_gate.weight", self.n_embd, self.n_ff)
            tensor(blk + "ffn_up.weight", self.n_embd, self.n_ff)
            tensor(blk + "ffn_down.weight", self.n_ff, self.n_embd)
        _finish(w)
        return path
