"""Capacity planner: the cheapest configuration that meets a latency target, per engine, with its cost.

A `PlannerSpec` (model, weight options, workload, SLO, hardware that may be used, engines, prices) is
searched over engine x accelerator x GPUs per instance (tensor parallel where the engine splits that
way) x replicas x weights x KV cache type x the engine's concurrency knob. Configurations that do not
fit are dropped by their memory plans; the rest are simulated, and each one's highest arrival rate
meeting the SLO is found by bisection. Every figure is an estimate to verify with the benchmark plan
before buying.
"""

from calculators.planner.cost import CostBreakdown, cost_of
from calculators.planner.search import plan_capacity
from calculators.planner.spec import (
    CostBasis,
    HardwareOption,
    LoadSpec,
    OnPremisesCost,
    PlannerSpec,
    SloSpec,
    default_spec,
)

__all__ = [
    "CostBasis",
    "CostBreakdown",
    "HardwareOption",
    "LoadSpec",
    "OnPremisesCost",
    "PlannerSpec",
    "SloSpec",
    "cost_of",
    "default_spec",
    "plan_capacity",
]
