"""Numbers for the reader's language: 1,234.5 in English, 1234,5 / 12.345,6 in Spanish (Babel's CLDR rules).

Calculators return plain numbers; pages and reports format them here at display time, in the language of
the current run (`calculators.i18n.current_language()`). Units stay as written (GiB, MiB, tokens, ms).
"""

from __future__ import annotations

from babel.numbers import format_currency

from calculators.i18n import current_language
from calculators.units import compact, number, percent, significant

__all__ = ["compact", "dollars", "number", "percent", "quantity", "signed", "signed_percent", "significant"]


def quantity(value: float, unit: str, decimals: int = 1) -> str:
    """`value` followed by its unit ("12.5 GiB" / "12,5 GiB")."""
    return f"{number(value, decimals)} {unit}"


def dollars(value: float) -> str:
    """`value` US dollars with cents, written as the current language writes money ("$1,234.50" / "1234,50 US$")."""
    return format_currency(value, "USD", locale=current_language())


def signed(value: float, decimals: int = 0) -> str:
    """`value` with its sign always written ("+0.125" / "+0,125"), for deltas (st.metric colours by the sign)."""
    return ("+" if value >= 0 else "") + number(value, decimals)


def signed_percent(fraction: float, decimals: int = 0) -> str:
    """`fraction` as a percentage with its sign always written ("+12%" / "+12\u00a0%"), for error bands."""
    return ("+" if fraction >= 0 else "") + percent(fraction, decimals)
