"""Numbers for the reader's language: 1,234.5 in English, 1234,5 / 12.345,6 in Spanish (Babel's CLDR rules).

Calculators return plain numbers; pages and reports format them here at display time, in the language of
the current run (`calculators.i18n.current_language()`). Units stay as written (GiB, MiB, tokens, ms).
"""

from __future__ import annotations

from babel.numbers import format_currency, format_decimal, format_percent

from calculators.i18n import current_language


def number(value: float, decimals: int = 0) -> str:
    """`value` with grouping and exactly `decimals` decimals, in the current language."""
    pattern = "#,##0" + ("." + "0" * decimals if decimals > 0 else "")
    return format_decimal(value, format=pattern, locale=current_language())


def compact(value: float, max_decimals: int = 2) -> str:
    """`value` with grouping and at most `max_decimals` decimals, trailing zeros dropped ("0.5", "4" / "0,5")."""
    pattern = "#,##0" + ("." + "#" * max_decimals if max_decimals > 0 else "")
    return format_decimal(value, format=pattern, locale=current_language())


def percent(fraction: float, decimals: int = 0) -> str:
    """`fraction` (0.25) as a percentage ("25%" / "25 %"), in the current language."""
    pattern = "#,##0" + ("." + "0" * decimals if decimals > 0 else "") + "%"
    return format_percent(fraction, format=pattern, locale=current_language())


def quantity(value: float, unit: str, decimals: int = 1) -> str:
    """`value` followed by its unit ("12.5 GiB" / "12,5 GiB")."""
    return f"{number(value, decimals)} {unit}"


def dollars(value: float) -> str:
    """`value` US dollars with cents, written as the current language writes money ("$1,234.50" / "1234,50 US$")."""
    return format_currency(value, "USD", locale=current_language())


def significant(value: float, digits: int = 3) -> str:
    """`value` rounded to `digits` significant digits ("7.72", "1,280" / "7,72"), in the current language."""
    return compact(float(f"{value:.{digits}g}"), 6)
