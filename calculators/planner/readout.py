"""How many users one instance serves within a latency target: the planner's rate search on one plan.

The memory page and the wizard show it next to each engine's memory plan: the same simulation and SLO
test the capacity planner uses, for the plan already on screen, turned into users by Little's law
(users = sustained rate x (think time + mean time to answer)). Its step times come from the speed model (the
default fit, or a team's calibration for that engine and hardware class), and the readout carries that basis
and the fit's decode band so a page can say how far to trust it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from calculators.engines import adapter
from calculators.hardware.machine import Machine
from calculators.i18n import _
from calculators.memory.plan import MemoryPlan
from calculators.model.architecture import ModelArchitecture
from calculators.planner.rate_search import search_max_rate
from calculators.planner.search import instance_speed_params, instance_step_cost
from calculators.planner.spec import SloSpec
from calculators.simulator.workload import LengthDistribution, LengthKind
from calculators.speed.calibration import CalibrationProfile
from calculators.speed.model import Band, SpeedBasis

#: Assumed pause between a user's requests when a page has no think time to offer (seconds).
DEFAULT_THINK_TIME_S = 30.0
#: Longest answer the readout assumes (tokens); shorter contexts answer with a quarter of their length.
DEFAULT_OUTPUT_TOKENS = 256


@dataclass(frozen=True)
class UsersReadout:
    """Users one instance of `engine` serves within `slo` (None with a reason when it cannot be said)."""

    engine: str
    users: int | None
    rate_per_s: float
    prompt_tokens: int
    output_tokens: int
    think_time_s: float
    slo: SloSpec
    reason: str | None = None
    #: where the simulated step times come from (None: an engine without a speed model, roofline defaults)
    basis: SpeedBasis | None = None
    #: the basis's decode band (relative error of decode rates: the fit's leave-one-out errors, or the residuals
    #: a calibration left on the team's own run)
    decode_band: Band | None = None
    #: When even a trickle missed the target: the simulated TTFT and ITL (seconds, at the SLO's percentiles) at the
    #: lowest rate tried, the figures that say which bound failed and by how much (None otherwise)
    trickle_ttft_s: float | None = None
    trickle_itl_s: float | None = None


def readout_lengths(context_tokens: int) -> tuple[int, int]:
    """(prompt, output) tokens a readout simulates for requests that fill `context_tokens`."""
    output = max(1, min(DEFAULT_OUTPUT_TOKENS, context_tokens // 4))
    return max(1, context_tokens - output), output


def users_at_slo(arch: ModelArchitecture, machine: Machine, engine_id: str, settings: BaseModel, plan: MemoryPlan,
                 weights_bytes: int, context_tokens: int, slo: SloSpec | None = None,
                 think_time_s: float = DEFAULT_THINK_TIME_S, n_requests: int = 200, seed: int = 0,
                 calibration: CalibrationProfile | None = None) -> UsersReadout:
    """Users (people pausing `think_time_s` between requests) one instance serves within `slo`, with the speed
    basis its step times used (`calibration` replaces the default fit for its own engine and hardware class)."""
    slo = slo or SloSpec()
    prompt, output = readout_lengths(context_tokens)
    engine = adapter(engine_id)
    common: dict[str, Any] = {"engine": engine_id, "prompt_tokens": prompt, "output_tokens": output,
                              "think_time_s": think_time_s, "slo": slo}
    if engine.speed is not None:
        params, basis = instance_speed_params(machine, engine, calibration)
        common.update(basis=basis, decode_band=params.decode_band)
    if engine.policy_from_plan is None:
        return UsersReadout(**common, users=None, rate_per_s=0.0,
                            reason=_("servewise has no scheduler model for this engine's server yet"))
    if plan.refusal is not None:
        return UsersReadout(**common, users=None, rate_per_s=0.0, reason=_("the engine would not start"))
    gpus = engine.devices_from_settings(settings) if engine.multi_gpu_split == "tensor" else machine.n_devices
    cost = instance_step_cost(machine, engine, gpus, weights_bytes, arch, calibration)
    if isinstance(cost, str):
        return UsersReadout(**common, users=None, rate_per_s=0.0, reason=cost)
    policy, kv_tokens = engine.policy_from_plan(settings, plan)
    running = policy.scheduler_spec(kv_tokens).max_running
    found = search_max_rate(policy, cost, kv_tokens, slo, LengthDistribution(kind=LengthKind.FIXED, value=prompt),
                            LengthDistribution(kind=LengthKind.FIXED, value=output), 0.0, n_requests, seed,
                            running, float(output))
    if found.best is None:
        trickle = min(found.probes, key=lambda point: point.rate_per_s, default=None)
        return UsersReadout(**common, users=None, rate_per_s=0.0,
                            reason=_("even a trickle of requests misses the target on this plan"),
                            trickle_ttft_s=trickle.ttft_s if trickle else None,
                            trickle_itl_s=trickle.itl_s if trickle else None)
    users = int(found.max_rate_per_s * (think_time_s + (found.best.mean_e2e_s or 0.0)))
    return UsersReadout(**common, users=users, rate_per_s=found.max_rate_per_s)
