"""Plain-language notes tying a simulation result back to the knobs that shaped it."""

from __future__ import annotations

from calculators.i18n import N_, _, ngettext
from calculators.memory.plan import PlanNote
from calculators.simulator.policy import KvLayout, SchedulerSpec
from calculators.simulator.results import (
    QUEUE_NEGLIGIBLE_SHARE,
    Constraint,
    RejectReason,
    RequestStatus,
    SimulationResult,
)
from calculators.simulator.workload import ArrivalProcess, WorkloadSpec
from calculators.units import compact, number, percent


def explain(result: SimulationResult, spec: SchedulerSpec, workload: WorkloadSpec) -> list[PlanNote]:
    """Notes for a page: which limit bound, what a knob change would or would not do, what was refused."""
    d = result.diagnostics
    s = result.summary
    notes = [PlanNote(code="estimate", message=_("All figures are estimates from a roofline step time and the "
                      "engine's scheduling rules, not measurements."))]
    share = d.queued_time_s / s.duration_s if s.duration_s > 0 else 0.0
    knob = f"`{d.max_running_knob}`"  # setting names as code spans: a page never breaks them at a hyphen
    if d.binding is Constraint.NONE:
        notes.append(PlanNote(code="no_binding_limit", message=(
            _("Requests rarely waited (queue non-empty {share} of the run): no configured limit bound; "
              "latency comes from step time. Raising limits would not change much at this load.").format(
                  share=percent(share)))))
    elif d.binding is Constraint.MAX_RUNNING:
        msg = ngettext("Requests queued because {max_running} running place ({knob}) was taken ({blocked} of "
                       "queued time).",
                       "Requests queued because all {max_running} running places ({knob}) were taken ({blocked} of "
                       "queued time).", d.max_running).format(
                           max_running=number(d.max_running), knob=knob,
                           blocked=percent(_blocked_share(d, Constraint.MAX_RUNNING)))
        if spec.kv_layout is KvLayout.POOL and d.kv_concurrency_estimate < d.max_running * 1.5:
            msg += " " + _("KV capacity holds about {requests} average requests, so raising {knob} far beyond "
                           "that would soon make KV the limit instead.").format(
                               requests=number(d.kv_concurrency_estimate), knob=knob)
        else:
            msg += " " + _("Raising {knob} admits more requests at once (each step gets longer as the batch "
                           "grows).").format(knob=knob)
        if spec.kv_layout is KvLayout.SLOTS and spec.kv_capacity_knob == "ctx_size":
            msg += " " + _("With `-c` unchanged every slot's share of it shrinks (`ctx_size` / `parallel`): "
                           "raise both.")
        elif spec.kv_layout is KvLayout.SLOTS:
            msg += " " + _("Each extra slot reserves another {tokens}\u00a0tokens of KV memory.").format(
                tokens=number(spec.slot_context_tokens or 0))
        notes.append(PlanNote(code="binding_max_running", message=msg))
    elif d.binding is Constraint.KV_CAPACITY:
        notes.append(PlanNote(code="binding_kv_capacity", message=(
            _("KV capacity is the binding constraint: requests waited for free KV ({blocked_share} of "
              "queued time) while at most {peak_active} of {max_running} allowed sequences ran. Raising "
              "{knob} would not help; more KV ({kv_capacity_knob}, a smaller KV cache type, another "
              "replica) or shorter requests would.").format(
              blocked_share=percent(_blocked_share(d, Constraint.KV_CAPACITY)),
              peak_active=d.peak_active,
              max_running=d.max_running,
              knob=knob,
              kv_capacity_knob=f"`{d.kv_capacity_knob}`"))))
    elif d.binding is Constraint.TOKEN_BUDGET:
        notes.append(PlanNote(code="binding_token_budget", message=(
            _("The step token budget ({step_token_budget_knob} = {step_token_budget}) held the queue: "
              "decodes and other prefills used it up. A larger budget admits prompts sooner but makes each "
              "step longer, which raises inter-token latency for running requests.").format(
              step_token_budget_knob=f"`{d.step_token_budget_knob}`", step_token_budget=d.step_token_budget))))
    elif d.binding is Constraint.STATIC_BATCH:
        notes.append(PlanNote(code="binding_static_batch", message=(
            _("Static batching: arrivals wait until the whole previous batch has finished, even when most of "
            "its sequences are done. Iteration-level scheduling lets them join at the next step."))))
    elif d.binding is Constraint.PREFILL_SLOTS:
        notes.append(PlanNote(code="binding_prefill_slots", message=_(
            "Requests queued because {limit} prompts were already being processed ({knob}), "
            "{share} of queued time: raising it lets more prompts start together (each prompt pass gets "
            "longer).").format(limit=spec.max_prefilling, knob=f"`{spec.max_prefilling_knob}`",
                               share=percent(_blocked_share(d, Constraint.PREFILL_SLOTS)))))
    if d.kv_overflow_tokens > 0 and spec.kv_overflow_note is not None:
        code, message = spec.kv_overflow_note
        notes.append(PlanNote(code=code, message=message.format(capacity=number(spec.kv_capacity_tokens or 0),
                                                                peak=number(d.peak_kv_used_tokens))))
    if d.n_preemptions:
        notes.append(PlanNote(code="preemptions", message=(
            _("{n_preemptions} preemptions: KV ran out as sequences grew, so the newest running requests "
              "were evicted and later recomputed their prompt and generated tokens. A concurrency limit "
              "above what KV can sustain is not productive capacity.").format(n_preemptions=d.n_preemptions))))
    if d.decode_stall_s > 0.05 * s.duration_s and s.duration_s > 0:
        notes.append(PlanNote(code="decode_stalls", message=(
            _("Prefill batches ran on their own for {decode_stall_s} of the run while other sequences "
              "were waiting to decode: prefill-first scheduling shortens time to first token and lengthens "
              "inter-token latency (SGLang's `--enable-mixed-chunk` puts both in one step).").format(
              decode_stall_s=percent(d.decode_stall_s / s.duration_s)))))
    if d.eager_decode_steps and spec.graph_max_batch is not None:
        msg = ngettext(
            "{eager} of {steps} decode step ran without a CUDA graph: its batch was above {knob} = {cap}, so the "
            "host launched every kernel of the forward pass.",
            "{eager} of {steps} decode steps ran without a CUDA graph: their batch was above {knob} = {cap}, so the "
            "host launched every kernel of the forward pass.", d.decode_steps).format(
                eager=number(d.eager_decode_steps), steps=number(d.decode_steps),
                knob=f"`{spec.graph_max_batch_knob}`", cap=number(spec.graph_max_batch))
        if d.eager_step_floor_s > 0:
            msg += " " + _("Such a step takes at least {floor}\u00a0ms here (the host's launch time), and a slower "
                           "step keeps more requests running, so a run that crosses the cap tends to stay above it. A "
                           "larger cap keeps bigger batches on graphs at the cost of some GPU memory.").format(
                               floor=compact(d.eager_step_floor_s * 1000, 1))
        notes.append(PlanNote(code="eager_decode_steps", message=msg))
    if spec.max_running == 1 and spec.single_slot_note is not None and share >= QUEUE_NEGLIGIBLE_SHARE:
        notes.append(spec.single_slot_note)
    peak_queued = max(result.timeseries.queued, default=0)
    if spec.max_queue_unenforced is not None and peak_queued > spec.max_queue_unenforced and spec.max_queue_scope_note:
        code, message = spec.max_queue_scope_note
        notes.append(PlanNote(code=code, message=message.format(peak=peak_queued, limit=spec.max_queue_unenforced)))
    reasons = [r.reject_reason for r in result.records if r.status is RequestStatus.REJECTED]
    for reason, text in (
        (RejectReason.QUEUE_FULL, N_("rejected because the queue was full (max_queue; Ollama answers HTTP 503)")),
        (RejectReason.EXCEEDS_CONTEXT, N_("rejected: prompt (+ output) longer than the context limit")),
        (RejectReason.EXCEEDS_KV, N_("rejected: prompt + output larger than the whole KV capacity")),
        (
            RejectReason.EXCEEDS_TOKEN_BUDGET,
            N_("rejected: prompt + output above the step token budget, which without "
               "chunked prefill caps the request length"),
        ),
    ):
        count = reasons.count(reason)
        if count:
            notes.append(PlanNote(code=f"rejected_{reason.value}", message=_("{count} requests {text}.").format(
                count=count, text=_(text))))
    truncated = sum(1 for r in result.records if r.truncated)
    if truncated:
        notes.append(PlanNote(code="truncated", message=(
            _("{truncated} answers stopped at the slot's context limit ({slot_context_tokens}\u00a0tokens per "
              "slot): a slot gets its share of the context, not the whole ctx-size.").format(
              truncated=truncated, slot_context_tokens=spec.slot_context_tokens))))
    if s.n_cancelled:
        notes.append(PlanNote(code="cancelled", message=(
            _("{n_cancelled} requests were cancelled after {cancel_after_s}\u00a0s without a first token; the "
              "engine freed their queue place and KV.").format(
              n_cancelled=s.n_cancelled, cancel_after_s=compact(workload.cancel_after_s or 0, 3)))))
    if workload.arrival is ArrivalProcess.CLOSED:
        notes.append(PlanNote(code="closed_loop", message=(
            _("Closed loop: {n_clients} clients each wait for their answer before asking again, so demand "
              "drops as the server slows down. This hides the queue that the same demand arriving "
              "independently (open loop) would build; compare with a Poisson rate.").format(
              n_clients=workload.n_clients))))
    hits = sum(r.prefix_hit_tokens for r in result.records)
    prompts = sum(r.prompt_tokens for r in result.records if r.admit_s is not None)
    if hits and prompts:
        notes.append(PlanNote(code="prefix_cache", message=(
            _("The prefix cache served {hits} of admitted prompt tokens without prefill (only "
              "token-identical prefixes count).").format(hits=percent(hits / prompts)))))
    return notes


def _blocked_share(d, constraint: Constraint) -> float:
    return d.blocked_time_s[constraint] / d.queued_time_s if d.queued_time_s > 0 else 0.0
