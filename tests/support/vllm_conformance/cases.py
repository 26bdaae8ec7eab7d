"""The vLLM conformance matrix: tiny models carrying real models' KV geometry x the settings that size memory.

Chosen for coverage, not volume: every attention family the CPU build runs, and each setting that changes
the KV plan, with round and odd byte budgets and the refusals. Geometry (KV heads, head sizes, window
pattern, MLA ranks) follows the named model's config.json; hidden sizes and layer counts are shrunk (they
do not size the cache apart from the layer count, which is kept where the grouping depends on it).
"""

from __future__ import annotations

MIB = 1 << 20
# Tensor parallel on the CPU build needs the multiprocess engine and explicit core binding (one NUMA node here)
TP2_ENV = {"VLLM_ENABLE_V1_MULTIPROCESSING": "1", "VLLM_CPU_OMP_THREADS_BIND": "0|1"}
COMMON = {"vocab_size": 1024, "tie_word_embeddings": True}

MODELS = {
    # Llama-3-8B attention: 8 query groups -> here 4 query / 2 KV heads x 64, 2 layers
    "llama-gqa": {"model_type": "llama", "hidden_size": 256, "intermediate_size": 512, "num_hidden_layers": 2,
                  "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 64,
                  "max_position_embeddings": 4096, **COMMON},
    # multi-head attention (Llama-2 / Phi-3 style): KV heads = query heads, 3 layers, head 96
    "llama-mha": {"model_type": "llama", "hidden_size": 384, "intermediate_size": 512, "num_hidden_layers": 3,
                  "num_attention_heads": 4, "num_key_value_heads": 4, "head_dim": 96,
                  "max_position_embeddings": 2048, **COMMON},
    # Qwen3-0.6B attention: 16 query / 8 KV heads x 128 (q/k norm) -> 4 / 2 x 128
    "qwen3": {"model_type": "qwen3", "hidden_size": 256, "intermediate_size": 512, "num_hidden_layers": 2,
              "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 128,
              "max_position_embeddings": 8192, **COMMON},
    # Mistral-7B-v0.1: a 4096-token window on every layer -> 512 here, 8 KV heads x 128 -> 2 x 64
    "mistral-swa": {"model_type": "mistral", "hidden_size": 256, "intermediate_size": 512, "num_hidden_layers": 2,
                    "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 64, "sliding_window": 512,
                    "max_position_embeddings": 8192, **COMMON},
    # Gemma-2: every other layer slides (4096 -> 256 here), 8 KV heads x 256 -> 2 x 64
    "gemma2": {"model_type": "gemma2", "hidden_size": 256, "intermediate_size": 512, "num_hidden_layers": 4,
               "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 64, "sliding_window": 256,
               "query_pre_attn_scalar": 64, "max_position_embeddings": 4096, **COMMON},
    # Gemma-3-1B: 5 of 6 layers slide over 512 tokens, 1 KV head x 256
    "gemma3": {"model_type": "gemma3_text", "hidden_size": 256, "intermediate_size": 512, "num_hidden_layers": 6,
               "num_attention_heads": 4, "num_key_value_heads": 1, "head_dim": 256, "sliding_window": 512,
               "query_pre_attn_scalar": 256, "max_position_embeddings": 32768,
               "layer_types": ["sliding_attention"] * 5 + ["full_attention"], **COMMON},
    # gpt-oss-20b attention: alternating 128-token window / full, 8 KV heads x 64, sinks, MoE (32 experts -> 4)
    "gpt-oss": {"model_type": "gpt_oss", "hidden_size": 256, "intermediate_size": 256, "num_hidden_layers": 4,
                "num_attention_heads": 8, "num_key_value_heads": 2, "head_dim": 64, "sliding_window": 128,
                "num_local_experts": 4, "num_experts_per_tok": 2, "max_position_embeddings": 4096,
                "layer_types": ["sliding_attention", "full_attention"] * 2, **COMMON},
    # DeepSeek-V2-Lite attention: kv_lora_rank 512, rope 64, nope 128, v 128 (16 heads -> 4), dense FFN
    "deepseek-v2-mla": {"model_type": "deepseek_v2", "hidden_size": 256, "intermediate_size": 512,
                        "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 4,
                        "kv_lora_rank": 512, "q_lora_rank": None, "qk_rope_head_dim": 64, "qk_nope_head_dim": 128,
                        "v_head_dim": 128, "first_k_dense_replace": 2, "n_routed_experts": 4,
                        "num_experts_per_tok": 2, "moe_intermediate_size": 128, "n_shared_experts": 1,
                        "max_position_embeddings": 4096, **COMMON},
    # Qwen3-30B-A3B: MoE, 4 KV heads x 128 (128 experts -> 4)
    "qwen3-moe": {"model_type": "qwen3_moe", "hidden_size": 256, "intermediate_size": 512,
                  "moe_intermediate_size": 128, "num_hidden_layers": 2, "num_attention_heads": 4,
                  "num_key_value_heads": 2, "head_dim": 128, "num_experts": 4, "num_experts_per_tok": 2,
                  "max_position_embeddings": 4096, **COMMON},
    # Mixtral-8x7B: MoE, 8 KV heads x 128 -> 2 x 64, no window
    "mixtral": {"model_type": "mixtral", "hidden_size": 256, "intermediate_size": 512, "num_hidden_layers": 2,
                "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 64, "num_local_experts": 4,
                "num_experts_per_tok": 2, "sliding_window": None, "max_position_embeddings": 4096, **COMMON},
}


def case(name: str, model: str, weights: str = "bfloat16", env: dict | None = None, **engine) -> dict:
    return {"name": name, "model_name": model, "model": MODELS[model], "weights_dtype": weights,
            "engine": engine, "env": env or {}}


CASES = [
    # --- plain GQA: budgets, block sizes, lengths, batching, dtypes, refusals ---
    case("llama-gqa-16mib", "llama-gqa", kv_cache_memory_bytes=16 * MIB, max_model_len=2048),
    case("llama-gqa-odd-b32-len1000", "llama-gqa", kv_cache_memory_bytes=10_000_001, max_model_len=1000, block_size=32),
    case("llama-gqa-odd-b16-default-len", "llama-gqa", kv_cache_memory_bytes=7_340_033, block_size=16),
    case("llama-gqa-b48-len777", "llama-gqa", kv_cache_memory_bytes=5_000_000, max_model_len=777, block_size=48),
    case("llama-gqa-seqs7-batched512", "llama-gqa", kv_cache_memory_bytes=12_345_678, max_num_seqs=7,
         max_num_batched_tokens=512),
    case("llama-gqa-no-chunked", "llama-gqa", kv_cache_memory_bytes=9 * MIB, max_model_len=3000,
         enable_chunked_prefill=False),
    case("llama-gqa-no-prefix", "llama-gqa", kv_cache_memory_bytes=9 * MIB + 1, max_model_len=3000,
         enable_prefix_caching=False, max_num_seqs=300, max_num_batched_tokens=8192),
    case("llama-gqa-fp32-weights-auto", "llama-gqa", weights="float32", kv_cache_memory_bytes=20_000_003),
    case("llama-gqa-dtype-float32", "llama-gqa", kv_cache_memory_bytes=20_000_003, max_model_len=999, dtype="float32"),
    case("llama-gqa-fp16", "llama-gqa", kv_cache_memory_bytes=6_000_000, max_model_len=1500, dtype="float16"),
    case("llama-gqa-fp8-kv", "llama-gqa", kv_cache_memory_bytes=8 * MIB, max_model_len=2048, kv_cache_dtype="fp8"),
    case("llama-gqa-too-small", "llama-gqa", kv_cache_memory_bytes=300_000),
    case("llama-gqa-below-one-block", "llama-gqa", kv_cache_memory_bytes=100_000, max_model_len=64),
    case("llama-gqa-autofit", "llama-gqa", kv_cache_memory_bytes=1_234_567, max_model_len=-1),
    case("llama-gqa-len-over-model", "llama-gqa", kv_cache_memory_bytes=16 * MIB, max_model_len=5000),
    case("llama-gqa-kvspace-env", "llama-gqa", env={"VLLM_CPU_KVCACHE_SPACE": "1"}, kv_cache_memory_bytes=4 * MIB,
         max_model_len=4096),
    case("llama-gqa-no-chunked-short", "llama-gqa", kv_cache_memory_bytes=3_333_333, max_model_len=1000,
         enable_chunked_prefill=False),
    case("llama-gqa-one-seq", "llama-gqa", kv_cache_memory_bytes=3_333_333, max_model_len=1000, max_num_seqs=1),
    case("llama-gqa-batched-below-seqs", "llama-gqa", kv_cache_memory_bytes=3_333_333, max_model_len=1000,
         max_num_batched_tokens=64),
    case("llama-gqa-batched-below-user-seqs", "llama-gqa", kv_cache_memory_bytes=3_333_333, max_model_len=1000,
         max_num_batched_tokens=64, max_num_seqs=100),
    case("llama-gqa-no-chunked-batched-below-len", "llama-gqa", kv_cache_memory_bytes=3_333_333, max_model_len=1000,
         max_num_batched_tokens=512, enable_chunked_prefill=False),
    case("llama-gqa-throughput-mode", "llama-gqa", kv_cache_memory_bytes=3_333_333, max_model_len=3000,
         performance_mode="throughput"),
    case("llama-gqa-blocks-override", "llama-gqa", kv_cache_memory_bytes=16 * MIB, max_model_len=2048,
         num_gpu_blocks_override=40),
    case("llama-gqa-blocks-override-too-few", "llama-gqa", kv_cache_memory_bytes=16 * MIB, max_model_len=2048,
         num_gpu_blocks_override=10),
    # tensor parallel on the CPU build: one worker process per rank, each bound to its own core; the engine core
    # then runs in its own process, so these records hold what it printed and sent back, not its groups
    case("llama-gqa-tp2", "llama-gqa", env=TP2_ENV, kv_cache_memory_bytes=16 * MIB, max_model_len=2048,
         tensor_parallel_size=2),
    case("llama-mha-tp3-heads-not-divisible", "llama-mha", kv_cache_memory_bytes=16 * MIB, tensor_parallel_size=3),
    # --- multi-head attention ---
    case("llama-mha-default", "llama-mha", kv_cache_memory_bytes=8 * MIB + 12345),
    case("llama-mha-fp32-b64", "llama-mha", weights="float32", dtype="float32", kv_cache_memory_bytes=25_000_000,
         block_size=64, max_model_len=1111),
    # --- Qwen3 ---
    case("qwen3-default", "qwen3", kv_cache_memory_bytes=32 * MIB - 1),
    case("qwen3-b16-len4000", "qwen3", kv_cache_memory_bytes=11_111_111, block_size=16, max_model_len=4000),
    # --- sliding window everywhere (Mistral-style) ---
    case("mistral-swa-default", "mistral-swa", kv_cache_memory_bytes=16 * MIB, max_model_len=4096),
    case("mistral-swa-batched256", "mistral-swa", kv_cache_memory_bytes=3_000_001, max_model_len=8192,
         max_num_batched_tokens=256),
    case("mistral-swa-no-chunked", "mistral-swa", kv_cache_memory_bytes=16 * MIB, max_model_len=4096,
         enable_chunked_prefill=False),
    case("mistral-swa-no-hybrid-mgr", "mistral-swa", kv_cache_memory_bytes=16 * MIB, max_model_len=4096,
         disable_hybrid_kv_cache_manager=True),
    case("mistral-swa-len-below-window", "mistral-swa", kv_cache_memory_bytes=2_000_000, max_model_len=300,
         block_size=32),
    case("mistral-swa-too-small", "mistral-swa", kv_cache_memory_bytes=500_000, max_model_len=8192),
    # --- interleaved sliding window ---
    case("gemma2-default", "gemma2", kv_cache_memory_bytes=16 * MIB),
    case("gemma2-b16-batched512", "gemma2", kv_cache_memory_bytes=9_999_999, block_size=16,
         max_num_batched_tokens=512, max_model_len=3000),
    case("gemma2-no-hybrid-mgr", "gemma2", kv_cache_memory_bytes=16 * MIB, disable_hybrid_kv_cache_manager=True),
    case("gemma2-too-small", "gemma2", kv_cache_memory_bytes=1_000_000),
    case("gemma2-fp8-e5m2", "gemma2", kv_cache_memory_bytes=4_444_444, kv_cache_dtype="fp8_e5m2", max_model_len=2048),
    case("gemma3-default", "gemma3", kv_cache_memory_bytes=24 * MIB, max_model_len=8192),
    case("gemma3-odd-batched1024", "gemma3", kv_cache_memory_bytes=13_000_017, max_model_len=16384,
         max_num_batched_tokens=1024, max_num_seqs=16),
    case("gemma3-autofit", "gemma3", kv_cache_memory_bytes=7_000_000, max_model_len=-1),
    # one KV head on two ranks: replicated, not split
    case("gemma3-tp2", "gemma3", env=TP2_ENV, kv_cache_memory_bytes=40_000_017, max_model_len=8192,
         tensor_parallel_size=2),
    case("gpt-oss-default", "gpt-oss", kv_cache_memory_bytes=8 * MIB + 3),
    # --- MLA ---
    case("deepseek-v2-mla-default", "deepseek-v2-mla", kv_cache_memory_bytes=16 * MIB),
    case("deepseek-v2-mla-b64-odd", "deepseek-v2-mla", kv_cache_memory_bytes=5_555_555, block_size=64,
         max_model_len=3000),
    case("deepseek-v2-mla-too-small", "deepseek-v2-mla", kv_cache_memory_bytes=1_000_000),
    # CPUs without AMX use the reference CPU_MLA backend (block 16, no chunked prefill / prefix caching);
    # attention_backend=CPU_MLA selects it on an AMX machine too.
    case("deepseek-v2-mla-cpu-mla", "deepseek-v2-mla", kv_cache_memory_bytes=16 * MIB, attention_backend="CPU_MLA"),
    case("deepseek-v2-mla-cpu-mla-b64-len1000", "deepseek-v2-mla", kv_cache_memory_bytes=3_000_001, block_size=64,
         max_model_len=1000, attention_backend="CPU_MLA"),
    # --- MoE ---
    case("qwen3-moe-default", "qwen3-moe", kv_cache_memory_bytes=16 * MIB),
    case("mixtral-odd-b32", "mixtral", kv_cache_memory_bytes=6_666_667, block_size=32, max_model_len=2500),
]
