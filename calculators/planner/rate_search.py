"""The highest arrival rate one engine instance sustains within an SLO: simulate, then bisect on the rate.

Every rate is simulated on the same drawn requests (the same seed: arrival times scale exactly as
1/rate), so a higher rate is the same traffic compressed in time. A run fails the SLO when a latency
percentile is over its bound, too many requests fail, the queue is still growing at the end of the
run (late requests wait much longer than early ones: the load is above what the engine drains), or an engine
that admits without checking memory held more KV than fits (it would swap or fail).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from calculators.planner.spec import SloSpec
from calculators.simulator.policy import SchedulerPolicy
from calculators.simulator.results import RequestStatus, Slo
from calculators.simulator.roofline import StepCostModel
from calculators.simulator.run import simulate
from calculators.simulator.workload import ArrivalProcess, LengthDistribution, WorkloadSpec

#: Bisection steps in log-rate: the bracket shrinks to (high/low)^(1/2^steps), about 5 % from a 1000x bracket.
BISECTION_STEPS = 7
#: A run whose last quarter waits this many times longer (median TTFT) than its first quarter is overloaded.
GROWTH_FACTOR = 2.0


@dataclass(frozen=True)
class RatePoint:
    """One simulated rate for one instance (requests/s, seconds, share of requests, tokens/s)."""

    rate_per_s: float
    ttft_s: float | None  # at the SLO's TTFT percentile
    itl_s: float | None  # at the SLO's ITL percentile
    failed_share: float
    queue_growing: bool
    meets: bool
    output_tokens_per_s: float
    mean_e2e_s: float | None
    kv_overflow: bool = False  # the cache outgrew its capacity (an engine that admits without a memory check)


@dataclass(frozen=True)
class RateSearch:
    """Result of the bisection: the best passing rate (0 when even the lowest fails) and every probe."""

    max_rate_per_s: float
    best: RatePoint | None
    probes: tuple[RatePoint, ...]
    upper_bound_per_s: float


def percentile(values: list[float], pct: float) -> float | None:
    """Nearest-rank percentile (pct in 0..100) of `values`, or None when there are none."""
    if not values:
        return None
    ordered = sorted(values)
    rank = max(1, math.ceil(pct / 100.0 * len(ordered)))
    return ordered[min(rank, len(ordered)) - 1]


def throughput_upper_bound_per_s(cost: StepCostModel, max_running: int, mean_output_tokens: float) -> float:
    """Requests/s one instance could finish at most: decode-only steps of `max_running` sequences, no KV read."""
    step = cost.step_seconds(max_running, 0.0)
    return max_running / (max(mean_output_tokens, 1.0) * step) if step > 0 else math.inf


def evaluate_rate(policy: SchedulerPolicy, cost: StepCostModel, kv_tokens: int | None, slo: SloSpec, rate_per_s: float,
                  prompt: LengthDistribution, output: LengthDistribution, shared_prefix_fraction: float,
                  n_requests: int, seed: int) -> RatePoint:
    """Simulate one instance at `rate_per_s` (Poisson arrivals) and judge it against `slo`."""
    workload = WorkloadSpec(n_requests=n_requests, arrival=ArrivalProcess.POISSON, rate_per_s=rate_per_s,
                            prompt=prompt, output=output, shared_prefix_fraction=shared_prefix_fraction, seed=seed)
    result = simulate(workload, policy, cost, kv_tokens, Slo(ttft_s=slo.ttft_s, itl_s=slo.itl_s))
    records = result.records
    ttfts = [r.ttft_s for r in records if r.ttft_s is not None]
    itls = [r.itl_s for r in records if r.itl_s is not None]
    failed = sum(1 for r in records if r.status is not RequestStatus.FINISHED)
    ttft = percentile(ttfts, slo.ttft_percentile)
    itl = percentile(itls, slo.itl_percentile)
    failed_share = failed / len(records) if records else 1.0
    growing = _queue_growing(records, slo)
    e2es = [r.e2e_s for r in records if r.e2e_s is not None]
    overflow = result.diagnostics.kv_overflow_tokens > 0
    meets = (ttft is not None and ttft <= slo.ttft_s and (itl is None or itl <= slo.itl_s)
             and failed_share <= slo.max_failed_share and not growing and not overflow)
    return RatePoint(rate_per_s=rate_per_s, ttft_s=ttft, itl_s=itl, failed_share=failed_share,
                     queue_growing=growing, meets=meets, output_tokens_per_s=result.summary.output_tokens_per_s,
                     mean_e2e_s=sum(e2es) / len(e2es) if e2es else None, kv_overflow=overflow)


def _queue_growing(records: list, slo: SloSpec) -> bool:
    """True when the last quarter's median TTFT is GROWTH_FACTOR x the first quarter's and material vs the bound."""
    quarter = len(records) // 4
    if quarter < 5:
        return False
    first = [r.ttft_s for r in records[:quarter] if r.ttft_s is not None]
    last = [r.ttft_s for r in records[-quarter:] if r.ttft_s is not None]
    if not first or not last:
        return bool(first) and not last
    early, late = percentile(first, 50), percentile(last, 50)
    assert early is not None and late is not None
    return late > GROWTH_FACTOR * early and late > 0.5 * slo.ttft_s


def search_max_rate(policy: SchedulerPolicy, cost: StepCostModel, kv_tokens: int | None, slo: SloSpec,
                    prompt: LengthDistribution, output: LengthDistribution, shared_prefix_fraction: float,
                    n_requests: int, seed: int, max_running: int, mean_output_tokens: float) -> RateSearch:
    """Bisect (in log-rate) for the highest Poisson rate one instance serves within `slo` (requests/s)."""
    high = throughput_upper_bound_per_s(cost, max_running, mean_output_tokens)
    high = min(high, 1e5)
    low = high / 1024.0
    probes: list[RatePoint] = []

    def probe(rate: float) -> RatePoint:
        point = evaluate_rate(policy, cost, kv_tokens, slo, rate, prompt, output, shared_prefix_fraction,
                              n_requests, seed)
        probes.append(point)
        return point

    lowest = probe(low)
    if not lowest.meets:
        return RateSearch(0.0, None, tuple(probes), high)
    best = lowest
    top = probe(high)
    if top.meets:
        return RateSearch(high, top, tuple(probes), high)
    for _unused in range(BISECTION_STEPS):
        middle = math.sqrt(low * high)
        point = probe(middle)
        if point.meets:
            low, best = middle, point
        else:
            high = middle
    return RateSearch(low, best, tuple(probes), high)
