"""Closed loop against open loop: the queue a closed-loop client hides."""

from __future__ import annotations

from calculators.errors import ServewiseInputError
from calculators.i18n import _
from calculators.simulator.results import SimulationResult
from calculators.simulator.workload import ArrivalProcess, WorkloadSpec


def open_loop_twin(workload: WorkloadSpec, closed: SimulationResult) -> WorkloadSpec:
    """The open-loop workload that sends the closed loop's requests at its mean rate (requests per second).

    A closed-loop client only asks again after an answer, so a slow server slows the demand down.
    Independent users arriving at the same mean rate (Poisson) do not wait for anyone.
    """
    if workload.arrival is not ArrivalProcess.CLOSED:
        raise ServewiseInputError(_("the open-loop twin is defined for a closed-loop workload"))
    summary = closed.summary
    if summary.duration_s <= 0:
        raise ServewiseInputError(_("the closed-loop run took no time; there is no rate to replay"))
    return workload.model_copy(
        update={"arrival": ArrivalProcess.POISSON, "rate_per_s": summary.n_requests / summary.duration_s}
    )
