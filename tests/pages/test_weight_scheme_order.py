"""The weight-precision dropdowns of the memory and speed pages list GGUF file types as the Formats page's table does:
from fewest to most bits per weight (Q2_K ... F16), not in the knowledge base's order (Q2_K and IQ4_XS after Q8_0)."""

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from knowledge.loader import load_knowledge
from tests.support.page_runs import page_in_language

PAGES = Path(__file__).resolve().parents[2] / "pages"


@pytest.mark.parametrize(("page", "key"), [("memory.py", "mem_precision"), ("speed.py", "speed_precision")])
def test_gguf_file_types_in_the_dropdown_run_from_fewest_bits(page, key):
    at = AppTest.from_file(str(PAGES / page), default_timeout=120).run()
    assert not at.exception, at.exception
    options = list(at.selectbox(key=key).options)
    mixes = load_knowledge().formats.file_mixes
    files = [option for option in options if "GGUF" in option]
    by_bits = sorted(mixes, key=lambda m: m.measured_bits_per_weight)
    expected = [f"{m.name} GGUF file, {round(m.measured_bits_per_weight, 2):g} bits/weight measured" for m in by_bits]
    assert files == expected, files
    assert files[0].startswith("Q2_K ") and files[-1].startswith("F16 ")
    # no two choices read the same: the Q2_K tensor type and the Q2_K file were both "Q2_K" before
    assert len(set(options)) == len(options) == len(load_knowledge().formats.weight_scheme_ids())


def test_spanish_dropdown_names_the_file_and_writes_a_decimal_comma():
    at = page_in_language(str(PAGES / "memory.py"), "es").run()
    assert not at.exception, at.exception
    assert "archivo GGUF Q2_K, 3,16 bits/peso medidos" in list(at.selectbox(key="mem_precision").options)
