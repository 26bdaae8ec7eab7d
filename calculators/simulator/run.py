"""Entry point: simulate one engine policy on one workload."""

from __future__ import annotations

from dataclasses import replace

from calculators.simulator.core import _Run
from calculators.simulator.notes import explain
from calculators.simulator.policy import SchedulerPolicy
from calculators.simulator.results import SimulationResult, Slo, StepTrace
from calculators.simulator.roofline import StepCostModel
from calculators.simulator.workload import RequestSet, WorkloadSpec, draw_requests


def simulate(
    workload: WorkloadSpec,
    policy: SchedulerPolicy,
    cost: StepCostModel,
    kv_capacity_tokens: int | None = None,
    slo: Slo | None = None,
    requests: RequestSet | None = None,
) -> SimulationResult:
    """Simulate `policy` serving `workload`; KV capacity in tokens (pool engines), times in seconds.

    Pass `requests` (from `draw_requests(workload)`) to reuse one draw across several engines.
    Deterministic: the same inputs give the same result.
    """
    spec = policy.scheduler_spec(kv_capacity_tokens)
    run = _Run(spec, cost, workload, requests or draw_requests(workload), slo or Slo())
    run.run()
    result = run.result()
    return replace(result, notes=explain(result, spec, workload))


def simulate_steps(
    workload: WorkloadSpec,
    policy: SchedulerPolicy,
    cost: StepCostModel,
    kv_capacity_tokens: int | None = None,
    requests: RequestSet | None = None,
) -> tuple[SimulationResult, list[StepTrace]]:
    """`simulate`, stepping one step at a time, with every step's trace (who decoded, handed over, prefilled).

    For checking a scheduler's step order against the engine's own; decode-then-prefill engines only
    (SchedulerSpec.decode_then_prefill), the others' loop keeps no trace.
    """
    spec = policy.scheduler_spec(kv_capacity_tokens)
    if not spec.decode_then_prefill:
        raise ValueError(f"{spec.engine}: step traces are kept for decode-then-prefill schedulers only")
    run = _Run(spec, cost, workload, requests or draw_requests(workload), Slo())
    run.trace = []
    run.run()
    result = run.result()
    return replace(result, notes=explain(result, spec, workload)), run.trace
