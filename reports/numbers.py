"""Numbers for the reader's language: 1,234.5 in English, 1234,5 / 12.345,6 in Spanish (Babel's CLDR rules).

Calculators return plain numbers; pages and reports format them here at display time, in the language of
the current run (`calculators.i18n.current_language()`). Units stay as written (GiB, MiB, tokens, ms), joined to
their figure by a no-break space (`quantity`, `with_unit`: calculators/units.UNIT_SPACE).
"""

from __future__ import annotations

from babel.numbers import format_currency

from calculators.i18n import current_language
from calculators.units import UNIT_SPACE, compact, number, percent, quantity, significant, with_unit

__all__ = ["UNIT_SPACE", "compact", "dollars", "number", "percent", "quantity", "signed", "signed_percent",
           "significant", "with_unit"]


def dollars(value: float) -> str:
    """`value` US dollars with cents, written as the current language writes money ("$1,234.50" / "1234,50 US$")."""
    return format_currency(value, "USD", locale=current_language())


def signed(value: float, decimals: int = 0) -> str:
    """`value` with its sign always written ("+0.125" / "+0,125"), for deltas (st.metric colours by the sign)."""
    return ("+" if value >= 0 else "") + number(value, decimals)


def signed_percent(fraction: float, decimals: int = 0) -> str:
    """`fraction` as a percentage with its sign always written ("+12%" / "+12\u00a0%"), for error bands."""
    return ("+" if fraction >= 0 else "") + percent(fraction, decimals)
