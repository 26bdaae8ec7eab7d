"""Concurrency and queueing simulator: how each engine's scheduler turns a workload into latencies.

`simulate()` runs one engine policy on one workload with a roofline step-time estimate and returns
per-request records, latency distributions, time series and binding-constraint diagnostics.
Every figure is an estimate, not a measurement.
"""

from __future__ import annotations

from calculators.simulator.checked import checked
from calculators.simulator.core import summarize
from calculators.simulator.loops import open_loop_twin
from calculators.simulator.policy import (
    SIMULATED_ENGINES,
    EnginePolicy,
    LlamaCppPolicy,
    OllamaPolicy,
    SchedulerSpec,
    SglangPolicy,
    StaticBatchPolicy,
    VllmPolicy,
    default_policy,
)
from calculators.simulator.results import (
    Constraint,
    Diagnostics,
    Distribution,
    RejectReason,
    RequestRecord,
    RequestStatus,
    SimulationResult,
    Slo,
    Summary,
    TimeSeries,
)
from calculators.simulator.roofline import StepCostModel
from calculators.simulator.run import simulate
from calculators.simulator.sweep import SweepPoint, sweep_arrival_rates
from calculators.simulator.workload import (
    ArrivalProcess,
    LengthDistribution,
    LengthKind,
    RequestSet,
    WorkloadSpec,
    draw_requests,
    parse_length_pairs_csv,
)

__all__ = [
    "SIMULATED_ENGINES",
    "ArrivalProcess",
    "Constraint",
    "Diagnostics",
    "Distribution",
    "EnginePolicy",
    "LengthDistribution",
    "LengthKind",
    "LlamaCppPolicy",
    "OllamaPolicy",
    "RejectReason",
    "RequestRecord",
    "RequestSet",
    "RequestStatus",
    "SchedulerSpec",
    "SglangPolicy",
    "SimulationResult",
    "Slo",
    "StaticBatchPolicy",
    "StepCostModel",
    "Summary",
    "SweepPoint",
    "TimeSeries",
    "VllmPolicy",
    "WorkloadSpec",
    "checked",
    "default_policy",
    "draw_requests",
    "open_loop_twin",
    "parse_length_pairs_csv",
    "simulate",
    "summarize",
    "sweep_arrival_rates",
]
