"""vLLM's engine arguments (vllm/engine/arg_utils.py EngineArgs): the settings servewise models, named as
vLLM names its flags, and the batch limits its API server picks by GPU."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from calculators.engines.vllm.speculative import VllmSpeculativeConfig, parse_speculative_config
from calculators.errors import ServewiseInputError
from calculators.hardware.machine import Machine
from calculators.model.architecture import ModelArchitecture
from calculators.units import GIB


class VllmSettings(BaseModel):
    """vLLM launch settings that change memory, named as `vllm serve` names them (snake_case)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    # None = the model's max_position_embeddings; "auto" (or -1) = the largest length that fits
    # (vllm/v1/core/kv_cache_utils.py _auto_fit_max_model_len).
    max_model_len: int | Literal["auto"] | None = None
    # vllm/config/cache.py (docs.vllm.ai stable source): Field(default=0.92, gt=0, le=1)
    gpu_memory_utilization: float = Field(default=0.92, gt=0, le=1)
    # None = by GPU, vllm/engine/arg_utils.py _set_default_args @ 99d7eb5d6a5
    max_num_seqs: int | None = Field(default=None, gt=0)
    max_num_batched_tokens: int | None = Field(default=None, gt=0)
    block_size: int | None = Field(default=None, gt=0)  # None = 16 (CacheConfig.DEFAULT_BLOCK_SIZE)
    kv_cache_dtype: str = "auto"  # vllm/config/cache.py: "auto" = model dtype
    dtype: str = "auto"
    tensor_parallel_size: int = Field(default=1, ge=1)
    pipeline_parallel_size: int = Field(default=1, ge=1)
    data_parallel_size: int = Field(default=1, ge=1)
    kv_cache_memory_bytes: int | None = Field(default=None, gt=0)  # per GPU; ignores gpu_memory_utilization
    enable_prefix_caching: bool | None = None
    enable_chunked_prefill: bool | None = None  # v1 turns it on for generative models (arg_utils.py)
    disable_hybrid_kv_cache_manager: bool = False
    # vllm/config/cache.py: Mamba / linear-attention state dtypes ("auto" = model dtype; see mamba.py)
    mamba_cache_dtype: str = "auto"
    mamba_ssm_cache_dtype: str = "auto"
    mamba_block_size: int | None = Field(default=None, gt=0)
    speculative_config: VllmSpeculativeConfig | None = None  # --speculative-config (speculative.py)
    async_scheduling: bool = True  # two batches in flight (vllm/config/vllm.py max_concurrent_batches)
    cpu_offload_gb: float = Field(default=0, ge=0)
    quantization: str | None = None
    api_key: str | None = None
    host: str | None = None  # vllm/entrypoints/openai/cli_args.py FrontendArgs: None = all interfaces
    port: int = 8000  # FrontendArgs.port
    # the platform: "cpu" is vLLM's CPU build (kernel blocks of 32; see mamba.py), "cuda" the GPU build
    device: Literal["cuda", "cpu"] = "cuda"
    cpu_avx512_bf16: bool = False  # CPU build on a host with AVX-512 BF16: SSM state reset to float32

    @field_validator("speculative_config", mode="before")
    @classmethod
    def _speculative_json(cls, value: object) -> object:
        """--speculative-config takes a JSON object on the command line."""
        return parse_speculative_config(value)


def default_batch_limits(machine: Machine) -> tuple[int, int]:
    """(max_num_seqs, max_num_batched_tokens) vLLM's API server picks when unset, from the GPU's memory.

    GPUs with at least 70 GiB that are not A100s get 1024 / 8192, all others 256 / 2048
    (vllm/engine/arg_utils.py _set_default_args, OPENAI_API_SERVER context).
    """
    is_a100 = machine.gpu_id is not None and "a100" in machine.gpu_id.lower()
    if machine.device_memory_bytes >= 70 * GIB and not is_a100:
        return 1024, 8192
    return 256, 2048


def resolve_max_model_len(settings: VllmSettings, arch: ModelArchitecture) -> tuple[int, bool, str | None]:
    """(max_model_len in tokens, whether vLLM auto-fits it, a refusal) as vllm/config/model.py derives it: unset or
    auto / -1 takes the model's trained context; a longer one than that is refused (VLLM_ALLOW_LONG_MAX_MODEL_LEN)."""
    model_max_len = arch.max_context_tokens
    requested_len = settings.max_model_len
    auto_fit = requested_len == "auto" or requested_len == -1
    if requested_len is None or auto_fit:
        if model_max_len is None:
            raise ServewiseInputError("the model's maximum context is unknown: give max_model_len explicitly")
        return model_max_len, auto_fit, None
    if requested_len <= 0:
        raise ServewiseInputError("max_model_len must be positive, or 'auto' / -1")
    if model_max_len is not None and requested_len > model_max_len:
        return requested_len, False, (
            f"User-specified max_model_len ({requested_len}) is greater than the derived max_model_len "
            f"({model_max_len}); vLLM refuses unless VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 is set."
        )
    return requested_len, False, None
