"""The MLX LM conformance cases: chosen for coverage of what changes mlx-lm's cache, not volume.

Each case is one mlx_lm.generate run (or, with `sequences`, one batch_generate run: mlx_lm.server's batching)
on a tiny model of models.py; settings use mlx_lm.generate's flag names (snake_case).
"""

from __future__ import annotations

import json

from tests.support.mlx_conformance.models import MODELS


def case(model: str, prompt: int, generated: int, **settings) -> dict:
    return {"model": model, "prompt_tokens": prompt, "generated_tokens": generated, **settings}


CASES = [
    # KVCache growth in 256-token steps (llama.py builds KVCache for every layer)
    case("llama", 255, 1),            # offset 256: exactly one step
    case("llama", 256, 1),            # offset 257: a second step
    case("llama", 1000, 30),          # prompt in one chunk of 999 -> 1024, decode crosses into 1280
    case("llama", 2100, 5),           # two prefill chunks at the default prefill_step_size 2048
    case("llama", 700, 10, prefill_step_size=256),   # chunks that are whole steps
    case("llama", 600, 20, prefill_step_size=250),   # chunks that are not: trim to the used length, then grow
    case("llama", 300, 20, prefill_step_size=1),     # every token on its own
    # --max-kv-size: llama.py has its own make_cache, so make_prompt_cache ignores max_kv_size
    case("llama", 600, 20, max_kv_size=256),
    # --max-kv-size on model files without make_cache: RotatingKVCache(max_kv_size, keep=4) on every layer
    case("qwen3", 600, 300, max_kv_size=256),        # a prompt longer than the cache, then rotation
    case("qwen3", 100, 500, max_kv_size=512),        # grows by min(256, max - offset) up to max_kv_size
    case("qwen3", 700, 10, max_kv_size=300, prefill_step_size=256),  # concatenation trims between chunks
    case("qwen3", 200, 20, max_kv_size=1024),        # never reaches max_kv_size
    # --kv-bits / --kv-group-size / --quantized-kv-start (QuantizedKVCache)
    case("llama", 300, 20, kv_bits=4, quantized_kv_start=100),   # quantized after the prompt
    case("llama", 300, 20, kv_bits=8, kv_group_size=32, quantized_kv_start=0),
    case("llama", 300, 20, kv_bits=4, quantized_kv_start=310),   # quantized during decoding
    case("llama", 300, 20, kv_bits=4),                           # default start 5000: stays KVCache
    case("llama", 300, 300, kv_bits=2, quantized_kv_start=0),    # grows after quantization
    case("llama", 300, 20, kv_bits=3, quantized_kv_start=0),
    case("llama", 300, 20, kv_bits=5, quantized_kv_start=0),     # 5 bits x 128 values: 20 words, not 21
    case("llama", 300, 20, kv_bits=6, kv_group_size=128, quantized_kv_start=0),
    case("llama", 700, 20, kv_bits=4, quantized_kv_start=300, prefill_step_size=256),
    case("qwen3", 300, 20, kv_bits=4, quantized_kv_start=0, max_kv_size=256),  # RotatingKVCache cannot quantize
    # One model per mlx-lm model file the catalog relies on: default settings, then --max-kv-size
]
for name in MODELS:
    CASES.append(case(name, 600, 40))
    CASES.append(case(name, 600, 40, max_kv_size=256))
for name in ("gemma3_text", "gpt_oss", "deepseek_v2", "deepseek_v3", "qwen3_next", "jamba", "qwen3_moe"):
    CASES.append(case(name, 600, 40, kv_bits=4, quantized_kv_start=0))
for name in ("falcon_h1", "mamba"):
    CASES.append(case(name, 600, 40, kv_bits=4, quantized_kv_start=0))  # CacheList / ArraysCache: no to_quantized
CASES.append(case("gemma3_text", 100, 400))   # sliding layers grow by the step until the window
CASES.append(case("gpt_oss", 100, 5, prefill_step_size=32))  # windowed prefill chunks shorter than the window

# Several sequences: mlx_lm.server's BatchGenerator (batch_generate) over one BatchKVCache per layer
CASES.append(case("llama", 600, 40, sequences=3))
CASES.append(case("llama", 600, 40, sequences=2, prompt_lengths=[300, 600]))  # padded to the longest prompt
CASES.append(case("qwen3", 1000, 20, sequences=4))




def case_key(case: dict) -> str:
    """A stable identity for a case (its settings, sorted)."""
    return json.dumps(case, sort_keys=True)


assert len({case_key(c) for c in CASES}) == len(CASES), "duplicate cases"
