"""llama-server's scheduling knobs for the simulator: -np slots sharing -c, -b tokens per step."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from calculators.engines.base import SimulatorKnob
from calculators.errors import ServewiseInputError
from calculators.i18n import N_, _
from calculators.simulator.policy import (
    Admission,
    KvLayout,
    PrefixReuse,
    SchedulerPolicy,
    SchedulerSpec,
)


class LlamaCppPolicy(SchedulerPolicy):
    """llama-server's knobs: `-np` slots share `-c` tokens, each slot gets ctx_size / parallel.

    The unified KV (`-kvu`, which llama-server turns on in its automatic `-np -1` mode) is not
    modelled: here each slot owns its share of the context.
    """

    engine: Literal["llama-cpp"] = "llama-cpp"
    ctx_size: int = Field(default=16384, gt=0, description="-c: KV tokens shared by all slots")
    parallel: int = Field(default=4, gt=0, description="-np: slots")
    batch_size: int = Field(default=2048, gt=0, description="-b: tokens per step (llama-server's default)")
    cache_prompt: bool = Field(default=True, description="slots reuse the common prefix of their last prompt")

    def scheduler_spec(self, kv_capacity_tokens: int | None = None) -> SchedulerSpec:
        """Rules for llama-server; KV capacity is ctx_size (the input is not used)."""
        per_slot = self.ctx_size // self.parallel
        if per_slot < 1:
            raise ServewiseInputError(
                _("ctx_size {ctx_size} is smaller than parallel {parallel}: each slot needs context").format(
                  ctx_size=self.ctx_size, parallel=self.parallel)
            )
        return SchedulerSpec(
            engine=self.engine,
            max_running=self.parallel,
            max_running_knob="parallel",
            step_token_budget=self.batch_size,
            step_token_budget_knob="batch_size",
            chunked_prefill=True,
            kv_layout=KvLayout.SLOTS,
            kv_capacity_tokens=per_slot * self.parallel,
            kv_capacity_knob="ctx_size",
            slot_context_tokens=per_slot,
            admission=Admission.FREE_SLOT,
            preempt_on_kv_exhaustion=False,
            prefix_reuse=PrefixReuse.PER_SLOT if self.cache_prompt else PrefixReuse.NONE,
        )


SIMULATOR_LABEL = "llama-server"
SIMULATOR_KNOBS = (
    SimulatorKnob("ctx_size", N_("-c / --ctx-size (shared by all slots)"), "sim_llama_ctx"),
    SimulatorKnob("parallel", N_("-np / --parallel (slots)"), "sim_llama_np"),
    SimulatorKnob("batch_size", N_("-b / --batch-size"), "sim_llama_batch"),
)


def policy_from_plan(settings, plan) -> tuple[LlamaCppPolicy, None]:
    """The scheduler a llama-server plan runs with: its -np slots sharing -c, -b tokens per step."""
    return LlamaCppPolicy(ctx_size=plan.n_ctx, parallel=plan.n_seq, batch_size=plan.n_batch), None
