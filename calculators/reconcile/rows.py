"""What every engine's reconciliation rows are built from: the run's inputs, the builder's outcome, helpers.

Each engine's builder (`calculators/engines/<engine>/reconcile.py`) runs that engine's plan on the log's own
settings and printed inputs, then judges every figure the plan predicts (`reconcile.result.judge`). Figures
the plan does not predict are passed through as `not_compared`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Generic, TypeVar

from pydantic import BaseModel

from calculators.hardware.machine import Machine
from calculators.i18n import _
from calculators.model.architecture import ModelArchitecture
from calculators.reconcile.log.figures import Figure, ParsedLog
from calculators.reconcile.result import Prediction, ReconcileRow
from calculators.units import GIB

# Stand-in device size when neither the log nor the user gives one; it only picks engine defaults
# (vLLM batch limits, SGLang chunk sizes), never a compared figure's budget.
_DEFAULT_DEVICE_BYTES = 80 * GIB

#: The engine's Settings model (check.validated_settings builds it from the engine's settings_type).
SettingsT = TypeVar("SettingsT", bound=BaseModel)


@dataclass
class EngineRun(Generic[SettingsT]):
    """The inputs of one reconciliation."""

    parsed: ParsedLog
    arch: ModelArchitecture
    settings: SettingsT
    machine: Machine | None


@dataclass
class Outcome(Generic[SettingsT]):
    """What a builder returns: rows, the figures it left alone, and what it assumed."""

    settings: SettingsT
    rows: list[ReconcileRow] = field(default_factory=list)
    not_compared: list[Figure] = field(default_factory=list)
    assumptions: list[str] = field(default_factory=list)
    plan_notes: list[str] = field(default_factory=list)
    refusal: str | None = None


def point(value: int | float, basis: str) -> Prediction:
    return Prediction(low=value, high=value, basis=basis)


def unused_figures(parsed: ParsedLog, used: list[Figure]) -> list[Figure]:
    """Figures not compared; a figure every worker reprinted with the same value counts as compared."""
    seen = {(f.name, f.cache, f.printed) for f in used}
    return [f for f in parsed.figures if (f.name, f.cache, f.printed) not in seen]


def _ranks(settings: BaseModel) -> int:
    """GPUs one instance spans by its own parallelism settings (TP x PP x DP)."""
    n = 1
    keys = ("tensor_parallel_size", "pipeline_parallel_size", "data_parallel_size", "tp_size", "pp_size", "dp_size")
    for key in keys:
        n *= int(getattr(settings, key, 1) or 1)
    return n


def run_machine(run: EngineRun, total_bytes: int | None, assumptions: list[str], why: str) -> Machine:
    """The given machine, else one of the log's printed device size, else an 80 GiB stand-in (noted)."""
    n_devices = _ranks(run.settings)
    if run.machine is not None:
        return run.machine if run.machine.n_devices >= n_devices else run.machine.model_copy(
            update={"n_devices": n_devices})
    if total_bytes:
        return Machine(device_memory_bytes=total_bytes, n_devices=n_devices)
    assumptions.append(_("no GPU given: servewise assumed an 80\u00a0GiB device ({why})").format(why=why))
    return Machine(device_memory_bytes=_DEFAULT_DEVICE_BYTES, n_devices=n_devices)



def first_figure(parsed: ParsedLog, name: str) -> Figure | None:
    """The first print of a per-worker figure (every worker prints the same numbers)."""
    found = parsed.figures_named(name)
    return found[0] if found else None


def setting_from_figure(out: Outcome[SettingsT], key: str, figure: Figure | None, where: str) -> SettingsT:
    """out.settings with `key` taken from a printed figure when the settings leave it unset (noted)."""
    if getattr(out.settings, key) is None and figure is not None:
        out.settings = out.settings.model_copy(update={key: int(figure.value)})
        out.assumptions.append(_("{key} {value} read from {where}").format(
                                 key=key, value=int(figure.value), where=where))
    return out.settings


