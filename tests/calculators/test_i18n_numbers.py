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


@pytest.mark.parametrize(("call", "bad_input", "in_english", "in_spanish", "english_number"), [
    (parse_length_pairs_csv, "prompt_tokens,output_tokens\n20000000,5\n", "10,000,000\u00a0tokens",
     "10.000.000\u00a0tokens",
     "10,000,000"),
    (read_llama_bench_json, '[{"avg_ts": -0.5, "n_prompt": 512, "n_gen": 0}]', "t/s is -0.5;", "-0,5", "-0.5"),
], ids=["csv-limit-grouped", "imported-rate-decimal-comma"])
def test_an_error_writes_its_numbers_in_the_readers_language(call, bad_input, in_english, in_spanish, english_number):
    english = _error(call, bad_input)
    with language("es"):
        spanish = _error(call, bad_input)
    assert in_english in english
    assert in_spanish in spanish and english_number not in spanish


def test_spanish_percentages_take_a_non_breaking_space():
    with language("es"):
        assert percent(0.25) == f"25{NBSP}%"
        assert percent(-0.125, 1) == f"-12,5{NBSP}%"
        assert signed_percent(0.04) == f"+4{NBSP}%"
    assert percent(0.25) == "25%" and signed_percent(-0.04) == "-4%"
