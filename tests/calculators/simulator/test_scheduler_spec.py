"""SchedulerSpec refuses rules the simulator could not apply."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from calculators.engines import ENGINES
from calculators.simulator.policy import KvLayout, SchedulerSpec


def _slot_spec() -> SchedulerSpec:
    for adapter in ENGINES.values():
        if adapter.scheduler_policy is not None:
            spec = adapter.scheduler_policy().scheduler_spec(100_000)
            if spec.kv_layout is KvLayout.SLOTS:
                return spec
    raise AssertionError("no engine in the registry schedules with slots")


def test_a_slot_layout_needs_each_slots_context():
    spec = _slot_spec()
    assert spec.slot_context_tokens is not None
    with pytest.raises(ValidationError, match="slot_context_tokens"):
        SchedulerSpec(**{**spec.model_dump(), "slot_context_tokens": None})
