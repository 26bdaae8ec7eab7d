"""What exact quantity a printed, rounded number stands for.

Engines print memory as rounded decimals ("%.2f MiB", "%.1f GiB", "%.4f GB"). A printed value is
therefore consistent with a whole interval of exact byte counts; a comparison that lands inside the
interval is "exact to the printed precision". All arithmetic is done in `Decimal` so that the
interval ends are not blurred by binary floating point.
"""

from __future__ import annotations

import math
from decimal import Context, Decimal, InvalidOperation, localcontext

from calculators.errors import ServewiseInputError
from calculators.i18n import _


def printed_decimals(printed: str) -> int:
    """Digits after the decimal point in a printed number ("4352.00" -> 2, "2,042,016" -> 0)."""
    text = printed.strip().replace(",", "")
    if "." not in text:
        return 0
    return len(text.split(".", 1)[1])


# Exact arithmetic for any number an engine can print (and for the absurd ones a bad paste can hold).
_EXACT = Context(prec=200)
_MAX_PRINTED_CHARS = 64


def _as_decimal(printed: str) -> Decimal:
    if len(printed) > _MAX_PRINTED_CHARS:
        raise ServewiseInputError(_("'{printed}…' is too long to be a printed figure").format(printed=printed[:20]))
    try:
        value = Decimal(printed.strip().replace(",", ""))
    except InvalidOperation as exc:
        raise ServewiseInputError(_("'{printed}' is not a printed number").format(printed=printed)) from exc
    if not value.is_finite():
        raise ServewiseInputError(_("'{printed}' is not a finite number").format(printed=printed))
    return value


def printed_to_units(printed: str, unit_size: int) -> int:
    """The printed value converted to whole base units (bytes, tokens), rounded to nearest.

    `unit_size` is how many base units one printed unit holds (e.g. 2**20 for "MiB", 1 for a count).
    """
    with localcontext(_EXACT):
        exact = _as_decimal(printed) * unit_size
        return int(exact.to_integral_value(rounding="ROUND_HALF_EVEN"))


def half_step(printed: str) -> Decimal:
    """Half of the last printed digit: the largest rounding error the print can hide (in printed units)."""
    return Decimal(1).scaleb(-printed_decimals(printed)) / 2


def units_interval(printed: str, unit_size: int) -> tuple[int, int]:
    """Closed interval of whole base units (bytes, tokens) that print as `printed` at its precision.

    "4352.00" MiB -> every byte count within +-0.005 MiB of 4352 MiB. The interval is closed on both
    ends because engines differ in how they round a tie; being generous at the tie costs nothing.
    """
    with localcontext(_EXACT):
        value = _as_decimal(printed)
        step = half_step(printed)
        low = math.ceil((value - step) * unit_size)
        high = math.floor((value + step) * unit_size)
        if low > high:  # printed finer than one base unit: the neighbouring whole units bracket it
            centre = value * unit_size
            low, high = math.floor(centre), math.ceil(centre)
    return max(0, low), max(0, high)


def ratio_interval(printed: str) -> tuple[float, float]:
    """Closed interval of real values that print as `printed` (for ratios such as "1.56" in "1.56x")."""
    with localcontext(_EXACT):
        value = _as_decimal(printed)
        step = half_step(printed)
        return float(value - step), float(value + step)


def consistent(printed: str, unit_size: int, exact_units: int) -> bool:
    """True when an exact count (bytes/tokens) would have been printed as `printed`."""
    low, high = units_interval(printed, unit_size)
    return low <= exact_units <= high
