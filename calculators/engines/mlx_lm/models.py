"""Which cache each mlx-lm model file builds per layer (ml-explore/mlx-lm v0.32.2, read 2026-12-01).

mlx_lm/models/cache.py `make_prompt_cache` defers to the model's `make_cache` when the model file defines
one; otherwise every layer gets a KVCache, or RotatingKVCache(max_kv_size, keep=4) with --max-kv-size. Which
files define it, and what they build, is mlx-lm's choice per architecture (mlx_lm/utils.py MODEL_REMAPPING
first maps mistral -> llama and kimi_k2 -> deepseek_v3):

- no make_cache (so --max-kv-size applies to every layer, and any sliding window in config.json is not
  kept as a window): qwen2.py, qwen3.py, qwen3_moe.py, phi3.py, gemma2.py, mixtral.py, deepseek_v2.py,
  deepseek_v3.py, and the mistral3.py wrapper (its language model is llama.py, but the wrapper has no
  make_cache of its own).
- llama.py (Llama, Mistral): make_cache builds RotatingKVCache(sliding_window) only for layers that
  config.json's layer_types marks "sliding_attention", KVCache otherwise; --max-kv-size is ignored.
- gemma3_text.py (and the gemma3.py wrapper): KVCache every `sliding_window_pattern`-th layer,
  RotatingKVCache(sliding_window) elsewhere. gpt_oss.py: the same from layer_types.
- qwen3_next.py, qwen3_5.py (qwen3_5_moe.py inherits it), jamba.py, nemotron_h.py, granitemoehybrid.py,
  mamba.py: ArraysCache(2) per recurrent layer (conv state, recurrent state), KVCache per attention layer;
  nemotron_h.py builds nothing for its MLP-only blocks. falcon_h1.py: CacheList(ArraysCache(2), KVCache())
  on every layer (each has both mixers).

What a layer stores per token:
- deepseek_v2.py decompresses MLA: per head, keys of qk_nope + qk_rope values (the rope key repeated on every
  head) and values of v_head_dim.
- deepseek_v3.py keeps the latent: kv_latent (kv_lora_rank) as the keys and k_pe (qk_rope_head_dim) as the
  values of a single head. Its attention cannot read a quantized cache (`k_pe.swapaxes` on the packed
  tuple: AttributeError), so --kv-bits fails once the cache is quantized.

Recurrent state (dtypes seen live on CPU, in the source as the arrays' dtypes): the conv state is kept in the
activation dtype; the Gated DeltaNet (gated_delta.py) and Mamba2 (ssm.py) states are float32; Mamba (v1)
states (jamba.py, mamba.py) stay in the activation dtype.
"""

from __future__ import annotations

from dataclasses import dataclass

#: model_type -> mlx_lm/models/<file>.py (MODEL_REMAPPING applied)
MODEL_FILE: dict[str, str] = {"mistral": "llama", "kimi_k2": "deepseek_v3", "gemma3": "gemma3_text",
                              "qwen3_5_text": "qwen3_5", "qwen3_5_moe": "qwen3_5", "qwen3_5_moe_text": "qwen3_5",
                              "falcon_mamba": "mamba"}

DEFAULT_CACHE_FILES = frozenset({"qwen2", "qwen3", "qwen3_moe", "phi3", "gemma2", "mixtral", "deepseek_v2",
                                 "deepseek_v3", "mistral3"})
#: files whose make_cache keeps the model's sliding-window layers as RotatingKVCache(sliding_window)
WINDOWED_FILES = frozenset({"gemma3_text", "gpt_oss"})
#: files whose make_cache gives attention layers a KVCache and recurrent layers an ArraysCache
HYBRID_FILES = frozenset({"qwen3_next", "qwen3_5", "jamba", "nemotron_h", "granitemoehybrid", "mamba"})
#: files whose make_cache puts an ArraysCache and a KVCache on every layer
CACHE_LIST_FILES = frozenset({"falcon_h1"})
#: files that keep the recurrent state in float32 whatever the activation dtype (gated_delta.py / ssm.py)
FLOAT32_STATE_FILES = frozenset({"qwen3_next", "qwen3_5", "nemotron_h", "granitemoehybrid", "falcon_h1"})
#: MLA stored decompressed, per head (keys qk_nope + qk_rope, values v_head_dim)
EXPANDED_MLA_FILES = frozenset({"deepseek_v2"})
#: attention over the cache fails once it is quantized
NO_QUANTIZED_ATTENTION_FILES = frozenset({"deepseek_v3"})
#: every file whose make_cache servewise has read (the others are assumed to have none)
OWN_CACHE_FILES = frozenset({"llama"}) | WINDOWED_FILES | HYBRID_FILES | CACHE_LIST_FILES
KNOWN_FILES = OWN_CACHE_FILES | DEFAULT_CACHE_FILES


@dataclass(frozen=True)
class ModelFile:
    """The mlx-lm model file that runs a model, and what servewise knows of its cache."""

    name: str  # mlx_lm/models/<name>.py

    @property
    def read(self) -> bool:
        """servewise has read this file's cache code."""
        return self.name in KNOWN_FILES

    @property
    def has_make_cache(self) -> bool:
        """The model builds its own caches, so make_prompt_cache ignores --max-kv-size."""
        return self.name in OWN_CACHE_FILES

    @property
    def keeps_windows(self) -> bool:
        return self.name in WINDOWED_FILES

    @property
    def cache_list(self) -> bool:
        return self.name in CACHE_LIST_FILES

    @property
    def float32_state(self) -> bool:
        return self.name in FLOAT32_STATE_FILES

    @property
    def expanded_mla(self) -> bool:
        return self.name in EXPANDED_MLA_FILES

    @property
    def reads_quantized_cache(self) -> bool:
        return self.name not in NO_QUANTIZED_ATTENTION_FILES


def model_file(family: str, wrapper_model_type: str | None = None) -> ModelFile:
    """The mlx-lm model file for a config.json's model_type (a multimodal wrapper's own file when it has one)."""
    model_type = wrapper_model_type if wrapper_model_type == "mistral3" else family
    return ModelFile(MODEL_FILE.get(model_type, model_type))
