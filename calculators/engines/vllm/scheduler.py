"""vLLM's scheduling knobs for the simulator: max_num_seqs, the token budget, blocks and prefix caching."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from calculators.engines.base import SimulatorKnob
from calculators.engines.vllm.arg_utils import (
    SMALL_GPU_BATCH_LIMITS,
    default_max_num_batched_tokens_on_gpu,
    default_max_num_seqs_on_gpu,
)
from calculators.errors import ServewiseInputError
from calculators.i18n import N_, _
from calculators.simulator.policy import (
    Admission,
    KvLayout,
    PrefixReuse,
    SchedulerPolicy,
    SchedulerSpec,
    require_capacity,
)


class VllmPolicy(SchedulerPolicy):
    """vLLM V1 scheduler knobs (defaults for the API server on a < 70 GiB GPU, arg_utils.SMALL_GPU_BATCH_LIMITS;
    on a known GPU the simulator takes arg_utils.default_batch_limits, the memory plan's rule).

    Running requests are scheduled first (one token each), then waiting ones within
    max_num_batched_tokens; when a block cannot be allocated the newest running request is preempted
    and later recomputed, and no new request is admitted in that step (vllm/v1/core/sched/scheduler.py).
    The recompute ignores blocks the prefix cache may still hold for it (pessimistic), unless the requests say
    which of them repeat a prompt (RequestSet.prompt_keys): then a left request's blocks stay cached (LRU).
    """

    engine: Literal["vllm"] = "vllm"
    max_num_seqs: int = Field(default=SMALL_GPU_BATCH_LIMITS[0], gt=0)
    max_num_batched_tokens: int = Field(default=SMALL_GPU_BATCH_LIMITS[1], gt=0)
    block_size: int = Field(default=16, gt=0)
    enable_chunked_prefill: bool = True
    enable_prefix_caching: bool = True
    max_model_len: int | None = Field(default=None, gt=0, description="prompt + output limit; None = no limit")
    v0_engine: bool = Field(
        default=False,
        description=(
            "vLLM's V0 engine (the default before 0.8): with chunked prefill off, a step that schedules prefills "
            "runs no decodes (vllm/core/scheduler.py _schedule_default: 'Don't schedule decodes if prefills are "
            "scheduled', read at 0054e1fa0f8ac79f0524b6b1f4d7c02f9e37eca1), so running sequences stall"
        ),
    )

    @property
    def outputs_returned_next_step(self) -> bool:
        """V0's async output processor (on by default with CUDA graphs: ModelConfig.use_async_output_proc, turned
        off only for pipeline parallelism, --enforce-eager, Ray SPMD workers, pooling models and speculative
        decoding, vllm/config.py verify_async_output_proc) processes step N's outputs inside step N+1: LLMEngine.step
        passes async_callback with the next ExecuteModelRequest (vllm/engine/llm_engine.py) and the model runner
        calls it after launching that step's forward pass, before sampling (vllm/worker/model_runner.py
        execute_model). AsyncLLMEngine puts the request outputs into the request streams from that callback, in the
        executor thread the step runs in (engine/async_llm_engine.py process_request_outputs; executor_base.py
        execute_model_async -> make_async), so a waiting client resumes when the step's future completes: a token
        computed in step N is seen when step N+1 ends. All read in the vllm 0.7.3 wheel. V1 has no such lag in the
        simulator (its output processing runs in another process, overlapped with the engine core)."""
        return self.v0_engine

    @property
    def host_work_per_sequence_in_step(self) -> bool:
        """V0's LLMEngine.step schedules, runs the model and then processes each sequence group's output
        (sampling results, detokenisation, stop checks) in the same process before the next step
        (vllm/engine/llm_engine.py _process_model_outputs, read in the vllm 0.7.3 wheel); V1 runs its engine core
        in a separate process from output processing."""
        return self.v0_engine

    def scheduler_spec(self, kv_capacity_tokens: int | None = None) -> SchedulerSpec:
        """Rules for vLLM; `kv_capacity_tokens` is the 'GPU KV cache size' the memory model gives."""
        capacity = require_capacity(self.engine, kv_capacity_tokens)
        if self.max_num_batched_tokens < self.max_num_seqs:
            raise ServewiseInputError(
                _("vLLM refuses max_num_batched_tokens ({max_num_batched_tokens}) smaller than max_num_seqs "
                  "({max_num_seqs}); raise the token budget or lower max_num_seqs").format(
                  max_num_batched_tokens=self.max_num_batched_tokens, max_num_seqs=self.max_num_seqs)
            )
        return SchedulerSpec(
            engine=self.engine,
            max_running=self.max_num_seqs,
            max_running_knob="max_num_seqs",
            step_token_budget=self.max_num_batched_tokens,
            step_token_budget_knob="max_num_batched_tokens",
            chunked_prefill=self.enable_chunked_prefill,
            mixed_prefill_decode=self.enable_chunked_prefill or not self.v0_engine,
            outputs_returned_next_step=self.outputs_returned_next_step,
            kv_layout=KvLayout.POOL,
            kv_capacity_tokens=capacity,
            kv_capacity_knob="gpu_memory_utilization",
            block_size_tokens=self.block_size,
            max_request_tokens=self.max_model_len,
            admission=Admission.NEXT_CHUNK,
            preempt_on_kv_exhaustion=True,
            prefix_reuse=PrefixReuse.SHARED if self.enable_prefix_caching else PrefixReuse.NONE,
        )


SIMULATOR_LABEL = "vLLM"
SIMULATOR_KNOBS = (
    SimulatorKnob("max_num_seqs", "--max-num-seqs", "sim_vllm_seqs", default_for_gpu=default_max_num_seqs_on_gpu),
    SimulatorKnob("max_num_batched_tokens", "--max-num-batched-tokens", "sim_vllm_mbt",
                  default_for_gpu=default_max_num_batched_tokens_on_gpu),
    SimulatorKnob("block_size", "--block-size", "sim_vllm_block"),
    SimulatorKnob("enable_chunked_prefill", N_("Chunked prefill"), "sim_vllm_chunked"),
    SimulatorKnob("enable_prefix_caching", N_("Automatic prefix caching"), "sim_vllm_apc"),
)


def policy_from_plan(settings, plan) -> tuple[VllmPolicy, int]:
    """The scheduler a vLLM plan runs with (its max_num_seqs, token budget, block size) and its KV tokens."""
    policy = VllmPolicy(
        max_num_seqs=plan.max_num_seqs, max_num_batched_tokens=plan.max_num_batched_tokens,
        block_size=plan.block_size, enable_prefix_caching=settings.enable_prefix_caching is not False,
        enable_chunked_prefill=settings.enable_chunked_prefill is not False, max_model_len=plan.max_model_len,
    )
    return policy, plan.kv_tokens
