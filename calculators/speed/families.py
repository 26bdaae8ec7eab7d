"""Which fitted parameter family an engine's kernels belong to: the engine adapter says (engines/<engine>/speed.py)."""

from __future__ import annotations

from calculators.speed.model import SpeedParams


def speed_family(engine: str, version: str = "") -> str:
    """The fit family for an engine id (and the version a measurement was made with, when known).

    The adapter's `speed.family_for_version` decides for a version (an engine whose core changed keeps its old
    measurements apart); with no version, or no such rule, the adapter's `speed.family`; else the id itself.
    """
    from calculators.engines import ENGINES

    found = ENGINES.get(engine)
    if found is None or found.speed is None:
        return engine
    if version and found.speed.family_for_version is not None:
        return found.speed.family_for_version(version)
    return found.speed.family


def fp16_accumulate(engine: str) -> bool:
    """Whether `engine`'s matmul kernels accumulate in FP16 (the adapter's `speed.prefill_fp16_accumulate`), so its
    steps run at the card's FP16-accumulate tensor rate (calculators/speed/model.tensor_flops_per_s)."""
    from calculators.engines import ENGINES

    found = ENGINES.get(engine)
    return found is not None and found.speed is not None and found.speed.prefill_fp16_accumulate


def engine_params(engine: str, params: SpeedParams) -> SpeedParams:
    """`params` as `engine` runs them: with its kernels' tensor rate (`fp16_accumulate`), whichever group or
    calibration the efficiencies come from."""
    wanted = fp16_accumulate(engine)
    return params if params.fp16_accumulate == wanted else params.model_copy(update={"fp16_accumulate": wanted})
