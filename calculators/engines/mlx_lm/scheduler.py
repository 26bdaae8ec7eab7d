"""mlx_lm.server's scheduling for the simulator: a decode batch and a prompt batch, stepped one after the other.

Read from mlx-lm 0.32.2 (the wheel): server.py `_generate` serves batchable requests with one
`BatchGenerator(completion_batch_size=--decode-concurrency, prefill_batch_size=--prompt-concurrency,
prefill_step_size=--prefill-step-size)`; a request is not batchable when the model has a draft model or a
cache without `merge`, the request has a seed or images, or the server runs with --kv-bits
(`_is_batchable`), and is then served alone (`_serve_single`: one request at a time, the batch drained
first). generate.py `BatchGenerator.__init__` takes completion_batch_size = max(decode, prompt concurrency);
`BatchGenerator._next` runs, per call: a decode pass over the generation batch; nothing more when that batch
holds completion_batch_size sequences; else it moves min(prefill_batch_size - prompts in progress,
completion_batch_size - generation batch, waiting) sequences into the prompt batch, hands sequences with one
prompt token left to the generation batch (`PromptProcessingBatch.generate`: a one-token pass), and runs one
prompt pass in which each prompt processes up to prefill_step_size tokens (right-padded to the longest).
`insert_segments` keeps a prompt's last token apart, so a p-token prompt takes ceil((p - 1) / step) prompt
passes. No step checks memory and nothing is preempted: the cache grows until the Metal working set is
exhausted.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from calculators.engines.base import SimulatorKnob
from calculators.engines.mlx_lm.plan import MlxLmPlan, MlxLmSettings
from calculators.i18n import N_, _
from calculators.simulator.policy import (
    Admission,
    KvLayout,
    PrefixReuse,
    SchedulerPolicy,
    SchedulerSpec,
    require_capacity,
)

#: MLX LM allocates each sequence's KV in steps of this many tokens (mlx_lm/models/cache.py KVCache.step).
KV_STEP_TOKENS = 256

_OVERFLOW_NOTE = N_(
    "MLX LM does not queue on memory: it admits requests whatever the cache needs, and past {capacity} "
    "KV tokens (the GPU working set less the weights) the Mac swaps or the process fails. This run held up "
    "to {peak}: lower --decode-concurrency or serve fewer users per instance."
)


class MlxLmPolicy(SchedulerPolicy):
    """mlx_lm.server's knobs: --decode-concurrency, --prompt-concurrency, --prefill-step-size, and batching.

    `batched` False is the server's one-at-a-time path (--kv-bits, a draft model, a cache that cannot merge):
    one request runs from prompt to last token before the next is admitted.
    """

    engine: Literal["mlx-lm"] = "mlx-lm"
    decode_concurrency: int = Field(default=32, gt=0, description="--decode-concurrency: sequences decoded together")
    prompt_concurrency: int = Field(default=8, gt=0, description="--prompt-concurrency: prompts prefilled together")
    prefill_step_size: int = Field(default=2048, gt=0, description="--prefill-step-size: prompt tokens per pass")
    batched: bool = Field(default=True, description="False: requests are served one at a time (_serve_single)")

    def scheduler_spec(self, kv_capacity_tokens: int | None = None) -> SchedulerSpec:
        """Rules for mlx_lm.server; `kv_capacity_tokens` is what the working set holds next to the weights."""
        capacity = require_capacity(self.engine, kv_capacity_tokens)
        running = max(self.decode_concurrency, self.prompt_concurrency) if self.batched else 1
        return SchedulerSpec(
            engine=self.engine,
            max_running=running,
            max_running_knob="decode_concurrency" if self.batched else "batched",
            step_token_budget=None,
            chunked_prefill=True,
            kv_layout=KvLayout.POOL,
            kv_capacity_tokens=capacity,
            kv_capacity_knob="working set",
            block_size_tokens=KV_STEP_TOKENS,
            admission=Admission.UNCHECKED,
            preempt_on_kv_exhaustion=False,
            prefix_reuse=PrefixReuse.NONE,
            prefill_chunk_tokens=self.prefill_step_size,
            max_prefilling=self.prompt_concurrency if self.batched else 1,
            max_prefilling_knob="prompt_concurrency",
            decode_then_prefill=True,
            kv_overflow_note=("mlx_kv_overflow", _(_OVERFLOW_NOTE)),
        )


def unbatchable_reason(settings: MlxLmSettings) -> str | None:
    """Why mlx_lm.server serves these settings one request at a time (server.py `_is_batchable`), or None."""
    if settings.draft_model is not None:
        return _("--draft-model: mlx_lm.server does not batch speculative decoding")
    if settings.kv_bits is not None:
        return _("--kv-bits: mlx_lm.server serves requests one at a time with a quantized cache")
    return None


def kv_capacity_tokens(plan: MlxLmPlan) -> int:
    """KV tokens the GPU working set holds next to the weights and the recurrent state (at least 1)."""
    state = sum(layer.state_bytes for layer in plan.layer_caches) * plan.n_sequences
    if plan.working_set_bytes is None or plan.kv_bytes_per_token <= 0:
        return 1 << 40  # nothing bounds it that servewise knows of
    free = plan.working_set_bytes - (plan.weights_bytes or 0) - state
    return max(1, free // plan.kv_bytes_per_token)


def policy_from_plan(settings, plan) -> tuple[MlxLmPolicy, int]:
    """The scheduler an MLX LM plan runs with (its concurrency knobs, batched or not) and the KV tokens that fit."""
    policy = MlxLmPolicy(decode_concurrency=settings.decode_concurrency,
                         prompt_concurrency=settings.prompt_concurrency,
                         prefill_step_size=settings.prefill_step_size,
                         batched=unbatchable_reason(settings) is None)
    return policy, kv_capacity_tokens(plan)


SIMULATOR_LABEL = "MLX LM (mlx_lm.server)"
SIMULATOR_KNOBS = (
    SimulatorKnob("decode_concurrency", "--decode-concurrency", "sim_mlx_decode"),
    SimulatorKnob("prompt_concurrency", "--prompt-concurrency", "sim_mlx_prompt"),
    SimulatorKnob("prefill_step_size", "--prefill-step-size", "sim_mlx_step"),
    SimulatorKnob("batched", N_("Batched serving"), "sim_mlx_batched",
                  help=N_("Off: one request at a time, as mlx_lm.server serves --kv-bits, --draft-model, a request "
                         "with a seed or images, and models whose cache cannot merge.")),
)
