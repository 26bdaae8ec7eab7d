"""Why every decimal input on a Spanish page says to type decimals with a point (ui/url_widgets.decimal_point_help):
Streamlit 1.67's number input is the browser's <input type="number">, and Chromium drops a typed comma, so a
Spanish reader's '0,15' is read as 15. If this test fails because the comma is read as a decimal mark, the help is
no longer needed."""

from __future__ import annotations

import pytest

from tests.support.browser import MARK_HIDING_CONTROLS_JS, open_page

pytestmark = pytest.mark.browser


def test_a_typed_comma_is_dropped_so_the_spanish_help_warns_of_it(app_url, page):
    open_page(page, f"{app_url}/operations?lang=es")
    box = page.locator('.st-key-ops_prefix input[type="number"]')
    for step in range(box.evaluate(MARK_HIDING_CONTROLS_JS)):  # the tab it sits in, clicked as a user would
        page.locator(f'[data-servewise-reveal="{step}"]').click()
    box.wait_for(state="visible")
    box.fill("")
    box.press_sequentially("0,15")
    assert box.input_value() == "015"  # the comma never reaches the field: on Enter the share would be 15
    # the decimal input carries the help (its tooltip icon); a whole-number input does not
    assert page.locator('.st-key-ops_prefix [data-testid="stTooltipIcon"]').count() == 1
    assert page.locator('.st-key-ops_prompts [data-testid="stTooltipIcon"]').count() == 0
