"""Pages that draw their main result first (ui/deferred.py): the rest arrives on its own, below the result.

Each page's typical shared link (bench/typical_states.py) is opened cold. A script injected before the page loads
watches every animation frame: when the main result first shows, when the note standing in for the rest first
shows, and which elements of the page appear only after that note (the rest). Nothing is clicked. The rest must
arrive (the note goes, elements follow it) and every one of its visible elements must sit below the result: nothing
is inserted above it. (The result itself may still move down a little: a widget above it is a 40 px skeleton until
its script arrives from the server and then grows, as it does on a page drawn in one run.)
"""

from __future__ import annotations

import json
import re

import pytest

from bench.typical_states import TYPICAL_STATES, link
from tests.support.browser import APP_READY_TIMEOUT_MS, REST_FOLLOWS_NOTE, wait_for_app

#: Pages whose typical link draws the rest after the main result, and a selector found only in that rest.
DEFERRED_PAGES = {
    "engines.py": '[data-testid="stSelectbox"]',  # the engine whose settings are listed, below the comparison
    "operations.py": '[data-testid="stExpander"]',  # the benchmark plan's expanders, in its last tab
    "compatibility.py": '[data-testid="stDownloadButton"]',  # the tool-call verdicts' downloads, under the table
    "planner.py": '[data-testid="stDownloadButton"]',  # the plan's downloads, at the end of the page
    "simulator.py": '[data-testid="stDownloadButton"]',  # the latency distributions' download, below the comparison
    "memory.py": '[data-testid="stDownloadButton"]',  # the plan's downloads, below the bars and their table
    "formats.py": '[data-testid="stDataFrame"]',  # the cell's hardware paths and the scheme tables, below its verdict
    "wizard.py": '[data-testid="stDownloadButton"]',  # the recommendation's download, below the first candidate
    "reconcile.py": '[data-testid="stSelectbox"]',  # the capture commands' engine, below the paste box
    "speed.py": '[data-testid="stTextArea"]',  # the calibration's paste box, below the estimate and its charts
}

WATCH_JS = """
(() => {
  const RESULT = %(result)s, TEXT = %(text)s, NOTE = %(note)s;
  const w = window.__deferred = {frame: 0, resultFrame: null, noteFrame: null, noteGone: null};
  const tick = () => {
    w.frame += 1;
    const main = document.querySelector('[data-testid="stMain"]');
    if (main) {
      for (const el of main.querySelectorAll('[data-testid="stElementContainer"]:not([data-seen-frame])')) {
        el.dataset.seenFrame = String(w.frame);
      }
      if (w.resultFrame === null) {
        const hit = [...main.querySelectorAll(RESULT)].find(
          el => (!TEXT || el.textContent.includes(TEXT)) && el.getClientRects().length);
        if (hit) w.resultFrame = w.frame;
      }
      const note = document.querySelector(NOTE);
      if (note && w.noteFrame === null) w.noteFrame = w.frame;
      if (!note && w.noteFrame !== null && w.noteGone === null) w.noteGone = w.frame;
    }
    requestAnimationFrame(tick);
  };
  requestAnimationFrame(tick);
})();
"""

#: After the page settles: the result's bottom, and every visible element first seen after the note, with its top.
LATER_JS = """
([result, text, noteFrame]) => {
  const main = document.querySelector('[data-testid="stMain"]');
  const hit = [...main.querySelectorAll(result)].find(el => !text || el.textContent.includes(text));
  const box = hit.getBoundingClientRect();
  const later = [...main.querySelectorAll('[data-testid="stElementContainer"]')]
    .filter(el => Number(el.dataset.seenFrame) > noteFrame && el.getClientRects().length)
    .map(el => ({top: el.getBoundingClientRect().top + window.scrollY, what: el.textContent.slice(0, 60)}));
  return {bottom: box.bottom + window.scrollY, later};
}
"""


def _css(selector: str) -> str:
    """A Playwright selector as plain CSS for the page's own script (`:has-text("...")` dropped)."""
    return re.sub(r':has-text\("[^"]*"\)', "", selector)


@pytest.mark.browser
@pytest.mark.parametrize("name", sorted(DEFERRED_PAGES))
def test_the_rest_of_the_page_follows_below_the_main_result_without_a_click(app_url, browser, name):
    state = TYPICAL_STATES[name]
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    try:
        page.add_init_script(WATCH_JS % {"result": json.dumps(_css(state.main_result)),
                                         "text": json.dumps(state.main_text), "note": json.dumps(REST_FOLLOWS_NOTE)})
        page.goto(app_url + link(name, state))
        page.wait_for_function("() => window.__deferred && window.__deferred.noteGone !== null",
                               timeout=APP_READY_TIMEOUT_MS)
        wait_for_app(page)
        seen = page.evaluate("() => window.__deferred")
        assert seen["resultFrame"] is not None, f"{name}: the main result never showed"
        assert seen["resultFrame"] <= seen["noteGone"], f"{name}: the result showed only after the rest"
        now = page.evaluate(LATER_JS, [_css(state.main_result), state.main_text, seen["noteFrame"]])
        assert now["later"], f"{name}: nothing was drawn after the note"
        above = [element for element in now["later"] if element["top"] < now["bottom"] - 1]
        assert not above, f"{name}: drawn after the result but above its bottom ({now['bottom']} px): {above}"
        assert page.locator(DEFERRED_PAGES[name]).count() > 0, f"{name}: the rest ({DEFERRED_PAGES[name]}) is missing"
        assert page.locator('[data-testid="stException"]').count() == 0, name
    finally:
        context.close()
