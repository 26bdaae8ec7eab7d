"""Tiny config.json dicts, one per mlx-lm model file servewise's catalog relies on (plus the hybrids mlx-lm runs).

Shapes are shrunk; what sizes a cache (KV heads, head sizes, windows, layer pattern, latent and state widths)
keeps the structure of the real family. Head sizes are multiples of 64 so --kv-bits works with group 64.
"""

COMMON = {"vocab_size": 512, "rms_norm_eps": 1e-6, "tie_word_embeddings": False, "max_position_embeddings": 4096,
          "rope_theta": 10000.0}
YARN = {"type": "yarn", "factor": 4.0, "original_max_position_embeddings": 1024, "mscale": 1.0,
        "mscale_all_dim": 1.0, "beta_fast": 32, "beta_slow": 1}
ATTN = {"hidden_size": 256, "intermediate_size": 256, "num_attention_heads": 4, "num_key_value_heads": 2,
        "head_dim": 64}

MODELS: dict[str, dict] = {
    # Llama 3 style: 128-wide heads (the other files use 64, the smallest the default --kv-group-size allows)
    "llama": {**COMMON, **ATTN, "model_type": "llama", "num_hidden_layers": 3, "num_attention_heads": 2,
              "num_key_value_heads": 1, "head_dim": 128},
    # Mistral-7B-v0.1 style: one window on every layer (config.json sliding_window)
    "mistral": {**COMMON, **ATTN, "model_type": "mistral", "num_hidden_layers": 3, "sliding_window": 384},
    "qwen2": {**COMMON, **ATTN, "model_type": "qwen2", "num_hidden_layers": 3, "use_sliding_window": False,
              "sliding_window": 4096},
    "qwen3": {**COMMON, **ATTN, "model_type": "qwen3", "num_hidden_layers": 3},
    "phi3": {**COMMON, **ATTN, "model_type": "phi3", "num_hidden_layers": 3, "sliding_window": 383,
             "num_key_value_heads": 4},
    # Gemma 2: even layers slide (window 384), odd ones global
    "gemma2": {**COMMON, **ATTN, "model_type": "gemma2", "num_hidden_layers": 4, "sliding_window": 384,
               "query_pre_attn_scalar": 64},
    # Gemma 3: five sliding layers (window 384) then one global
    "gemma3_text": {**COMMON, **ATTN, "model_type": "gemma3_text", "num_hidden_layers": 6, "sliding_window": 384,
                    "sliding_window_pattern": 6, "query_pre_attn_scalar": 64, "rope_local_base_freq": 10000.0},
    # gpt-oss: alternating sliding (window 128) and full layers, MoE everywhere
    "gpt_oss": {**COMMON, **ATTN, "model_type": "gpt_oss", "num_hidden_layers": 4, "sliding_window": 128,
                "layer_types": ["sliding_attention", "full_attention"] * 2, "num_local_experts": 4,
                "num_experts_per_tok": 2, "intermediate_size": 128},
    "mixtral": {**COMMON, **ATTN, "model_type": "mixtral", "num_hidden_layers": 2, "num_local_experts": 4,
                "num_experts_per_tok": 2, "intermediate_size": 128},
    "qwen3_moe": {**COMMON, **ATTN, "model_type": "qwen3_moe", "num_hidden_layers": 2, "num_experts": 4,
                  "num_experts_per_tok": 2, "decoder_sparse_step": 1, "mlp_only_layers": [],
                  "moe_intermediate_size": 128, "norm_topk_prob": True},
    # DeepSeek-V2 (Lite) style MLA: latent 128, rope key 64, nope 64, v head 64
    "deepseek_v2": {**COMMON, "model_type": "deepseek_v2", "hidden_size": 256, "intermediate_size": 256,
                    "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 4,
                    "kv_lora_rank": 128, "q_lora_rank": None, "qk_rope_head_dim": 64, "qk_nope_head_dim": 64,
                    "v_head_dim": 64, "moe_intermediate_size": 128, "n_routed_experts": 4, "n_shared_experts": 1,
                    "num_experts_per_tok": 2, "first_k_dense_replace": 1, "moe_layer_freq": 1,
                    "topk_method": "greedy", "n_group": 1, "topk_group": 1, "rope_scaling": YARN},
    "deepseek_v3": {**COMMON, "model_type": "deepseek_v3", "hidden_size": 256, "intermediate_size": 256,
                    "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 4,
                    "kv_lora_rank": 128, "q_lora_rank": 128, "qk_rope_head_dim": 64, "qk_nope_head_dim": 64,
                    "v_head_dim": 64, "moe_intermediate_size": 128, "n_routed_experts": 4, "n_shared_experts": 1,
                    "num_experts_per_tok": 2, "first_k_dense_replace": 1, "moe_layer_freq": 1,
                    "n_group": 1, "topk_group": 1, "routed_scaling_factor": 1.0, "rope_scaling": YARN},
    # Qwen3-Next: Gated DeltaNet layers, full attention every 2nd layer here (every 4th in the real model)
    "qwen3_next": {**COMMON, **ATTN, "model_type": "qwen3_next", "num_hidden_layers": 4,
                   "full_attention_interval": 2, "linear_num_value_heads": 4, "linear_num_key_heads": 2,
                   "linear_key_head_dim": 32, "linear_value_head_dim": 32, "linear_conv_kernel_dim": 4,
                   "num_experts": 4, "num_experts_per_tok": 2, "decoder_sparse_step": 1, "mlp_only_layers": [],
                   "moe_intermediate_size": 128, "shared_expert_intermediate_size": 128,
                   "partial_rotary_factor": 0.25, "norm_topk_prob": True},
    # Jamba: attention on layer 1 of every 2 (every 8th, offset 4, in the real model), Mamba elsewhere
    "jamba": {**COMMON, "model_type": "jamba", "hidden_size": 256, "intermediate_size": 256,
              "num_hidden_layers": 4, "num_attention_heads": 4, "num_key_value_heads": 2, "attn_layer_period": 2,
              "attn_layer_offset": 1, "expert_layer_period": 2, "expert_layer_offset": 1, "mamba_d_conv": 4,
              "mamba_d_state": 16, "mamba_expand": 2, "mamba_dt_rank": 16, "num_experts": 4,
              "num_experts_per_tok": 2},
    # Mistral-Small-3.x: the mistral3 wrapper around a text_config of model_type mistral (llama.py in mlx-lm)
    "mistral3": {"model_type": "mistral3", "architectures": ["Mistral3ForConditionalGeneration"],
                 "text_config": {**COMMON, **ATTN, "model_type": "mistral", "num_hidden_layers": 3,
                                 "sliding_window": 384}},
    # Gemma 3 multimodal wrapper, text_config as terse as the published ones (heads from HF/mlx-lm defaults 8/4)
    "gemma3": {"model_type": "gemma3", "architectures": ["Gemma3ForConditionalGeneration"], "vocab_size": 512,
               "text_config": {"model_type": "gemma3_text", "hidden_size": 256, "intermediate_size": 256,
                               "num_hidden_layers": 6, "sliding_window": 384, "head_dim": 64,
                               "query_pre_attn_scalar": 64, "max_position_embeddings": 4096}},
    # Dense (no experts) hybrids, so they run in bfloat16: the state dtypes then show
    "qwen3_next_dense": {**COMMON, **ATTN, "model_type": "qwen3_next", "num_hidden_layers": 4,
                         "full_attention_interval": 2, "linear_num_value_heads": 4, "linear_num_key_heads": 2,
                         "linear_key_head_dim": 32, "linear_value_head_dim": 32, "linear_conv_kernel_dim": 4,
                         "num_experts": 0, "num_experts_per_tok": 0, "decoder_sparse_step": 1,
                         "mlp_only_layers": [0, 1, 2, 3], "moe_intermediate_size": 0,
                         "shared_expert_intermediate_size": 0, "partial_rotary_factor": 0.25},
    "jamba_dense": {**COMMON, "model_type": "jamba", "hidden_size": 256, "intermediate_size": 256,
                    "num_hidden_layers": 4, "num_attention_heads": 4, "num_key_value_heads": 2,
                    "attn_layer_period": 2, "attn_layer_offset": 1, "expert_layer_period": 2,
                    "expert_layer_offset": 1, "mamba_d_conv": 4, "mamba_d_state": 16, "mamba_expand": 2,
                    "mamba_dt_rank": 16, "num_experts": 1, "num_experts_per_tok": 1},
    # Qwen3.5 (text): Gated DeltaNet + full attention every 2nd layer
    "qwen3_5": {"model_type": "qwen3_5", "architectures": ["Qwen3_5ForConditionalGeneration"],
                "tie_word_embeddings": False,
                "text_config": {**COMMON, **ATTN, "model_type": "qwen3_5_text", "num_hidden_layers": 4,
                                "full_attention_interval": 2, "linear_num_value_heads": 4,
                                "linear_num_key_heads": 2, "linear_key_head_dim": 32, "linear_value_head_dim": 32,
                                "linear_conv_kernel_dim": 4}},
    # Nemotron-H: Mamba2 (M), attention (*), MLP-only (-) blocks
    "nemotron_h": {**COMMON, "model_type": "nemotron_h", "hidden_size": 256, "intermediate_size": 256,
                   "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 64, "attention_bias": False,
                   "mamba_num_heads": 8, "mamba_head_dim": 32, "mamba_proj_bias": False, "ssm_state_size": 16,
                   "conv_kernel": 4, "n_groups": 2, "mlp_bias": False, "layer_norm_epsilon": 1e-5,
                   "use_bias": False, "use_conv_bias": True, "hybrid_override_pattern": "M-*-M-",
                   "num_hidden_layers": 6},
    # Granite 4.0-H: Mamba2 and attention layers (dense MLP here)
    "granitemoehybrid": {**COMMON, "model_type": "granitemoehybrid", "hidden_size": 256, "intermediate_size": 256,
                         "num_hidden_layers": 4, "num_attention_heads": 4, "num_key_value_heads": 2,
                         "attention_bias": False, "embedding_multiplier": 12.0, "attention_multiplier": 0.125,
                         "logits_scaling": 1.0, "residual_multiplier": 0.22,
                         "layer_types": ["mamba", "attention", "mamba", "attention"], "mamba_n_heads": 8,
                         "mamba_d_head": 32, "mamba_proj_bias": False, "mamba_d_state": 16, "mamba_d_conv": 4,
                         "mamba_n_groups": 1, "mamba_conv_bias": True, "shared_intermediate_size": 256,
                         "mamba_expand": 1,
                         "position_embedding_type": "rope"},
    # Falcon-H1: every layer has a Mamba2 mixer and an attention block side by side
    "falcon_h1": {**COMMON, "model_type": "falcon_h1", "hidden_size": 256, "intermediate_size": 256,
                  "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 64,
                  "mamba_d_conv": 4, "mamba_d_head": 32, "mamba_d_ssm": 256, "mamba_d_state": 16,
                  "mamba_expand": 1, "mamba_n_groups": 1, "mamba_n_heads": 8},
    # Mamba (v1), every layer a state-space layer
    "mamba": {"model_type": "mamba", "vocab_size": 512, "hidden_size": 256, "intermediate_size": 512,
              "state_size": 16, "num_hidden_layers": 2, "conv_kernel": 4, "use_bias": False,
              "use_conv_bias": True, "time_step_rank": 16, "tie_word_embeddings": True, "expand": 2,
              "layer_norm_epsilon": 1e-5},
}

# MLX's CPU GatherMM (mixture-of-experts) only supports float32; the rest run in bfloat16 like published weights.
FLOAT32 = {"gpt_oss", "mixtral", "qwen3_moe", "deepseek_v2", "deepseek_v3", "qwen3_next", "jamba"}


def dtype_of(name: str) -> str:
    """The weights' (and so the activations' and cache's) dtype the tiny model is written in."""
    return "float32" if name in FLOAT32 else "bfloat16"
