"""The memory page's heavy part, memoised per input state: every engine's plan, capacities and curves.

One state costs about two hundred engine plans (capacity searches probe each engine many times), so
the result is cached on its inputs and the reader's language (plans carry translated notes); a rerun that
changes nothing relevant (an expander, a download, another section's widget) reuses it, and any changed
input or language computes afresh.
"""

from __future__ import annotations

import json

from calculators.engines import ENGINE_IDS
from calculators.memory.capacity import capacity, capacity_curve
from calculators.memory.compare import ComparisonInputs, compare_engines
from calculators.planner.readout import UsersReadout, readout_lengths, users_at_slo
from calculators.speed.calibration import CalibrationProfile
from calculators.speed.command import plan_speed
from calculators.speed.predict import SpeedEstimate
from knowledge.loader import load_knowledge
from reports.memory_figures import capacity_chart_svg, memory_bars_svg
from ui.state_cache import per_input_state


def _inputs_key(inputs: ComparisonInputs) -> tuple:
    """A cheap cache key: the architecture and machine are frozen and hash themselves (layer hashes are cached)."""
    overrides = json.dumps(inputs.overrides, sort_keys=True, default=str)
    return (hash(inputs.arch), hash(inputs.machine), inputs.weights_bytes, overrides, hash(inputs.draft))


@per_input_state(max_entries=64, hash_funcs={ComparisonInputs: _inputs_key})
def analyse(inputs: ComparisonInputs, workload, sequences_limit: int, contexts: tuple[int, ...], curve_limit: int):
    """Side-by-side plans, per-engine capacity and capacity curves for one input state."""
    rows = analyse_rows(inputs, workload)
    capacities = [capacity(inputs, engine, workload, sequences_limit) for engine in ENGINE_IDS]
    curves = [capacity_curve(inputs, engine, workload, list(contexts), curve_limit) for engine in ENGINE_IDS]
    return rows, capacities, curves


@per_input_state(max_entries=64, copy=False, hash_funcs={ComparisonInputs: _inputs_key})
def figures(inputs: ComparisonInputs, workload, sequences_limit: int, contexts: tuple[int, ...], curve_limit: int):
    """The side-by-side bars and the capacity chart of `analyse`'s result, as SVG markup (memoised per input
    state and language like `analyse`; strings, so sessions share them)."""
    rows, _, curves = analyse(inputs, workload, sequences_limit, contexts, curve_limit)
    return memory_bars_svg(rows), capacity_chart_svg(curves, workload.context_tokens)


@per_input_state(max_entries=64, hash_funcs={ComparisonInputs: _inputs_key})
def users_readouts(inputs: ComparisonInputs, workload,
                   calibration: CalibrationProfile | None = None) -> list[UsersReadout]:
    """Users one instance of each engine's plan serves within the planner's default SLO (a few hundred
    simulated requests per engine, so memoised per input state like `analyse`); a calibration replaces the
    default fit for its own engine and hardware class."""
    readouts = []
    for row in analyse_rows(inputs, workload):
        if row.plan is None or row.settings is None or inputs.weights_bytes is None:
            continue
        readouts.append(users_at_slo(inputs.arch, inputs.machine, row.engine, row.settings, row.plan,
                                     inputs.weights_bytes, workload.context_tokens, calibration=calibration))
    return readouts


@per_input_state(max_entries=64, hash_funcs={ComparisonInputs: _inputs_key})
def analyse_rows(inputs: ComparisonInputs, workload):
    """The side-by-side plans alone, memoised once per input state for `analyse` and the readouts."""
    return compare_engines(inputs, workload)


def speed_readouts(inputs: ComparisonInputs, workload,
                   calibration: CalibrationProfile | None = None) -> list[tuple[str, SpeedEstimate | str]]:
    """(engine, speed estimate or why there is none) for every engine plan above; the speed model is closed
    form, so only the plans are memoised (shared with the users readout)."""
    kb = load_knowledge()
    prompt_tokens, _ = readout_lengths(workload.context_tokens)
    return [(row.engine, plan_speed(row.engine, row.settings, row.plan, inputs.machine, inputs.arch,
                                    inputs.weights_bytes, kb, prompt_tokens, calibration))
            for row in analyse_rows(inputs, workload) if row.plan is not None and row.settings is not None]
