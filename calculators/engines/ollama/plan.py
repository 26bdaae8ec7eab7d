"""Ollama: the llama-server command it builds, its own memory prediction and load rule, then llama.cpp's plan.

Rules read in ollama/ollama at commit fb30760996871fa9460115c753afd2c60d4ab0f7 (tag v0.33.0-rc2,
2026-08-21; it pins llama.cpp build b10488 in LLAMA_CPP_VERSION), read 2026-11-30. Since v0.30 GGUF
models are served by an upstream llama-server subprocess (llm/llama_server.go), so the caches are
llama.cpp's (calculators.engines.llama_cpp.plan); this module adds what Ollama decides before launching it.

Sizes in bytes, contexts in tokens.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from calculators.engines.llama_cpp.plan import FlashAttn, LlamaCppPlan, LlamaCppSettings, plan_llamacpp
from calculators.hardware.machine import Machine
from calculators.i18n import N_, _
from calculators.memory.plan import PlanNote
from calculators.model.architecture import ModelArchitecture
from calculators.units import GIB, MIB

#: Why Ollama's speculative drafter is not in the plan (issue 14), said on plans of models that could use one
#: and when a drafter model is given for an Ollama command.
DRAFT_NOT_PLANNED = N_(
    "Ollama's drafter is not planned: v0.33.0-rc2 starts one only from a Modelfile DRAFT layer "
    "(llm/llama_server.go appendDraftArgs: --spec-type draft-mtp or draft-dflash, --spec-draft-n-max, "
    "--spec-draft-model), which the serve command does not show, and servewise does not model llama.cpp's "
    "MTP and DFlash draft contexts (their context type keeps other caches than a draft model's)."
)

ENGINE_ID = "ollama"
OLLAMA_COMMIT = "fb30760996871fa9460115c753afd2c60d4ab0f7"
# server/routes.go:2043-2057: default num_ctx from total VRAM (each GPU's total minus OLLAMA_GPU_OVERHEAD).
VRAM_CONTEXT_TIERS: tuple[tuple[int, int], ...] = ((47 * GIB, 262144), (23 * GIB, 32768), (0, 4096))
# server/sched.go:507: families Ollama never runs with more than one parallel request (GGUF architecture names),
# and the same families by the config.json model_type a catalog or pasted model carries
SINGLE_PARALLEL_FAMILIES = frozenset(
    {
        "mllama", "qwen3vl", "qwen3vlmoe", "qwen35", "qwen35moe", "qwen3next", "lfm2", "lfm2moe",
        "nemotron_h", "nemotron_h_moe", "nemotron_h_omni",
        "qwen3_next", "qwen3_5_text", "qwen3_5_moe_text", "qwen3_vl", "qwen3_vl_moe",
    }
)  # fmt: skip
DEFAULT_MODELS_PER_GPU = 3  # server/sched.go:86
LOAD_HEADROOM_PERCENT = 80  # server/sched.go:550 and :1064: predicted must stay within 80 % of free memory
MIN_NUM_CTX = 4  # server/sched.go:170-172
# server/sched.go:796-805 and :906-915: automatic -b/-ub for completion models and its memory surcharge.
BATCH_DEFAULT, BATCH_CONSTRAINED, BATCH_MEDIUM, BATCH_LARGE = 512, 256, 1024, 2048
EMBEDDING_BATCH = 2048  # llm/llama_server.go:78 DefaultEmbeddingNumBatch


class OllamaSettings(BaseModel):
    """Ollama's server environment and per-model options, with Ollama's defaults (envconfig/config.go, api/types.go)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    num_parallel: int = Field(default=1, ge=0, description="OLLAMA_NUM_PARALLEL (0 behaves as 1)")
    context_length: int = Field(default=0, ge=0, description="OLLAMA_CONTEXT_LENGTH; 0 = by VRAM tier")
    num_ctx: int | None = Field(default=None, ge=0, description="per-request or Modelfile num_ctx; wins when set")
    kv_cache_type: str = Field(default="", description="OLLAMA_KV_CACHE_TYPE; empty = llama-server's f16")
    flash_attention: bool | None = Field(default=None, description="OLLAMA_FLASH_ATTENTION; None = auto")
    gpu_overhead: int = Field(default=0, ge=0, description="OLLAMA_GPU_OVERHEAD, bytes reserved per GPU")
    num_gpu: int = Field(default=-1, ge=-1, description="num_gpu option; -1 = let llama-server decide")
    num_batch: int | None = Field(default=None, ge=1, description="num_batch option; None = Ollama's automatic batch")
    max_loaded_models: int = Field(default=0, ge=0, description="OLLAMA_MAX_LOADED_MODELS; 0 = 3 per GPU")
    max_queue: int = Field(default=512, ge=0, description="OLLAMA_MAX_QUEUE")
    keep_alive: str = Field(default="5m", description="OLLAMA_KEEP_ALIVE")
    host: str = Field(default="127.0.0.1:11434", description="OLLAMA_HOST")
    gpu_library: Literal["cuda", "rocm", "metal", "vulkan", "cpu"] = Field(
        default="cuda", description="the GPU backend Ollama detects (decides flash-attention support and reserves)"
    )
    flash_attention_supported: bool = Field(
        default=True, description="ml.FlashAttentionSupported for the GPUs (false e.g. for CUDA compute < 6.0)"
    )
    models_already_loaded: bool = Field(
        default=False, description="other models are resident, so the pre-flight fit check applies"
    )


class OllamaPlan(LlamaCppPlan):
    """llama.cpp's plan for the command Ollama launches, plus Ollama's own figures and decisions."""

    llama_server_args: list[str] = Field(description="the memory-relevant llama-server flags Ollama passes")
    default_context_tokens: int = Field(description="num_ctx Ollama picks from total VRAM when none is set")
    per_request_context: int = Field(description="num_ctx each request may fill, after the trained-context cap")
    effective_ctx_size: int = Field(description="-c passed to llama-server: num_ctx x num_parallel")
    effective_parallel: int = Field(description="-np passed to llama-server")
    num_batch: int = Field(description="-b and -ub passed to llama-server (512 = llama-server's own ubatch)")
    predicted_vram_bytes: int = Field(description="Ollama's own estimate: GGUF size + an f16 KV guess")
    predicted_for_load_bytes: int = Field(description="the estimate plus the batch surcharge")
    available_bytes: int = Field(description="free memory Ollama compares against (one GPU or the group)")
    single_gpu: bool = Field(description="Ollama pins the model to one GPU (predicted within 80 % of it)")
    fits_preflight: bool = Field(description="predicted_for_load within 80 % of available (server/sched.go:545-550)")
    evicts_before_load: bool = Field(description="other models are loaded and the pre-flight check fails")
    gpu_available_bytes: int = Field(description="free - OLLAMA_GPU_OVERHEAD - per-GPU minimum, as Ollama logs it")
    max_loaded_models_effective: int


def default_context_tokens(machine: Machine | None, gpu_overhead_bytes: int = 0) -> int:
    """Ollama's default num_ctx: 262144 from 47 GiB of total VRAM, 32768 from 23 GiB, else 4096 (tokens)."""
    total_vram = 0
    if machine is not None:
        total_vram = machine.n_devices * max(machine.device_memory_bytes - gpu_overhead_bytes, 0)
    return next(tokens for threshold, tokens in VRAM_CONTEXT_TIERS if total_vram >= threshold)


def effective_parallel(arch: ModelArchitecture, num_parallel: int) -> int:
    """Slots Ollama launches with: OLLAMA_NUM_PARALLEL (min 1), forced to 1 for embeddings and some families."""
    if arch.is_embedding_model or arch.family in SINGLE_PARALLEL_FAMILIES:
        return 1  # server/sched.go:498-509
    return max(num_parallel, 1)


def ollama_predicted_vram_bytes(arch: ModelArchitecture, weights_bytes: int, context_tokens: int) -> int:
    """PredictServerVRAM (llm/llama_server.go:2681-2700): file + 2 x layers x min KV heads x hidden/heads x ctx x 2.

    It assumes an f16 cache on every layer and head_dim = hidden / heads, whatever the real geometry.
    """
    # fs/ggml/ggml.go:118-120 HeadCountKVMin: the smallest per-layer count, 0 for recurrent layers -> then 1
    kv_heads = min((layer.n_kv_heads for layer in arch.layers), default=0) or 1
    head_dim = arch.hidden_size // arch.n_heads if arch.n_heads else 0
    return weights_bytes + 2 * arch.n_layers * kv_heads * head_dim * context_tokens * 2


def automatic_generation_batch(
    effective_ctx: int,
    predicted_bytes: int,
    available_bytes: int,
    flash: FlashAttn,
    cuda_free_bytes: int | None = None,
) -> int:
    """server/sched.go:822-841 automaticGenerationBatch: Ollama's -b/-ub for a completion model (tokens).

    Larger batches for long contexts (2048 above 32768 tokens, 1024 above 4096) when memory allows;
    `cuda_free_bytes` is the free memory of a CUDA GPU in use, None when there is none.
    """
    if flash is FlashAttn.OFF and cuda_free_bytes is not None:
        constrained = effective_ctx > 4096 and 0 < cuda_free_bytes <= 8 * GIB  # :843-857
        return BATCH_CONSTRAINED if constrained else BATCH_DEFAULT
    batch = BATCH_LARGE if effective_ctx > 32768 else BATCH_MEDIUM if effective_ctx > 4096 else BATCH_DEFAULT
    while batch > BATCH_DEFAULT and not _batch_fits(batch, predicted_bytes, available_bytes):
        batch = BATCH_MEDIUM if batch > BATCH_MEDIUM else BATCH_DEFAULT
    return batch


def batch_surcharge_bytes(batch: int) -> int:
    """server/sched.go:906-915: memory Ollama adds to its estimate for a large batch (bytes)."""
    if batch >= BATCH_LARGE:
        return 2 * GIB
    if batch >= BATCH_MEDIUM:
        return 768 * MIB
    return 0


def _batch_fits(batch: int, predicted: int, available: int) -> bool:
    """server/sched.go:870-895 generationBatchFits with its headroom rule (60 % for 2048, 75 % for 1024)."""
    if predicted == 0 or available == 0:
        return True
    threshold = available * LOAD_HEADROOM_PERCENT // 100
    if predicted > threshold:
        return False
    headroom_percent = 60 if batch >= BATCH_LARGE else 75 if batch >= BATCH_MEDIUM else 100
    if predicted > available * headroom_percent // 100:
        return False
    return batch_surcharge_bytes(batch) <= threshold - predicted


def plan_ollama(
    arch: ModelArchitecture,
    settings: OllamaSettings | None = None,
    machine: Machine | None = None,
    weights_bytes: int | None = None,
) -> OllamaPlan:
    """What Ollama launches for `arch` and what that llama-server allocates (bytes), with Ollama's load verdict.

    `weights_bytes` stands for the GGUF file size Ollama's estimate adds; without it the estimate
    counts only its KV guess. `machine` None means no GPU (CPU only).
    """
    s = settings or OllamaSettings()
    n_parallel = effective_parallel(arch, s.num_parallel)
    default_ctx = default_context_tokens(machine, s.gpu_overhead)
    num_ctx = s.num_ctx if s.num_ctx is not None else (s.context_length or default_ctx)
    num_ctx = max(num_ctx, MIN_NUM_CTX)
    if arch.max_context_tokens and num_ctx > arch.max_context_tokens:
        num_ctx = arch.max_context_tokens  # llm/server.go:111-115: capped at the trained context

    if s.flash_attention is not None:
        flash = FlashAttn.ON if s.flash_attention else FlashAttn.OFF
    elif machine is not None and not s.flash_attention_supported:
        flash = FlashAttn.OFF
    else:
        flash = FlashAttn.AUTO  # llm/llama_server.go:597-611 LlamaServerFlashAttention

    file_bytes = weights_bytes or 0
    predicted_ctx = num_ctx * n_parallel  # server/sched.go:793-795 effectiveLlamaServerContext
    predicted = ollama_predicted_vram_bytes(arch, file_bytes, predicted_ctx)
    single_gpu, available = _placement(machine, predicted)
    if arch.is_embedding_model:
        # llm/llama_server.go:75-96 and :561-569: 2048 (or num_batch) capped by the context of all slots
        num_batch = min(s.num_batch or min(EMBEDDING_BATCH, num_ctx), num_ctx * n_parallel)
    elif s.num_batch is not None:
        num_batch = s.num_batch
    else:
        cuda_free = machine.device_memory_bytes if machine is not None and s.gpu_library == "cuda" else None
        num_batch = automatic_generation_batch(predicted_ctx, predicted, available, flash, cuda_free)
    surcharge = 0 if arch.is_embedding_model else batch_surcharge_bytes(num_batch)
    predicted_for_load = predicted + surcharge
    # server/sched.go:785-791: an explicit partial offload (num_gpu below blocks + 1) skips the pre-flight check.
    explicit_partial = 0 < s.num_gpu < arch.n_layers + 1
    fits_preflight = machine is None or predicted_for_load <= available * LOAD_HEADROOM_PERCENT // 100

    cache_type = s.kv_cache_type.lower() or "f16"
    llama_settings = LlamaCppSettings(
        ctx_size=num_ctx * n_parallel,
        parallel=n_parallel,
        cache_type_k=cache_type,
        cache_type_v=cache_type,
        flash_attn=flash,
        n_gpu_layers=s.num_gpu if s.num_gpu >= 0 else -1,
        kv_unified=False,  # Ollama passes an explicit -np and never -kvu
        batch_size=num_batch,
        ubatch_size=num_batch,
    )
    gpus = machine.n_devices if machine else 0
    llama_machine = machine
    if machine is not None and single_gpu and machine.n_devices > 1:
        llama_machine = machine.model_copy(update={"n_devices": 1})
    base = plan_llamacpp(arch, llama_settings, llama_machine, weights_bytes)

    args = ["-c", str(num_ctx * n_parallel), "-np", str(n_parallel)]
    if s.kv_cache_type:
        args += ["--cache-type-k", cache_type, "--cache-type-v", cache_type]
    args += ["--flash-attn", flash.value]
    if arch.is_embedding_model:
        args += ["--embedding"]
    args += ["-b", str(num_batch), "-ub", str(num_batch)]
    if s.num_gpu >= 0:
        args += ["-ngl", str(s.num_gpu)]

    minimum = 512 * MIB if s.gpu_library == "metal" else 457 * MIB  # ml/device.go:359-364
    gpu_free = machine.device_memory_bytes if machine else 0
    gpu_available = max(gpu_free - s.gpu_overhead - minimum, 0) if machine else 0

    notes = list(base.notes)
    if s.num_ctx is None and not s.context_length and num_ctx > 4096:
        # server/sched.go:757-782 and :917-925: only an automatic num_ctx is retried smaller after a failed load
        notes.append(
            PlanNote(
                code="ollama_auto_ctx_retry",
                message=_("if loading runs out of memory, Ollama retries num_ctx {num_ctx} at 32768, then "
                          "4096").format(num_ctx=num_ctx),
            )
        )
    if arch.mtp_layers:  # a GGUF with MTP layers runs draft-mtp once draft_num_predict is set
        notes.append(PlanNote(code="ollama_draft_not_planned", message=_(DRAFT_NOT_PLANNED)))
    # The llama.cpp plan is already validated: carry its fields over without dumping and re-validating them.
    inherited = {name: getattr(base, name) for name in LlamaCppPlan.model_fields}
    return OllamaPlan.model_construct(
        **{**inherited, "engine": ENGINE_ID, "notes": notes},
        llama_server_args=args,
        default_context_tokens=default_ctx,
        per_request_context=num_ctx,
        effective_ctx_size=num_ctx * n_parallel,
        effective_parallel=n_parallel,
        num_batch=num_batch,
        predicted_vram_bytes=predicted,
        predicted_for_load_bytes=predicted_for_load,
        available_bytes=available,
        single_gpu=single_gpu,
        fits_preflight=fits_preflight,
        evicts_before_load=s.models_already_loaded and not fits_preflight and not explicit_partial,
        gpu_available_bytes=gpu_available,
        max_loaded_models_effective=s.max_loaded_models or DEFAULT_MODELS_PER_GPU * max(gpus, 1),
    )


def _placement(machine: Machine | None, predicted: int) -> tuple[bool, int]:
    """server/sched.go:972-1075: one GPU when the prediction fits 80 % of it, else the whole group (free bytes)."""
    if machine is None:
        return False, 0
    if machine.n_devices == 1:
        return True, machine.device_memory_bytes
    if predicted <= machine.device_memory_bytes * LOAD_HEADROOM_PERCENT // 100:
        return True, machine.device_memory_bytes
    return False, machine.device_memory_bytes * machine.n_devices
