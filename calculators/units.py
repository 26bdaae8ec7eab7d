"""Byte units, defined once: binary (KiB, MiB, GiB = 2^10, 2^20, 2^30 bytes) and decimal (KB, MB, GB = 10^3...),
and numbers written for the reader's language (1,234.5 in English, 1234,5 / 12.345,6 in Spanish: Babel's CLDR rules).

Calculators keep bytes as integers; divide by these only to display or to read a printed figure. A note a
calculator writes formats its numbers with `number` / `compact` / `percent` here (reports/numbers.py uses the
same functions), in the language of the current run (`calculators.i18n.current_language()`).

A figure and its unit (or a count and its word) are joined by UNIT_SPACE, a no-break space, in every text a
person reads, so a narrow column never ends a line between "14,96" and "GiB". Code joins them with `quantity` /
`with_unit`; a message template writes the no-break space itself ("{gib}\\u00a0GiB"), in English and in its
translation. Machine outputs (JSON, CSV, URL values) carry the numbers themselves, never these texts.
"""

import decimal

from babel.numbers import format_decimal as _babel_format_decimal
from babel.numbers import format_percent

from calculators.i18n import babel_locale, current_language

KIB = 1 << 10
MIB = 1 << 20
GIB = 1 << 30
TIB = 1 << 40

KB = 1000
MB = 1000**2
GB = 1000**3


#: The space between a figure and its unit in text people read: U+00A0 NO-BREAK SPACE, the character CLDR's Spanish
#: percent pattern already puts before "%" (percent() above), so every figure on a page is spaced alike.
UNIT_SPACE = "\u00a0"

#: Digits Babel may need to write any float with its decimals: an absurd value from a link (1.8e25 s) has 26
#: integer digits, more than decimal's default context of 28 once the decimals are added (InvalidOperation).
_FORMAT_PRECISION = 400



def format_decimal(value: float, *, format: str, locale: str) -> str:
    """Babel's format_decimal with a decimal context wide enough for any float's integer digits."""
    with decimal.localcontext() as context:
        context.prec = _FORMAT_PRECISION
        return _babel_format_decimal(value, format=format, locale=babel_locale(locale))


def number(value: float, decimals: int = 0) -> str:
    """`value` with grouping and exactly `decimals` decimals, in the current language."""
    pattern = "#,##0" + ("." + "0" * decimals if decimals > 0 else "")
    return format_decimal(value, format=pattern, locale=current_language())


def compact(value: float, max_decimals: int = 2) -> str:
    """`value` with grouping and at most `max_decimals` decimals, trailing zeros dropped ("0.5", "4" / "0,5")."""
    pattern = "#,##0" + ("." + "#" * max_decimals if max_decimals > 0 else "")
    return format_decimal(value, format=pattern, locale=current_language())


def percent(fraction: float, decimals: int = 0) -> str:
    """`fraction` (0.25) as a percentage ("25%" / "25\u00a0%"), in the current language.

    The sign is spaced as the language's CLDR percent pattern spaces it: Spanish writes "25 %" with a
    non-breaking space (RAE, Ortografía 2010, and Fundéu), so the number never ends a line without its sign.
    """
    lang = current_language()
    digits = "#,##0" + ("." + "0" * decimals if decimals > 0 else "")
    pattern = babel_locale(lang).percent_formats[None].pattern.replace("#,##0", digits, 1)
    with decimal.localcontext() as context:
        context.prec = _FORMAT_PRECISION
        return format_percent(fraction, format=pattern, locale=babel_locale(lang))


def significant(value: float, digits: int = 3) -> str:
    """`value` rounded to `digits` significant digits ("7.72", "1,280" / "7,72"), in the current language."""
    return compact(float(f"{value:.{digits}g}"), 6)


def with_unit(figure: str, unit: str) -> str:
    """An already written `figure` ("14,96", "about 3") and its `unit` ("GiB"), joined by a no-break space."""
    return f"{figure}{UNIT_SPACE}{unit}"


def quantity(value: float, unit: str, decimals: int = 1) -> str:
    """`value` with exactly `decimals` decimals and its unit, unbreakable ("12.5\u00a0GiB" / "12,5\u00a0GiB")."""
    return with_unit(number(value, decimals), unit)
