"""Numbers inside calculators' messages are written in the reader's language (issue 19).

Spanish groups thousands with "." and writes decimals with ","; a percentage is "25 %" with a non-breaking space
(RAE, Ortografía de la lengua española 2010, and Fundéu), the spacing CLDR's Spanish percent pattern uses.
"""

from __future__ import annotations

import pytest

from calculators.engines.llama_cpp.bench_import import read_llama_bench_json
from calculators.errors import ServewiseInputError
from calculators.i18n import language
from calculators.simulator.workload import parse_length_pairs_csv
from calculators.units import percent
from reports.numbers import signed_percent

NBSP = "\u00a0"


def _error(call, *args) -> str:
    with pytest.raises(ServewiseInputError) as caught:
        call(*args)
    return str(caught.value)


def test_a_csv_limit_is_grouped_the_spanish_way():
    csv_text = "prompt_tokens,output_tokens\n20000000,5\n"
    english = _error(parse_length_pairs_csv, csv_text)
    with language("es"):
        spanish = _error(parse_length_pairs_csv, csv_text)
    assert "10,000,000 tokens" in english
    assert "10.000.000 tokens" in spanish and "10,000,000" not in spanish


def test_an_imported_rate_keeps_its_decimal_comma():
    row = '[{"avg_ts": -0.5, "n_prompt": 512, "n_gen": 0}]'
    english = _error(read_llama_bench_json, row)
    with language("es"):
        spanish = _error(read_llama_bench_json, row)
    assert "t/s is -0.5;" in english
    assert "-0,5" in spanish and "-0.5" not in spanish


def test_spanish_percentages_take_a_non_breaking_space():
    with language("es"):
        assert percent(0.25) == f"25{NBSP}%"
        assert percent(-0.125, 1) == f"-12,5{NBSP}%"
        assert signed_percent(0.04) == f"+4{NBSP}%"
    assert percent(0.25) == "25%" and signed_percent(-0.04) == "-4%"
