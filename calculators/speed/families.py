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


def decode_family(engine: str, version: str, backend: str, weights_quantized: bool | None) -> str:
    """The fit family of a decode measurement: the adapter's `speed.family_for_kernel_path` when it names one (the
    build's weight mat-vecs took a kernel path of their own), else `speed_family(engine, version)`."""
    from calculators.engines import ENGINES

    found = ENGINES.get(engine)
    if found is not None and found.speed is not None and found.speed.family_for_kernel_path is not None:
        family = found.speed.family_for_kernel_path(version, backend, weights_quantized)
        if family is not None:
            return family
    return speed_family(engine, version)


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


def graphless_launches(engine: str, n_layers: int, quantized: bool, grouped_query: bool) -> int:
    """Kernels `engine`'s host launches for one decode token of a build that replays no GPU graph (the adapter's
    `speed.graphless_launches_per_token`); raises when the engine has no such count (a measurement marked graph-less
    for it cannot be modelled)."""
    from calculators.engines import ENGINES

    found = ENGINES.get(engine)
    if found is None or found.speed is None or found.speed.graphless_launches_per_token is None:
        raise ValueError(f"engine {engine!r} has no kernel-launch count for a step without graph replay")
    return found.speed.graphless_launches_per_token(n_layers, quantized, grouped_query)
