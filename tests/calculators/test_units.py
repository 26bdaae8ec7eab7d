"""Numbers written for the reader never raise, whatever a link puts in a number input."""

from __future__ import annotations

import pytest

from calculators.i18n import language
from calculators.units import compact, number, percent, significant


@pytest.mark.parametrize("lang", ["en", "es"])
def test_an_absurd_value_is_written_not_raised(lang):
    # tests/test_fuzz_url_params found sim_slo_ttft=1.809101637875934e+25 raising decimal.InvalidOperation in
    # Babel (26 integer digits + 3 decimals over decimal's default 28-digit context)
    with language(lang):
        assert compact(1.809101637875934e25, 3).replace(",", "").replace(".", "").startswith("18091016378759")
        assert number(1e300, 2) and percent(1e30, 1) and significant(1e25)
    with language("es"):
        assert compact(1234.5, 3) == "1.234,5"  # ordinary values unchanged
