"""Write an engine's Settings back as the launch command that realises them (flags as each engine spells them).

Only memory-relevant settings are written: the workload keys always, every other key when it differs from
the engine module's default. Returns the words of the command; quoting and line breaks are the page's job.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

from pydantic import BaseModel

# setting key -> flag, per engine (the spellings of the shared setting vocabulary)
_FLAGS: dict[str, dict[str, str]] = {
    "llama-cpp": {
        "ctx_size": "-c", "parallel": "-np", "cache_type_k": "-ctk", "cache_type_v": "-ctv", "flash_attn": "-fa",
        "n_gpu_layers": "-ngl", "kv_unified": "-kvu", "swa_full": "--swa-full", "batch_size": "-b",
        "ubatch_size": "-ub", "no_kv_offload": "-nkvo",
    },
    "vllm": {
        "max_model_len": "--max-model-len", "max_num_seqs": "--max-num-seqs", "kv_cache_dtype": "--kv-cache-dtype",
        "gpu_memory_utilization": "--gpu-memory-utilization", "max_num_batched_tokens": "--max-num-batched-tokens",
        "block_size": "--block-size", "tensor_parallel_size": "--tensor-parallel-size",
        "pipeline_parallel_size": "--pipeline-parallel-size", "data_parallel_size": "--data-parallel-size",
        "kv_cache_memory_bytes": "--kv-cache-memory-bytes", "cpu_offload_gb": "--cpu-offload-gb",
        "enable_prefix_caching": "--enable-prefix-caching",
    },
    "sglang": {
        "context_length": "--context-length", "max_running_requests": "--max-running-requests",
        "kv_cache_dtype": "--kv-cache-dtype", "mem_fraction_static": "--mem-fraction-static",
        "max_total_tokens": "--max-total-tokens", "chunked_prefill_size": "--chunked-prefill-size",
        "tp_size": "--tp-size", "dp_size": "--dp-size", "page_size": "--page-size",
        "disable_radix_cache": "--disable-radix-cache",
    },
    "mlx-lm": {
        "decode_concurrency": "--decode-concurrency", "prompt_concurrency": "--prompt-concurrency",
        "prompt_cache_size": "--prompt-cache-size", "prefill_step_size": "--prefill-step-size",
    },
}
# mlx_lm.generate-only flags (mlx_lm.server has no --max-kv-size or --kv-bits)
_MLX_GENERATE_FLAGS = {"max_kv_size": "--max-kv-size", "kv_bits": "--kv-bits", "kv_group_size": "--kv-group-size"}
_OLLAMA_ENV = {
    "num_parallel": "OLLAMA_NUM_PARALLEL", "context_length": "OLLAMA_CONTEXT_LENGTH",
    "kv_cache_type": "OLLAMA_KV_CACHE_TYPE", "flash_attention": "OLLAMA_FLASH_ATTENTION",
    "gpu_overhead": "OLLAMA_GPU_OVERHEAD", "max_loaded_models": "OLLAMA_MAX_LOADED_MODELS",
}
# switches written without a value when true
_SWITCHES = {"kv_unified", "swa_full", "no_kv_offload", "enable_prefix_caching", "disable_radix_cache"}


@dataclass(frozen=True)
class LaunchCommand:
    """A command line as words, plus environment variables and remarks that go with it."""

    engine: str
    env: dict[str, str]
    words: list[str]
    remarks: list[str] = field(default_factory=list)


def _value(value: object) -> str:
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, Enum):
        return str(value.value)
    return str(value)


def _changed(settings: BaseModel, always: tuple[str, ...]) -> dict[str, object]:
    """Keys to write: the `always` keys, then any other key whose value differs from the field default."""
    out = {}
    for key, info in type(settings).model_fields.items():
        value = getattr(settings, key)
        if value is not None and (key in always or value != info.default):
            out[key] = value
    return out


def render_launch_command(
    engine: str, settings: BaseModel, model_ref: str, always: tuple[str, ...] = ()
) -> LaunchCommand:
    """The command (and environment) that starts `engine` with `settings` for model `model_ref`."""
    values = _changed(settings, always)
    if engine == "ollama":
        env = {_OLLAMA_ENV[k]: _value(v) for k, v in values.items() if k in _OLLAMA_ENV and v not in ("", 0)}
        remarks = []
        if values.get("num_gpu", -1) != -1:
            remarks.append(f"num_gpu {values['num_gpu']} is a per-model option: set it in the Modelfile "
                           "(PARAMETER num_gpu) or in the request's options, not in the environment.")
        return LaunchCommand(engine, env, ["ollama", "serve"], remarks)
    words: list[str]
    remarks: list[str] = []
    if engine == "llama-cpp":
        words = ["llama-server", "-m", model_ref]
    elif engine == "vllm":
        words = ["vllm", "serve", model_ref]
    elif engine == "sglang":
        words = ["python", "-m", "sglang.launch_server", "--model-path", model_ref]
    elif engine == "mlx-lm":
        words = ["mlx_lm.server", "--model", model_ref]
        generate_only = {k: v for k, v in values.items() if k in _MLX_GENERATE_FLAGS and v is not None}
        if generate_only:
            flags = " ".join(f"{_MLX_GENERATE_FLAGS[k]} {_value(v)}" for k, v in generate_only.items())
            remarks.append(f"mlx_lm.server has no {', '.join(_MLX_GENERATE_FLAGS[k] for k in generate_only)}; "
                           f"these apply to mlx_lm.generate: mlx_lm.generate --model {model_ref} {flags}")
    else:
        raise ValueError(f"no launch command for engine '{engine}'")
    flags = _FLAGS[engine]
    for key, value in values.items():
        flag = flags.get(key)
        if flag is None or value is None:
            continue
        if key in _SWITCHES:
            if value:
                words.append(flag)
            continue
        words += [flag, _value(value)]
    return LaunchCommand(engine, {}, words, remarks)
