"""A figure is never split from its unit on a page: "14,96 GiB" cannot wrap to "14,96" / "GiB" in a narrow column.

Every text a person reads on every page app.py lists (the memory page's narrow tables first among them), in English
and in Spanish (tables cell by cell, metrics, captions, Markdown, alerts, widget labels, helps and options, chart
texts: tests/support/page_text.py), each page in its default state, is searched for a number followed by a plain
space and a unit (GiB, ms, s, tok/s, tokens, %...). servewise joins them with a no-break space
(calculators/units.UNIT_SPACE: `quantity` / `with_unit` in code, "\\u00a0" in message templates and their
translations, the character itself in knowledge/*.yaml prose), so a plain space there is a figure a browser may split.

Code spans are left out: they quote an engine's own output ("size = 8192.00 MiB") exactly as it prints it, to be
found in its log, and a page lays a code span out whole (ui/markup.PAGE_STYLE).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from calculators.units import UNIT_SPACE
from tests.support.page_discovery import app_pages
from tests.support.page_text import page_script, page_texts

#: A figure (digits with grouping or decimals in either language), ONE plain space, then a unit or counted word
#: that is not the start of a longer word ("8 secuencias" is a count of a word, "5 steps" too: only units here).
SPLIT_FIGURE = re.compile(
    r"(?<![\w.,])\d(?:[\d.,]*\d)? (?:GiB|MiB|KiB|TiB|GB/s|GB|MB|KB|TB|ms|s|tok/s|tokens/s|requests/s|peticiones/s"
    r"|tokens?|bytes?|TFLOPS|%|B|W)(?![\w/])"
)
_CODE_SPAN = re.compile(r"(`+).+?\1", re.S)


def split_figures(text: str, context: int = 0) -> list[str]:
    """Each figure and unit in `text` (code spans left out) joined by a breakable space, with `context` characters
    of the text before it."""
    prose = _CODE_SPAN.sub(" ", text)
    return [prose[max(0, m.start() - context):m.end()] for m in SPLIT_FIGURE.finditer(prose)]


def test_the_pattern_finds_a_breakable_space_and_nothing_else():
    assert split_figures("Weights: 14,96 GiB", context=9) == ["Weights: 14,96 GiB"]
    assert split_figures("in 301 ms (225–545), 1.552 tokens, 0,1 %, 16 tokens/s, 30 s") == [
        "301 ms", "1.552 tokens", "0,1 %", "16 tokens/s", "30 s"]
    assert split_figures(f"14,96{UNIT_SPACE}GiB, 8{UNIT_SPACE}secuencias, 8 secuencias, Llama 3 8B") == []
    assert split_figures("`size = 8192.00 MiB`, H100 with 80 GBs, 2 steps, v0.6 seconds") == []


@pytest.mark.parametrize("lang", ["en", "es"])
@pytest.mark.parametrize("page", app_pages(), ids=lambda path: path.stem)
def test_no_figure_is_split_from_its_unit(page: Path, lang: str):
    at = AppTest.from_string(page_script(page, lang), default_timeout=300).run()
    assert not at.exception, at.exception
    texts = page_texts(at)
    assert len(texts) > 20, f"the {page.stem} page drew almost nothing ({len(texts)} texts)"
    split = sorted({f"[{t.where}] …{found}" for t in texts for found in split_figures(t.text, 40)})
    assert not split, f"{len(split)} figures on the {page.stem} page ({lang}) may wrap away from their unit:\n" + \
        "\n".join(split[:40])
