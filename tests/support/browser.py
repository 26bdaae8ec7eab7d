"""Helpers browser tests share: wait for Streamlit to settle, open a page, find what the app registered."""

from __future__ import annotations

import re
from pathlib import Path

from ui.deferred import NOTE_KEY

APP_READY_TIMEOUT_MS = 30_000
#: The note a page visit's first run leaves in place of the rest of the page (ui/deferred.py).
REST_FOLLOWS_NOTE = f".st-key-{NOTE_KEY}"
REPO_ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def wait_for_app(page, timeout_ms: int = APP_READY_TIMEOUT_MS) -> None:
    """Wait until Streamlit is connected and has finished running the page script.

    On a page visit's first run that includes the run the browser asks for the rest of the page with (ui/deferred.py):
    its note is gone once that run has drawn the rest.
    """
    page.wait_for_selector('[data-testid="stApp"][data-test-connection-state="CONNECTED"]', timeout=timeout_ms)
    page.wait_for_selector('[data-testid="stApp"][data-test-script-state="notRunning"]', timeout=timeout_ms)
    page.wait_for_selector(REST_FOLLOWS_NOTE, state="detached", timeout=timeout_ms)
    page.wait_for_selector('[data-testid="stApp"][data-test-script-state="notRunning"]', timeout=timeout_ms)
    page.wait_for_selector('[data-testid="stStatusWidget"] [data-testid="stStatusWidgetRunningIcon"]',
                           state="detached", timeout=timeout_ms)  # fmt: skip
    # Elements drawn by lazily loaded components show a skeleton for a moment after the run ends.
    page.wait_for_function(
        "() => !document.querySelector('[data-testid=\"stSkeleton\"]')", timeout=timeout_ms
    )


#: JavaScript taking one element: marks, outermost first, every unselected tab and every collapsed expander that
#: hides it with `data-servewise-reveal="<n>"` and returns how many it marked. Clicking them in that order (as a
#: user would, with real pointer events: Streamlit's tabs ignore synthetic clicks) shows the element.
MARK_HIDING_CONTROLS_JS = """
element => {
  const steps = [];
  for (let node = element; node; node = node.parentElement) {
    if (node.dataset && node.dataset.testid === 'stTabPanel') {
      const tabs = node.closest('[data-testid="stTabs"]');
      const own = selector => [...tabs.querySelectorAll(selector)]
        .filter(found => found.closest('[data-testid="stTabs"]') === tabs);
      const tab = own('[role="tab"]')[own('[data-testid="stTabPanel"]').indexOf(node)];
      if (tab && tab.getAttribute('aria-selected') !== 'true') steps.push(tab);
    }
    if (node.tagName === 'DETAILS' && !node.open) {
      const summary = node.querySelector(':scope > summary');
      if (summary) steps.push(summary);
    }
  }
  steps.reverse().forEach((step, index) => step.setAttribute('data-servewise-reveal', String(index)));
  return steps.length;
}
"""


def open_page(page, url: str) -> None:
    """Navigate to `url` and wait for the script run to finish."""
    page.goto(url, wait_until="domcontentloaded")
    wait_for_app(page)


def registered_page_count() -> int:
    """How many `st.Page(...)` entries app.py registers (the sidebar must list that many links)."""
    return len(re.findall(r"\bst\.Page\(", (REPO_ROOT / "app.py").read_text()))


def page_urls(page, base_url: str) -> list[str]:
    """Absolute URLs of every page in the sidebar navigation (Streamlit hides it when there is one page)."""
    open_page(page, base_url)
    hrefs = page.eval_on_selector_all(
        '[data-testid="stSidebarNav"] a[data-testid="stSidebarNavLink"]', "links => links.map(a => a.href)"
    )
    return hrefs or [base_url + "/"]


#: JavaScript (no argument): every label a person reads on a widget, metric, expander or tab that the page cuts
#: (text-overflow ellipsis: the text is wider than its box) or breaks inside a word (a word drawn on two lines),
#: as "kind: text" strings. Words are split by spaces; a word joined by "-" or "/" may wrap at them.
CUT_LABELS_JS = """
() => {
  const selectors = {
    'widget label': '[data-testid="stWidgetLabel"]',
    'metric label': '[data-testid="stMetricLabel"]',
    'expander': '[data-testid="stExpander"] summary',
    'tab': '[role="tab"]',
    'selected option': '[data-baseweb="select"] [value], [data-baseweb="select"] div[title]',
  };
  const found = [];
  for (const [kind, selector] of Object.entries(selectors)) {
    for (const box of document.querySelectorAll(selector)) {
      if (!box.offsetParent) continue;  // hidden (a closed tab or expander)
      const text = box.innerText.trim();
      if (!text) continue;
      for (const node of [box, ...box.querySelectorAll('*')]) {
        const style = getComputedStyle(node);
        // ellipsized, or clipped by its box (a selectbox's chosen option is clipped without an ellipsis)
        const clips = style.textOverflow === 'ellipsis' || style.overflowX === 'hidden';
        if (clips && node.scrollWidth > node.clientWidth + 1) {
          found.push(`${kind} cut: ${text}`);
          break;
        }
      }
      const walker = document.createTreeWalker(box, NodeFilter.SHOW_TEXT);
      for (let node = walker.nextNode(); node; node = walker.nextNode()) {
        const words = node.textContent.split(/(\\s+)/);
        let offset = 0;
        for (const word of words) {
          if (word.trim() && !/[-/]/.test(word)) {
            const range = document.createRange();
            range.setStart(node, offset);
            range.setEnd(node, offset + word.length);
            const lines = new Set([...range.getClientRects()].filter(r => r.width > 0).map(r => Math.round(r.top)));
            if (lines.size > 1) found.push(`${kind} split mid-word: ${word} (in "${text}")`);
          }
          offset += word.length;
        }
      }
    }
  }
  // A selectbox shows its chosen option in an <input>: clipped by the box, without an ellipsis, when it is wider
  // (the memory page's "NVIDIA A100 SXM4 8" at 1024 px).
  for (const input of document.querySelectorAll('[data-testid="stSelectbox"] input')) {
    if (input.offsetParent && input.value && input.scrollWidth > input.clientWidth + 1) {
      found.push(`selected option cut: ${input.value}`);
    }
  }
  return [...new Set(found)];
}
"""
