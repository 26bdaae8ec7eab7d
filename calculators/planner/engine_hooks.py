"""What the planner needs from each engine: how it splits a model over GPUs and its scheduler policy.

TEMPORARY HOME: these move into each engine's adapter (calculators/engines/<engine>/) with the layout
work; shared planner code reads them through `hooks_for` only.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel

from calculators.plan import MemoryPlan
from calculators.simulator.policy import LlamaCppPolicy, OllamaPolicy, SglangPolicy, VllmPolicy

Split = Literal["tensor", "layer", "single"]


@dataclass(frozen=True)
class PlannerHooks:
    """An engine's multi-GPU split, the setting carrying it, its concurrency knob, and its scheduler policy."""

    engine: str
    split: Split  # tensor: TP shares every step; layer: layers spread over GPUs, one runs at a time
    parallel_setting: str | None  # settings key of the TP degree (tensor split)
    concurrency_setting: str  # settings key the planner varies
    concurrency_flag: str  # how a person recognises it
    policy: Callable[[BaseModel, MemoryPlan], tuple[object, int | None]] | None  # None: no scheduler model


def _vllm(settings, plan) -> tuple[object, int | None]:
    policy = VllmPolicy(
        max_num_seqs=plan.max_num_seqs, max_num_batched_tokens=plan.max_num_batched_tokens,
        block_size=plan.block_size, enable_prefix_caching=settings.enable_prefix_caching is not False,
        enable_chunked_prefill=settings.enable_chunked_prefill is not False, max_model_len=plan.max_model_len,
    )
    return policy, plan.kv_tokens


def _sglang(settings, plan) -> tuple[object, int | None]:
    policy = SglangPolicy(
        max_running_requests=plan.max_running_requests, chunked_prefill_size=plan.chunked_prefill_size,
        page_size=plan.page_size, disable_radix_cache=bool(settings.disable_radix_cache),
        context_length=plan.context_len,
    )
    return policy, plan.max_total_num_tokens


def _llamacpp(settings, plan) -> tuple[object, int | None]:
    return LlamaCppPolicy(ctx_size=plan.n_ctx, parallel=plan.n_seq, batch_size=plan.n_batch), None


def _ollama(settings, plan) -> tuple[object, int | None]:
    policy = OllamaPolicy(num_parallel=plan.effective_parallel, context_length=plan.effective_ctx_size // max(
        plan.effective_parallel, 1), num_batch=plan.num_batch, max_queue=settings.max_queue)
    return policy, None


_HOOKS = {
    "vllm": PlannerHooks("vllm", "tensor", "tensor_parallel_size", "max_num_seqs", "--max-num-seqs", _vllm),
    "sglang": PlannerHooks("sglang", "tensor", "tp_size", "max_running_requests", "--max-running-requests", _sglang),
    "llama-cpp": PlannerHooks("llama-cpp", "layer", None, "parallel", "-np", _llamacpp),
    "ollama": PlannerHooks("ollama", "layer", None, "num_parallel", "OLLAMA_NUM_PARALLEL", _ollama),
    "mlx-lm": PlannerHooks("mlx-lm", "single", None, "decode_concurrency", "--decode-concurrency", None),
}


def hooks_for(engine: str) -> PlannerHooks:
    """The planner hooks of one engine (KeyError for an engine the planner does not know)."""
    return _HOOKS[engine]
