"""Which fitted parameter family an engine's kernels belong to: the engine adapter says (engines/<engine>/speed.py)."""

from __future__ import annotations

from calculators.i18n import N_
from calculators.speed.model import Accelerator

#: Said with every prediction whose prefill uses the FP16-accumulate rate instead of the catalog's BF16 figure.
FP16_ACCUMULATE_NOTE = N_(
    "Prefill uses the card's FP16-accumulate tensor rate, which this engine's prompt kernels run at (twice the "
    "FP32-accumulate figure on GeForce cards)."
)


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


def engine_accelerator(engine: str, hw: Accelerator) -> Accelerator:
    """`hw` as `engine`'s kernels see it: its FP16-accumulate flop/s when the engine's prompt kernels accumulate in
    FP16 or int32 (the adapter's `speed.prefill_fp16_accumulate`) and the card's rate differs, else `hw` unchanged."""
    from calculators.engines import ENGINES

    found = ENGINES.get(engine)
    if found is None or found.speed is None or not found.speed.prefill_fp16_accumulate:
        return hw
    if hw.fp16_acc_flops_per_s is None or hw.fp16_acc_flops_per_s == hw.flops_per_s:
        return hw
    # the msgid itself: renderings translate flops_note (reports/speed_text.py)
    note = " ".join(n for n in (hw.flops_note, FP16_ACCUMULATE_NOTE) if n)
    return hw.model_copy(update={"flops_per_s": hw.fp16_acc_flops_per_s, "flops_note": note})
