"""The simulator's engines: every registered engine with a scheduler policy, then the static baseline."""

from __future__ import annotations

from calculators.engines import ENGINES
from calculators.errors import ServewiseInputError
from calculators.i18n import _
from calculators.simulator.policy import STATIC_BASELINE, SchedulerPolicy, StaticBatchPolicy

_POLICIES: dict[str, type[SchedulerPolicy]] = {
    **{engine.id: engine.scheduler_policy for engine in ENGINES.values() if engine.scheduler_policy is not None},
    STATIC_BASELINE: StaticBatchPolicy,
}
#: Engine ids the simulator knows, in the order pages list them.
SIMULATED_ENGINES: tuple[str, ...] = tuple(_POLICIES)


def default_policy(engine: str) -> SchedulerPolicy:
    """The policy an engine runs with when no knob is changed."""
    try:
        return _POLICIES[engine]()
    except KeyError:
        raise ServewiseInputError(_("unknown engine {engine!r}; choose one of {simulated_engines}").format(
                                    engine=engine, simulated_engines=', '.join(SIMULATED_ENGINES))) from None


