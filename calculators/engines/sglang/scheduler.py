"""SGLang's scheduling knobs for the simulator: running requests, chunked prefill, the radix cache."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from calculators.engines.base import SimulatorKnob
from calculators.engines.sglang.plan import auto_chunk_and_graph_sizes
from calculators.i18n import N_, _
from calculators.simulator.policy import (
    Admission,
    KvLayout,
    PrefixReuse,
    SchedulerPolicy,
    SchedulerSpec,
    require_capacity,
)
from calculators.units import MIB, number

#: Host seconds to launch one layer of an eager decode forward pass. sgl-project/sglang#1401 (2024-09-12, SGLang
#: v0.3.1.post1, `bench_latency` on a GPU the PR does not name) measured Meta-Llama-3-8B's batch-1 decode step at
#: 7.35 ms with CUDA graphs and 8.23 ms with `--disable-cuda-graph` (flashinfer, the backend 0.5.6 picks on an A100:
#: server_args.py). A replayed graph costs the host one launch, so its step is the GPU's time; kernels launched one
#: by one overlap the GPU until the host falls behind, so an eager step is the larger of the GPU's time and the
#: host's launch time, and 8.23 ms above 7.35 ms is the host's: 8.23 ms over the model's 32 layers (the embedding,
#: final norm, LM head and sampler launches counted in). Llama and Qwen2 layers launch the same kernels in 0.5.6
#: (models/llama.py, models/qwen2.py: norm, qkv, rope, attention, o_proj, add-norm, gate_up, act, down).
EAGER_HOST_S_PER_LAYER = 8.23e-3 / 32


class SglangPolicy(SchedulerPolicy):
    """SGLang scheduler knobs.

    The scheduler runs a prefill batch whenever one can be formed and decodes only otherwise
    (get_next_batch_to_run in python/sglang/srt/managers/scheduler.py), unless
    `--enable-mixed-chunk`; running decodes therefore pause during prefill batches. The chunked prefill
    size caps the tokens of one prefill batch; decode batches take every running request.

    `init_new_token_ratio` 0.7 is SGLANG_INIT_NEW_TOKEN_RATIO's default (sgl-project/sglang
    python/sglang/srt/environ.py): the share of each running request's remaining output that
    admission keeps free. The engine decays it towards 0.7 x 0.14 over 600 decode steps and raises it
    after a retraction; the simulator keeps it fixed (more conservative admission).
    """

    engine: Literal["sglang"] = "sglang"
    max_running_requests: int = Field(default=2048, gt=0)
    chunked_prefill_size: int = Field(
        default=8192,
        gt=0,
        description="unset, SGLang picks it by GPU memory (python/sglang/srt/arg_groups/memory_hook.py "
        "_handle_gpu_memory_settings at v0.5.23, plan.auto_chunk_and_graph_sizes): 2048 below 20 GiB, 4096 below "
        "60 GiB, 8192 below 160 GiB, 16384 from 160 GiB; this default (8192) is the 60-160 GiB row",
    )
    page_size: int = Field(default=1, gt=0)
    disable_radix_cache: bool = False
    enable_mixed_chunk: bool = Field(default=False, description="run prefill chunks together with decodes")
    context_length: int | None = Field(default=None, gt=0)
    init_new_token_ratio: float = Field(default=0.7, ge=0, le=1)
    cuda_graph_max_bs: int | None = Field(
        default=None,
        gt=0,
        description="decode batches up to this size replay a CUDA graph, larger ones run eagerly "
        "(model_executor/cuda_graph_runner.py can_run); unset, SGLang picks it by GPU memory and tp "
        "(plan.py auto_chunk_and_graph_sizes); None here: GPU unknown, no cap simulated",
    )

    def scheduler_spec(self, kv_capacity_tokens: int | None = None) -> SchedulerSpec:
        """Rules for SGLang; `kv_capacity_tokens` is max_total_tokens as the memory model gives it."""
        capacity = require_capacity(self.engine, kv_capacity_tokens)
        return SchedulerSpec(
            engine=self.engine,
            max_running=self.max_running_requests,
            max_running_knob="max_running_requests",
            step_token_budget=self.chunked_prefill_size,
            step_token_budget_knob="chunked_prefill_size",
            chunked_prefill=True,
            mixed_prefill_decode=self.enable_mixed_chunk,
            kv_layout=KvLayout.POOL,
            kv_capacity_tokens=capacity,
            kv_capacity_knob="mem_fraction_static",
            block_size_tokens=self.page_size,
            max_request_tokens=self.context_length,
            admission=Admission.PROMPT_PLUS_RESERVE,
            output_reserve_ratio=self.init_new_token_ratio,
            preempt_on_kv_exhaustion=True,
            prefix_reuse=PrefixReuse.NONE if self.disable_radix_cache else PrefixReuse.SHARED,
            graph_max_batch=self.cuda_graph_max_bs,
            graph_max_batch_knob="cuda_graph_max_bs",
            eager_host_s_per_layer=EAGER_HOST_S_PER_LAYER,
        )


def _chunk_on_gpu(gpu_memory_bytes: int, gpu_id: str | None = None) -> int:
    """chunked_prefill_size SGLang picks with it unset on one GPU of this size (by memory only; tokens)."""
    return auto_chunk_and_graph_sizes(gpu_memory_bytes / MIB, 1)[0]


#: GPU sizes (GiB) the chunk-size help quotes; the sizes SGLang picks for them come from its plan's rule.
_HELP_GPU_GIB = (16, 24, 48, 80, 192)

def _chunk_help() -> str:
    """The chunk-size knob's help, quoting what SGLang picks on each GPU size (reader's language)."""
    tiers = ", ".join(_("{tokens} on {gib}\u00a0GiB").format(
        tokens=number(auto_chunk_and_graph_sizes(gib * 1024, 1)[0]), gib=gib) for gib in _HELP_GPU_GIB)
    return _("Unset, SGLang picks it by GPU memory: {tiers}.").format(tiers=tiers)


def _graph_cap_on_gpu(gpu_memory_bytes: int, gpu_id: str | None = None) -> int:
    """cuda_graph_max_bs SGLang picks with it unset on one GPU of this size (tp 1; by memory only; sequences)."""
    return auto_chunk_and_graph_sizes(gpu_memory_bytes / MIB, 1)[1]


def _graph_cap_help() -> str:
    """The graph-cap knob's help, quoting what SGLang picks on each GPU size (reader's language)."""
    tiers = ", ".join(_("{batch} on {gib}\u00a0GiB").format(batch=number(auto_chunk_and_graph_sizes(gib * 1024, 1)[1]),
                                                       gib=gib) for gib in _HELP_GPU_GIB)
    return _("Largest decode batch that runs on a CUDA graph; larger batches run eagerly, each step at least the "
             "host's time to launch every kernel. Unset, SGLang picks it by GPU memory: {tiers}.").format(tiers=tiers)


def _mixed_chunk_help() -> str:
    """The mixed-chunk switch's help with its default (reader's language)."""
    default = _("on") if SglangPolicy.model_fields["enable_mixed_chunk"].default else _("off")
    return _("Default: {state}. Off, a prefill batch runs alone and running decodes wait for it.").format(
        state=default)


SIMULATOR_LABEL = "SGLang"
SIMULATOR_KNOBS = (
    SimulatorKnob("max_running_requests", "--max-running-requests", "sim_sglang_mrr"),
    SimulatorKnob("chunked_prefill_size", "--chunked-prefill-size", "sim_sglang_chunk", default_for_gpu=_chunk_on_gpu,
                  help=_chunk_help),
    SimulatorKnob("disable_radix_cache", N_("Radix prefix cache"), "sim_sglang_radix", invert=True),
    SimulatorKnob("enable_mixed_chunk", "--enable-mixed-chunk", "sim_sglang_mixed",
                  help=_mixed_chunk_help),
    SimulatorKnob("cuda_graph_max_bs", "--cuda-graph-max-bs", "sim_sglang_graph_bs", default_for_gpu=_graph_cap_on_gpu,
                  help=_graph_cap_help),
)


def policy_from_plan(settings, plan) -> tuple[SglangPolicy, int]:
    """The scheduler an SGLang plan runs with (running requests, chunked prefill, pages) and its token pool."""
    policy = SglangPolicy(
        max_running_requests=plan.max_running_requests, chunked_prefill_size=plan.chunked_prefill_size,
        page_size=plan.page_size, disable_radix_cache=bool(settings.disable_radix_cache),
        context_length=plan.context_len, cuda_graph_max_bs=plan.cuda_graph_max_bs,
    )
    return policy, plan.max_total_num_tokens
