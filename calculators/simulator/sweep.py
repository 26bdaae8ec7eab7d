"""Sweep of the open-loop arrival rate: where each engine's goodput saturates and its p99 TTFT climbs."""

from __future__ import annotations

from dataclasses import dataclass

from calculators.simulator.policy import SchedulerPolicy
from calculators.simulator.results import Slo
from calculators.simulator.roofline import StepCostModel
from calculators.simulator.run import simulate
from calculators.simulator.workload import ArrivalProcess, WorkloadSpec, draw_requests


@dataclass(frozen=True, slots=True)
class SweepPoint:
    """One engine at one arrival rate (requests per second; seconds)."""

    engine: str
    rate_per_s: float
    goodput_rps: float
    throughput_rps: float
    p99_ttft_s: float | None
    n_rejected: int
    n_cancelled: int


def sweep_arrival_rates(
    workload: WorkloadSpec,
    engines: dict[str, tuple[SchedulerPolicy, int | None]],
    cost: StepCostModel,
    rates_per_s: list[float],
    slo: Slo | None = None,
) -> list[SweepPoint]:
    """Goodput and p99 TTFT per engine and Poisson arrival rate; `engines` maps a label to (policy, KV tokens).

    Every engine sees the same requests at a given rate (one draw per rate).
    """
    points: list[SweepPoint] = []
    for rate in rates_per_s:
        spec = workload.model_copy(update={"arrival": ArrivalProcess.POISSON, "rate_per_s": rate})
        WorkloadSpec.checked(**spec.model_dump())
        requests = draw_requests(spec)
        for label, (policy, kv_capacity) in engines.items():
            result = simulate(spec, policy, cost, kv_capacity, slo, requests)
            s = result.summary
            points.append(SweepPoint(
                engine=label,
                rate_per_s=rate,
                goodput_rps=s.goodput_rps,
                throughput_rps=s.throughput_rps,
                p99_ttft_s=s.ttft.p99 if s.ttft else None,
                n_rejected=s.n_rejected,
                n_cancelled=s.n_cancelled,
            ))
    return points
