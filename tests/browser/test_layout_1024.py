"""At 1024 px (the narrow laptop width the issue names), in English and Spanish, nothing a person reads is cut.

Checked on every page's typical shared link (tests/support/page_links.py):
- widget and metric labels, expander and tab titles and the option a selectbox shows are neither ellipsized nor
  broken inside a word (tests/support/browser.py CUT_LABELS_JS). Issue 19 found "Waiting in the q…" on Home, the
  simulator's GPU name and toggle labels cut, OLLAMA_NUM_PARALLEL split over two lines, and "Ollam/a" and "SGLan/g"
  on the memory page;
- no Markdown table runs past its column: the simulator's side-by-side table ran ~640 px past the page and hid
  goodput, the Operations endpoints ~550 px, the tool-call verdicts ~90 px; nor scrolls sideways in its box
  (ui/markup.show_wide_table) unless laid out wide on purpose (the engine settings' 2200 px) or folded in a collapsed
  expander: the Engines comparison, one column per engine, hid SGLang's and MLX LM's columns behind the scroll
  (562 px of 1126 with the five main engines, 262 px with the typical link's three);
- no dataframe on screen scrolls sideways: the planner's winners, the speed page's accuracy table and the
  formats page's bits-per-weight, member and file-type tables hid their figures past the right edge (the
  detail that cannot fit sits in a collapsed expander, where it may scroll);
- no code span (a flag, a setting, a command) that fits its line is broken over two: Chromium breaks after a
  hyphen, and "--enable-auto-tool-" / "choice" or "meta-" / "llama/Llama-3.1-8B-Instruct" read as two words
  (ui/markup.PAGE_STYLE lays each code span out as one box), nor a word inside a longer span: a command is one
  span per word (ui/command_text), since one span for the whole "journalctl -u ollama --no-pager ..." broke as
  "--no-" / "pager" in the check page's narrow column (a log line quoted whole may wrap between its words), nor
  a code span in a table cell (the tool-call verdicts showed "--enable-" / "auto-tool-" / "choice");
- no text is drawn as LaTeX: Streamlit's Markdown reads the text between two "$" as math, and the planner's
  Spanish costs ("1,95 US$/h, 1.425,35 US$/mes") came out in italic math.
"""

from __future__ import annotations

import pytest

from tests.support.browser import CUT_LABELS_JS, wait_for_app
from tests.support.page_links import TYPICAL_LINKS, page_link
from ui.markup import LAID_OUT_WIDE_CLASS

pytestmark = pytest.mark.browser

WIDTH_PX = 1024

#: Markdown tables wider than their column and not inside a box that scrolls sideways, as "head…: N px over".
OVERFLOWING_TABLES_JS = """
() => [...document.querySelectorAll('[data-testid="stMarkdown"] table')].filter(t => t.offsetParent).flatMap(table => {
  const column = table.closest('[data-testid="stMarkdown"]');
  for (let node = table.parentElement; node && node !== column.parentElement; node = node.parentElement) {
    if (['auto', 'scroll'].includes(getComputedStyle(node).overflowX)) return [];  // it scrolls: nothing is lost
  }
  const over = table.getBoundingClientRect().right - column.getBoundingClientRect().right;
  return over > 1 ? [`${table.innerText.slice(0, 40).replace(/\\s+/g, ' ')}…: ${Math.round(over)} px over`] : [];
})
"""
#: Boxes around a Markdown table (ui/markup.show_wide_table) that scroll sideways, on screen (not in a collapsed
#: expander) and not laid out wide on purpose (ui/markup.LAID_OUT_WIDE_CLASS), as "head…: N px behind the scroll".
SIDEWAYS_TABLE_BOXES_JS = """
laidOutWide => [...document.querySelectorAll('.sw-wide-table')]
  .filter(box => box.offsetParent && !box.closest('details:not([open])') && !box.classList.contains(laidOutWide))
  .flatMap(box => {
    const hidden = box.scrollWidth - box.clientWidth;
    const head = box.innerText.slice(0, 40).replace(/\\s+/g, ' ');
    return hidden > 1 ? [`${head}…: ${hidden} px behind the scroll`] : [];
  })
"""
#: Dataframes on screen (not in a collapsed expander) whose grid scrolls sideways, as "headers…: N px more".
SIDEWAYS_DATAFRAMES_JS = """
() => [...document.querySelectorAll('[data-testid="stDataFrame"]')].filter(d => d.offsetParent).flatMap(frame => {
  const scroller = frame.querySelector('.dvn-scroller');
  if (!scroller || !scroller.clientWidth) return [];  // not drawn (a collapsed expander)
  const hidden = scroller.scrollWidth - scroller.clientWidth;
  const heads = [...frame.querySelectorAll('th, [role=columnheader]')].map(h => h.innerText.trim()).join(' | ');
  return hidden > 1 ? [`${heads.slice(0, 60)}…: ${hidden} px more`] : [];
})
"""
#: Code spans in Markdown (not code blocks) drawn over several lines although they fit their block, with a word
#: split over two lines that would fit one (a command drawn as one span instead of one per word), or in a table
#: cell (its column widens to the flag: ui/markup.PAGE_STYLE), as text.
BROKEN_CODE_SPANS_JS = """
() => [...document.querySelectorAll('[data-testid="stMarkdownContainer"] code:not(pre code)')]
  .filter(c => c.offsetParent).flatMap(code => {
    const range = document.createRange();
    range.selectNodeContents(code);
    const lines = new Set([...range.getClientRects()].filter(r => r.width > 0).map(r => Math.round(r.bottom))).size;
    if (lines < 2) return [];
    const probe = document.createElement('span');  // the span's width on one line
    probe.style.cssText = 'position:absolute;visibility:hidden;white-space:pre;font:' + getComputedStyle(code).font;
    probe.textContent = code.textContent;
    document.body.appendChild(probe);
    const natural = probe.getBoundingClientRect().width;
    probe.remove();
    const room = code.parentElement.closest('p, li, td, th, div').getBoundingClientRect().width;
    // a word of the span (a flag, a path) split over two lines although it alone would fit the line
    const splitWord = [...code.textContent.matchAll(/\\S+/g)].some(word => {
      if (!code.firstChild || code.firstChild.nodeType !== Node.TEXT_NODE) return false;
      const part = document.createRange();
      part.setStart(code.firstChild, word.index);
      part.setEnd(code.firstChild, word.index + word[0].length);
      const rows = new Set([...part.getClientRects()].filter(r => r.width > 0).map(r => Math.round(r.bottom)));
      return rows.size > 1 && word[0].length * 7.3 + 12 < room;  // 7.3 px: the widest code glyph at 12 px
    });
    const inCell = code.closest('td, th') !== null;
    return natural + 12 < room || splitWord || inCell ? [`${code.textContent.slice(0, 60)} (${lines} lines)`] : [];
  })
"""
#: Words in Markdown table cells (outside code spans) joined by a hyphen and drawn over two lines although the word
#: alone fits its cell, as "word (in "cell")": Chromium breaks after a hyphen, and the tool-call verdicts showed
#: "llama.cpp (llama-" / "server)" and the facts currency table "v0.33.0-" / "rc2" (reports/tables.py joins such
#: words with no-break hyphens). A word may still wrap after a "/" ("vllm-project/" / "vllm#43529"): each part up
#: to a "/" is checked on its own.
SPLIT_TABLE_WORDS_JS = """
() => [...document.querySelectorAll('[data-testid="stMarkdownContainer"] :is(td, th)')]
  .filter(cell => cell.offsetParent && cell.innerText.trim()).flatMap(cell => {
    const found = [];
    const room = cell.getBoundingClientRect().width;
    const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      if (node.parentElement.closest('code')) continue;  // code spans: BROKEN_CODE_SPANS_JS
      for (const word of node.textContent.matchAll(/[^\\s\\/]+\\/?/g)) {
        if (!/[-\\u2011]/.test(word[0])) continue;
        const range = document.createRange();
        range.setStart(node, word.index);
        range.setEnd(node, word.index + word[0].length);
        const rects = [...range.getClientRects()].filter(r => r.width > 0);
        const lines = new Set(rects.map(r => Math.round(r.bottom))).size;
        const width = rects.reduce((sum, r) => sum + r.width, 0);
        if (lines > 1 && width < room) found.push(`${word[0]} (in "${cell.innerText.slice(0, 60)}")`);
      }
    }
    return found;
  })
"""
#: Elements KaTeX drew (Streamlit's Markdown math), with their text.
MATH_JS = "() => [...document.querySelectorAll('.katex')].map(m => m.innerText.slice(0, 60))"


#: Links checked besides each page's typical one (tests/support/page_links.py): name -> path and query string.
#: The Engines page with no filter compares the five main engines, with `engines_tier=all` every engine.
MORE_LINKS = {"engines, five main engines": "engines", "engines, every engine": "engines?engines_tier=all"}


def _links(app_url: str, lang: str) -> dict[str, str]:
    links = {name: page_link(app_url, name, lang) for name in TYPICAL_LINKS}
    links |= {name: f"{app_url}/{path}{'&' if '?' in path else '?'}lang={lang}" for name, path in MORE_LINKS.items()}
    return links


@pytest.mark.parametrize("lang", ["en", "es"])
def test_nothing_a_person_reads_is_cut_overflowing_or_drawn_wrongly_at_1024_px(app_url, browser, lang):
    problems = {}
    for name, url in _links(app_url, lang).items():
        context = browser.new_context(viewport={"width": WIDTH_PX, "height": 1000})  # a fresh visit per link
        try:
            page = context.new_page()
            page.goto(url, wait_until="domcontentloaded")
            wait_for_app(page, timeout_ms=120_000)
            found = page.evaluate(CUT_LABELS_JS)
            found += [f"table runs past its column: {t}" for t in page.evaluate(OVERFLOWING_TABLES_JS)]
            sideways = page.evaluate(SIDEWAYS_TABLE_BOXES_JS, LAID_OUT_WIDE_CLASS)
            found += [f"table scrolls sideways: {t}" for t in sideways]
            found += [f"drawn as LaTeX: {m}" for m in page.evaluate(MATH_JS)]
            found += [f"dataframe scrolls sideways: {d}" for d in page.evaluate(SIDEWAYS_DATAFRAMES_JS)]
            found += [f"code span broken over lines: {c}" for c in page.evaluate(BROKEN_CODE_SPANS_JS)]
            found += [f"table word split at a hyphen: {w}" for w in page.evaluate(SPLIT_TABLE_WORDS_JS)]
            if found:
                problems[name] = found
        finally:
            context.close()
    assert not problems, problems
