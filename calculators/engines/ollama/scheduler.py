"""Ollama's scheduling knobs for the simulator: slots of their own, a queue limit and its scope."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from calculators.engines.base import SimulatorKnob
from calculators.engines.ollama.plan import VRAM_CONTEXT_TIERS, default_context_tokens
from calculators.hardware.machine import Machine
from calculators.i18n import N_, _
from calculators.memory.plan import PlanNote
from calculators.simulator.policy import (
    Admission,
    KvLayout,
    PrefixReuse,
    SchedulerPolicy,
    SchedulerSpec,
)
from calculators.units import GIB, compact, number, with_unit

#: Ollama's num_ctx by total VRAM, written from the tiers the plan uses (never typed twice).
CONTEXT_TIERS_TEXT = ", ".join(
    f"{tokens:,} from {with_unit(f'{threshold / GIB:g}', 'GiB')}" if threshold else f"{tokens:,} below that"
    for threshold, tokens in VRAM_CONTEXT_TIERS
)


class OllamaPolicy(SchedulerPolicy):
    """Ollama's knobs that shape queueing (defaults from ollama/ollama v0.33.0-rc2, envconfig/config.go).

    Ollama starts llama-server with `-c num_ctx*num_parallel -np num_parallel -b num_batch`
    (llm/llama_server.go), so every slot holds `context_length` tokens of its own. Without context
    shift a prompt of num_ctx tokens or more is refused (HTTP 400) and generation stops at num_ctx.
    """

    engine: Literal["ollama"] = "ollama"
    num_parallel: int = Field(default=1, gt=0, description="OLLAMA_NUM_PARALLEL: slots")
    context_length: int = Field(
        default=4096,
        gt=0,
        description=(
            f"num_ctx per slot. OLLAMA_CONTEXT_LENGTH unset picks it by total VRAM (server/routes.go): "
            f"{CONTEXT_TIERS_TEXT}, capped at the model's trained context"
        ),
    )
    num_batch: int = Field(default=512, gt=0, description="tokens per llama-server step (api/types.go)")
    max_queue: int = Field(default=512, ge=0, description="OLLAMA_MAX_QUEUE; beyond it HTTP 503")
    max_queue_applies_to_slot_wait: bool = Field(
        default=False,
        description=(
            "v0.33.0-rc2 checks OLLAMA_MAX_QUEUE only while a request waits for the scheduler "
            "(server/sched.go); with the model loaded, requests wait on the runner's num_parallel "
            "semaphore (llm/llama_server.go) without a limit. True applies the limit to that wait too."
        ),
    )

    def scheduler_spec(self, kv_capacity_tokens: int | None = None) -> SchedulerSpec:
        """Rules for Ollama; KV capacity is num_parallel x context_length (the input is not used)."""
        return SchedulerSpec(
            engine=self.engine,
            max_running=self.num_parallel,
            max_running_knob="num_parallel",
            step_token_budget=self.num_batch,
            step_token_budget_knob="num_batch",
            chunked_prefill=True,
            kv_layout=KvLayout.SLOTS,
            kv_capacity_tokens=self.num_parallel * self.context_length,
            kv_capacity_knob="context_length",
            slot_context_tokens=self.context_length,
            admission=Admission.FREE_SLOT,
            preempt_on_kv_exhaustion=False,
            prefix_reuse=PrefixReuse.PER_SLOT,
            max_queue=self.max_queue if self.max_queue_applies_to_slot_wait else None,
            max_queue_knob="max_queue",
            max_queue_unenforced=None if self.max_queue_applies_to_slot_wait else self.max_queue,
            max_queue_scope_note=("ollama_max_queue_scope", _(
                "Up to {peak} requests waited, more than `OLLAMA_MAX_QUEUE={limit}`, and none was refused: in the "
                "Ollama source read (v0.33.0-rc2) the limit only bounds requests waiting for a model to load, not "
                "for a slot. Raising it creates no replicas either.")),
            single_slot_note=PlanNote(code="ollama_single_slot", message=(
                _("Ollama ran one request at a time (`OLLAMA_NUM_PARALLEL={num_parallel}`; its default is "
                  "{default}): every other request waited its turn.").format(
                  num_parallel=self.num_parallel, default=type(self).model_fields['num_parallel'].default))),
        )


def _context_help() -> str:
    """The num_ctx knob's help, quoting Ollama's tiers by total VRAM (reader's language and number format)."""
    tiers = ", ".join(
        _("{tokens} from {gib}\u00a0GiB").format(tokens=number(tokens), gib=compact(threshold / GIB))
        if threshold else _("{tokens} below that").format(tokens=number(tokens))
        for threshold, tokens in VRAM_CONTEXT_TIERS
    )
    return _("Unset, Ollama picks it by total VRAM: {context_tiers_text}; each slot holds this much KV.").format(
        context_tiers_text=tiers)


def _context_on_gpu(gpu_memory_bytes: int, gpu_id: str | None = None) -> int:
    """num_ctx Ollama picks with OLLAMA_CONTEXT_LENGTH unset on one GPU of this size (by memory only; tokens)."""
    return default_context_tokens(Machine(device_memory_bytes=gpu_memory_bytes))


SIMULATOR_LABEL = "Ollama"
SIMULATOR_KNOBS = (
    SimulatorKnob("num_parallel", "OLLAMA_NUM_PARALLEL", "sim_ollama_np"),
    SimulatorKnob("context_length", N_("Context per slot (num_ctx)"), "sim_ollama_ctx", default_for_gpu=_context_on_gpu,
                  help=_context_help),
    SimulatorKnob("num_batch", N_("num_batch (tokens per step)"), "sim_ollama_batch"),
    SimulatorKnob("max_queue", "OLLAMA_MAX_QUEUE", "sim_ollama_queue", min_value=0),
    SimulatorKnob("max_queue_applies_to_slot_wait", N_("Apply OLLAMA_MAX_QUEUE to requests waiting for a slot"),
                  "sim_ollama_queue_slots",
                  help=N_("Ollama v0.33.0-rc2 checks it only while requests wait for a model load; turn on to see the "
                  "documented reading (HTTP 503 beyond the limit).")),
)


def policy_from_plan(settings, plan) -> tuple[OllamaPolicy, None]:
    """The scheduler an Ollama plan runs with: its slots of num_ctx tokens each and its queue limit."""
    slots = max(plan.effective_parallel, 1)
    policy = OllamaPolicy(num_parallel=slots, context_length=plan.effective_ctx_size // slots,
                          num_batch=plan.num_batch, max_queue=settings.max_queue)
    return policy, None
