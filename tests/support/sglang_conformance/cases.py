"""The SGLang conformance matrix: tiny models (the vLLM suite's geometries) x the settings that size SGLang's pools.

Chosen for coverage, not volume: plain GQA (Llama, Qwen3), MoE, MLA, sliding window, each memory setting
once or twice (--mem-fraction-static, --max-running-requests, --max-total-tokens, --context-length,
--page-size, --kv-cache-dtype, --chunked-prefill-size). Every case runs on the CPU device with the
torch-native attention backend, the one path that starts on these machines (docs/conformance.md, "SGLang").
"""

from __future__ import annotations

from tests.support.vllm_conformance.cases import MODELS

BASE_FLAGS = ("--device", "cpu", "--attention-backend", "torch_native")


# SGLang's CPU rope for DeepSeek (layers/rotary_embedding/factory.py get_rope_cpu) asserts a rope_scaling:
# DeepSeek-V2-Lite's own YaRN block (factor 40 over 4096 positions)
# and its MoE layers read moe_layer_freq, which transformers 5's DeepseekV2Config no longer writes
DEEPSEEK_YARN = {**MODELS["deepseek-v2-mla"], "max_position_embeddings": 163840, "moe_layer_freq": 1,
                 "rope_scaling": {"type": "yarn", "factor": 40, "original_max_position_embeddings": 4096,
                                  "beta_fast": 32, "beta_slow": 1, "mscale": 0.707, "mscale_all_dim": 0.707}}


def case(name: str, model: str, *flags: str, weights: str = "bfloat16", config: dict | None = None) -> dict:
    return {"name": name, "model_name": model, "model": config or MODELS[model], "weights_dtype": weights,
            "flags": list(flags)}


CASES = [
    case("llama-gqa-frac0.05", "llama-gqa", "--mem-fraction-static", "0.05"),
    case("llama-gqa-frac0.03-ctx1000-mrr17-page16", "llama-gqa", "--mem-fraction-static", "0.03",
         "--context-length", "1000", "--max-running-requests", "17", "--page-size", "16"),
    case("llama-gqa-mtt12345-page16-fp8-chunk1000", "llama-gqa", "--mem-fraction-static", "0.05",
         "--max-total-tokens", "12345", "--page-size", "16", "--kv-cache-dtype", "fp8_e4m3",
         "--chunked-prefill-size", "1000"),
    case("qwen3-frac0.04-fp8e5m2-ctx2048", "qwen3", "--mem-fraction-static", "0.04",
         "--kv-cache-dtype", "fp8_e5m2", "--context-length", "2048"),
    case("qwen3-moe-mtt50001", "qwen3-moe", "--mem-fraction-static", "0.05", "--max-total-tokens", "50001"),
    case("deepseek-v2-mla-frac0.03", "deepseek-v2-mla", "--mem-fraction-static", "0.03"),
    case("deepseek-v2-mla-yarn-frac0.03-ctx4096", "deepseek-v2-mla", "--mem-fraction-static", "0.03",
         "--context-length", "4096", config=DEEPSEEK_YARN),
    case("mistral-swa-frac0.03", "mistral-swa", "--mem-fraction-static", "0.03"),
    case("gemma3-frac0.03", "gemma3", "--mem-fraction-static", "0.03"),
    case("llama-gqa-mrr5000-ctx128", "llama-gqa", "--mem-fraction-static", "0.03", "--context-length", "128",
         "--max-running-requests", "5000"),
    # default --mem-fraction-static: server_args prints the automatic fraction; the token cap keeps the pool small
    case("llama-gqa-auto-fraction-mtt10000", "llama-gqa", "--max-total-tokens", "10000"),
    case("llama-gqa-mtt12345-page16-chunk1024", "llama-gqa", "--mem-fraction-static", "0.05",
         "--max-total-tokens", "12345", "--page-size", "16", "--chunked-prefill-size", "1024"),
    # fp8_e4m3 on the CPU device needs the intel_amx backend (which needs sgl-kernel's CPU build)
    case("llama-gqa-fp8e4m3-torch-native", "llama-gqa", "--mem-fraction-static", "0.05",
         "--max-total-tokens", "12345", "--kv-cache-dtype", "fp8_e4m3"),
    case("llama-gqa-frac-too-small", "llama-gqa", "--mem-fraction-static", "0.0001"),
    case("llama-mha-mtt3000-chunk-off", "llama-mha", "--mem-fraction-static", "0.05",
         "--max-total-tokens", "3000", "--chunked-prefill-size", "-1"),
]
