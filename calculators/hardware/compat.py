"""One answer per engine x format x hardware: the formats-matrix cell read for the team's machine.

The Formats page, the Engines page and the wizard all ask this module, so they cannot disagree. A cell
that depends on the hardware (knowledge.formats.HardwarePath) is read for the backends the engine runs
on for the chosen vendor, and, when a catalog GPU is named, for its compute capability or gfx target.
"""

from __future__ import annotations

from dataclasses import dataclass

from calculators.errors import ServewiseInputError
from calculators.i18n import _
from knowledge.engines import USABLE_STATUSES, VENDOR_BACKENDS
from knowledge.formats import CompatStatus, HardwareVerdict


@dataclass(frozen=True)
class HardwareChoice:
    """The machine a compatibility answer is for: a vendor ("nvidia", "amd", "intel", "apple", "cpu"), or
    a catalog GPU id (which implies its vendor and generation), or neither (any hardware)."""

    vendor: str | None = None
    gpu_id: str | None = None


def _gpu(kb, gpu_id: str):
    gpu = next((g for g in kb.gpus.all_gpus if g.id == gpu_id), None)
    if gpu is None:
        raise ServewiseInputError(_("no GPU '{gpu_id}' in the catalog").format(gpu_id=gpu_id))
    return gpu


def engine_backends(engine, vendor: str) -> tuple[str, ...]:
    """The backends that drive `vendor`'s hardware and that the engine runs on (all of them if it runs none)."""
    candidates = VENDOR_BACKENDS[vendor]
    usable = tuple(b for b in candidates if engine.hardware.status_of(b) in USABLE_STATUSES)
    return usable or candidates


def format_verdict(kb, engine_id: str, column_id: str, choice: HardwareChoice = HardwareChoice()) -> HardwareVerdict:
    """The matrix cell for engine x column on the chosen hardware (status, path, refusal, source)."""
    cell = kb.formats.cell(engine_id, column_id)
    if cell is None:
        raise ServewiseInputError(_("the formats matrix has no cell {engine_id}/{column_id}").format(
                                    engine_id=engine_id, column_id=column_id))
    vendor, cc, arch = choice.vendor, None, None
    if choice.gpu_id is not None:
        gpu = _gpu(kb, choice.gpu_id)
        vendor = gpu.vendor
        if gpu.generation is not None:
            cc, arch = gpu.generation.compute_capability, gpu.generation.gpu_arch
    if vendor is None:
        return cell.on_hardware(None)
    engine = next((e for e in kb.engines if e.id == engine_id), None)
    backends = engine_backends(engine, vendor) if engine is not None else VENDOR_BACKENDS[vendor]
    return cell.on_hardware(backends, compute_capability=cc, gpu_arch=arch)


def matrix_on_hardware(kb, choice: HardwareChoice = HardwareChoice()) -> dict[tuple[str, str], HardwareVerdict]:
    """Every cell of the matrix read for one machine, keyed by (engine id, column id)."""
    return {
        (cell.engine, cell.target): format_verdict(kb, cell.engine, cell.target, choice) for cell in kb.formats.cells
    }


def scheme_column(formats, scheme_id: str) -> str | None:
    """The matrix column (quantization family) a weight scheme or GGUF file mix belongs to, or None."""
    mix = formats.file_mix(scheme_id)
    quant = formats.quantization(mix.main_type if mix is not None else scheme_id)
    return quant.family if quant is not None else None


def usable(status: CompatStatus | str) -> bool:
    """True for statuses that mean the engine serves it (native, experimental, via a plugin)."""
    return str(status) in USABLE_STATUSES


__all__ = ["HardwareChoice", "engine_backends", "format_verdict", "matrix_on_hardware", "scheme_column", "usable"]
