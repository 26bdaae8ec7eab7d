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


def policy_for_gpu(engine: str, gpu_memory_bytes: int | None, gpu_id: str | None = None) -> SchedulerPolicy:
    """The policy an engine runs with on one GPU of `gpu_memory_bytes` (catalog id `gpu_id`, which some rules read:
    vLLM's A100 row) when no knob is changed: the default, with every knob the engine sizes by the GPU set by its rule
    (`SimulatorKnob.default_for_gpu`, the rule the engine's memory plan applies; none when the memory is unknown)."""
    policy = default_policy(engine)
    adapter = ENGINES.get(engine)
    if adapter is None or gpu_memory_bytes is None:
        return policy
    by_gpu = {knob.field: knob.default_for_gpu(gpu_memory_bytes, gpu_id) for knob in adapter.simulator_knobs
              if knob.default_for_gpu is not None}
    return policy.model_copy(update=by_gpu) if by_gpu else policy
