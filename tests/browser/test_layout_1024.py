"""At 1024 px (the narrow laptop width the issue names), in English and Spanish, no label a person reads is cut.

Checked on every page's typical shared link (tests/support/page_links.py): widget and metric labels, expander and
tab titles and the option a selectbox shows must be neither ellipsized nor broken inside a word
(tests/support/browser.py CUT_LABELS_JS). Issue 19 found "Waiting in the q…" on Home, the simulator's GPU name and
toggle labels cut, OLLAMA_NUM_PARALLEL split over two lines, and "Ollam/a" and "SGLan/g" on the memory page.
"""

from __future__ import annotations

import pytest

from tests.support.browser import CUT_LABELS_JS, wait_for_app
from tests.support.page_links import TYPICAL_LINKS, page_link

pytestmark = pytest.mark.browser

WIDTH_PX = 1024


@pytest.mark.parametrize("lang", ["en", "es"])
def test_no_label_is_cut_at_1024_px(app_url, browser, lang):
    problems = {}
    for name in TYPICAL_LINKS:
        context = browser.new_context(viewport={"width": WIDTH_PX, "height": 1000})  # a fresh visit per link
        try:
            page = context.new_page()
            page.goto(page_link(app_url, name, lang), wait_until="domcontentloaded")
            wait_for_app(page, timeout_ms=120_000)
            found = page.evaluate(CUT_LABELS_JS)
            if found:
                problems[name] = found
        finally:
            context.close()
    assert not problems, problems
