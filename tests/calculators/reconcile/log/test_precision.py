"""The rounding helper: which exact values a printed, rounded figure stands for."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from calculators.errors import ServewiseInputError
from calculators.reconcile.log.precision import (
    consistent,
    printed_decimals,
    printed_to_units,
    ratio_interval,
    units_interval,
)
from calculators.units import GIB, MIB


def test_decimals_as_printed():
    assert printed_decimals("4352.00") == 2
    assert printed_decimals("14.9888") == 4
    assert printed_decimals("2,042,016") == 0
    assert printed_decimals("127.4") == 1


def test_mib_at_two_decimals():
    # "%.2f MiB" hides up to 0.005 MiB = 5242.88 bytes either side
    low, high = units_interval("4352.00", MIB)
    assert (low, high) == (4352 * MIB - 5242, 4352 * MIB + 5242)
    assert consistent("4352.00", MIB, 4352 * MIB)
    assert not consistent("4352.00", MIB, 4352 * MIB + 6000)


def test_ollama_one_decimal_gib():
    # Ollama's "%.1f GiB": 19.5 GiB stands for 19.45 .. 19.55 GiB
    low, high = units_interval("19.5", GIB)
    assert low == -(-(1945 * GIB) // 100) and high == 1955 * GIB // 100


def test_counts_are_exact():
    assert units_interval("2,042,016", 1) == (2_042_016, 2_042_016)
    assert printed_to_units("2,042,016", 1) == 2_042_016


def test_ratio_interval():
    assert ratio_interval("0.82") == pytest.approx((0.815, 0.825))


def test_not_a_number_is_a_domain_error():
    with pytest.raises(ServewiseInputError):
        units_interval("abc", MIB)
    with pytest.raises(ServewiseInputError):
        units_interval("nan", MIB)


@given(st.integers(min_value=0, max_value=2**44), st.sampled_from([(MIB, 2), (GIB, 2), (GIB, 1), (GIB, 4), (10**9, 3)]))
def test_what_an_engine_prints_is_consistent_with_the_exact_value(exact_bytes, unit_and_decimals):
    unit, decimals = unit_and_decimals
    printed = f"{exact_bytes / unit:.{decimals}f}"
    assert consistent(printed, unit, exact_bytes)
    low, high = units_interval(printed, unit)
    assert low <= exact_bytes <= high


def test_print_finer_than_one_byte_still_brackets_the_value():
    # no real engine does this, but a pasted typo can: the interval must never be empty
    low, high = units_interval("32.0200000000000000000000", GIB)
    assert low <= printed_to_units("32.0200000000000000000000", GIB) <= high and high - low <= 1
