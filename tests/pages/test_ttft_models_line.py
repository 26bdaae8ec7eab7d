"""The memory page's Speed section and the Simulator page say in one line where the speed estimate's time to first
token and the simulation's agree (a lone request on an idle server, tests/calculators/speed/test_ttft_agreement.py)
and what only the simulation counts, in the reader's language."""

from __future__ import annotations

import pytest

from bench.typical_states import TYPICAL_STATES
from tests.support.page_runs import page_in_language

STARTS = {"en": "A lone request on an idle server gets the same time to first token",
          "es": "Una petición sola en un servidor inactivo obtiene el mismo tiempo hasta el primer token"}


@pytest.mark.parametrize("lang", ["en", "es"])
@pytest.mark.parametrize("page", ["memory.py", "simulator.py"])
def test_the_page_says_where_the_two_first_token_times_meet(page, lang):
    at = page_in_language(f"pages/{page}", lang, TYPICAL_STATES[page].query)
    at.run(timeout=120)
    assert not at.exception, at.exception
    lines = [str(c.value) for c in at.caption if str(c.value).startswith(STARTS[lang])]
    assert len(lines) == 1, [str(c.value)[:60] for c in at.caption]
    assert ("all-reduce" in lines[0]) and ("prefill" in lines[0])
