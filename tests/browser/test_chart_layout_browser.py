"""Charts as drawn in Chromium at 1024 px (the narrowest width checked): titles inside their chart, legends clear
of the plot, its tick labels and the x-axis title; the memory page's bars first after its inputs; the wizard's
points-by-concern chart beside its ranking."""

from __future__ import annotations

import pytest

from reports.svg_charts import MIN_TEXT_PX
from tests.support.browser import open_page
from tests.support.page_links import page_link

pytestmark = pytest.mark.browser

#: Pages with charts, and how many each draws from its typical link.
CHART_PAGES = {"simulator": 3, "planner": 2}  # simulator: the stacked time-series panels + 2 sweeps
#: Inline SVG charts (reports/svg_charts.py) per page.
SVG_PAGES = {"memory": 2, "wizard": 1, "home": 2, "formats": 1, "speed": 2}

_SVG_BOXES_JS = """
svgs => svgs.map(svg => {
  const box = el => { const r = el.getBoundingClientRect(); return {l: r.left, r: r.right, t: r.top, b: r.bottom}; };
  // the size a text is rendered at on screen: its font size times the scale of its screen transform (the viewBox
  // fitted to the column, and its own rotation, which keeps the scale)
  const rendered = t => {
    const m = t.getScreenCTM();
    return parseFloat(getComputedStyle(t).fontSize) * Math.hypot(m.a, m.b);
  };
  return {
    chart: box(svg),
    texts: [...svg.querySelectorAll('text')].filter(t => t.textContent.trim())
      .map(t => ({...box(t), text: t.textContent, slanted: t.hasAttribute('transform'), px: rendered(t)})),
  };
})
"""

# Bounding boxes (px, page coordinates) of each plotly chart's parts; null where a chart has no such part.
_BOXES_JS = """
charts => charts.map(chart => {
  const box = el => { if (!el) return null; const r = el.getBoundingClientRect();
                      return r.width && r.height ? {l: r.left, r: r.right, t: r.top, b: r.bottom} : null; };
  const all = sel => [...chart.querySelectorAll(sel)].map(box).filter(Boolean);
  return {
    chart: box(chart.querySelector('.main-svg')),
    title: box(chart.querySelector('.gtitle')),
    legend: box(chart.querySelector('.infolayer .legend')),
    xtitles: all('.infolayer text[class^="x"][class$="title"]'),
    plots: all('.draglayer .nsewdrag'),  // one per panel of a figure of stacked panels
    xticks: all('.xaxislayer-above .xtick text, .xaxislayer-below .xtick text'),
  };
})
"""


def _overlap(a: dict, b: dict, slack_px: float = 1.0) -> bool:
    return a["l"] < b["r"] - slack_px and b["l"] < a["r"] - slack_px and a["t"] < b["b"] - slack_px and \
        b["t"] < a["b"] - slack_px  # fmt: skip


def _inside(inner: dict, outer: dict, slack_px: float = 1.0) -> bool:
    return inner["l"] >= outer["l"] - slack_px and inner["r"] <= outer["r"] + slack_px


def _chart_boxes(page) -> list[dict]:
    page.wait_for_selector('[data-testid="stPlotlyChart"] .main-svg')
    page.wait_for_timeout(500)  # plotly's last relayout after the script run
    return page.locator('[data-testid="stPlotlyChart"]').evaluate_all(_BOXES_JS)


@pytest.mark.parametrize("lang", ["en", "es"])  # Spanish labels run longer
@pytest.mark.parametrize("name", sorted(CHART_PAGES))
def test_titles_and_legends_clear_the_axes_at_1024_px(app_url, narrow_page, name, lang):
    open_page(narrow_page, page_link(app_url, name, lang))
    charts = _chart_boxes(narrow_page)
    assert len(charts) == CHART_PAGES[name]
    for index, parts in enumerate(charts):
        where = f"{name} ({lang}) chart {index}"
        assert parts["plots"], f"{where}: no plot area"
        if parts["title"]:
            assert _inside(parts["title"], parts["chart"]), f"{where}: title cut off {parts}"
            assert not any(_overlap(parts["title"], plot) for plot in parts["plots"]), f"{where}: title over a plot"
        legend = parts["legend"]
        if legend:
            assert _inside(legend, parts["chart"]), f"{where}: legend cut off {parts}"
            assert not any(_overlap(legend, plot) for plot in parts["plots"]), f"{where}: legend over a plot"
            assert not any(_overlap(legend, xt) for xt in parts["xtitles"]), f"{where}: legend over an x title"
            assert not any(_overlap(legend, tick) for tick in parts["xticks"]), f"{where}: legend over ticks"
        for upper, lower in zip(parts["plots"], parts["plots"][1:], strict=False):  # stacked panels: own room
            assert not _overlap(upper, lower), f"{where}: two panels overlap"


def test_memory_bars_are_the_first_thing_after_the_inputs(app_url, page):
    open_page(page, page_link(app_url, "memory"))
    # In document order: the first chart comes before any table, and it is the stacked bars (inline SVG, drawn
    # without plotly's script: reports/svg_charts.py), with their legend.
    bars_selector = 'svg.memory-bars'
    order = page.evaluate(
        """() => [...document.querySelectorAll(
              '[data-testid="stPlotlyChart"], svg.sw-bars, svg.sw-lines, [data-testid="stDataFrame"], '
              + '[data-testid="stTable"], [data-testid="stMarkdown"] table')]
            .map(el => el.getAttribute('class') || el.dataset.testid || el.tagName)"""
    )
    assert order and "memory-bars" in order[0], order
    legend = " ".join(page.locator(f"{bars_selector} .sw-legend").all_text_contents())
    assert "KV cache" in legend and "Weights" in legend
    # Nothing but a heading and its caption between the inputs (the engine settings) and the bars.
    between = page.evaluate(
        """() => {
             const chart = document.querySelector('svg.memory-bars');
             const inputs = [...document.querySelectorAll('[data-testid="stExpander"], [data-testid="stTextArea"]')]
               .filter(el => el.compareDocumentPosition(chart) & Node.DOCUMENT_POSITION_FOLLOWING);
             const last = inputs[inputs.length - 1];
             return [...document.querySelectorAll('[data-testid="stElementContainer"]')]
               .filter(el => (last.compareDocumentPosition(el) & Node.DOCUMENT_POSITION_FOLLOWING)
                             && !last.contains(el) && !el.contains(chart)
                             && (el.compareDocumentPosition(chart) & Node.DOCUMENT_POSITION_FOLLOWING))
               .map(el => el.dataset.testid + ':' + (el.firstElementChild ? el.firstElementChild.dataset.testid : ''));
           }"""
    )
    assert all(item.split(":")[1] in ("stHeading", "stCaptionContainer", "stMarkdown") for item in between), between


def test_wizard_concern_chart_sits_beside_the_ranking(app_url, page):
    open_page(page, page_link(app_url, "wizard"))
    # the chart is inline SVG (no plotly to load first)
    chart_selector = "svg.wizard-concerns"
    row = (
        page.locator('[data-testid="stHorizontalBlock"]')
        .filter(has=page.locator(chart_selector))
        .filter(has=page.locator('[data-testid="stMarkdown"] table'))
    )
    assert row.count() == 1  # ranking table and chart share one row
    ranking = row.first.locator('[data-testid="stMarkdown"] table').bounding_box()
    chart = row.first.locator(chart_selector).bounding_box()
    assert chart["x"] >= ranking["x"] + ranking["width"] - 1  # to the right of the ranking
    assert abs(chart["y"] - ranking["y"]) < 40  # at the same height
    assert "Points by concern" in row.first.locator(f"{chart_selector} .sw-title").text_content()


@pytest.mark.parametrize("lang", ["en", "es"])  # Spanish labels run longer
@pytest.mark.parametrize("name", sorted(SVG_PAGES))
def test_svg_chart_texts_never_overlap_or_leave_the_chart_at_1024_px(app_url, narrow_page, name, lang):
    open_page(narrow_page, page_link(app_url, name, lang))
    charts = narrow_page.locator('[data-testid="stMarkdown"] .sw-chart > svg').evaluate_all(_SVG_BOXES_JS)
    assert len(charts) == SVG_PAGES[name]
    for index, chart in enumerate(charts):
        where = f"{name} ({lang}) SVG chart {index}"
        texts = chart["texts"]
        for text in texts:
            assert _inside(text, chart["chart"]), f"{where}: {text['text']!r} cut off"
            # an SVG scales its text with it: drawn too wide for its column, labels read at 5-8 px (issue 19)
            assert text["px"] >= MIN_TEXT_PX, f"{where}: {text['text']!r} drawn at {text['px']:.1f} px"
        level = [text for text in texts if not text["slanted"]]  # a slanted text's box is not its outline
        for i, a in enumerate(level):
            for b in level[i + 1:]:
                assert not _overlap(a, b), f"{where}: {a['text']!r} over {b['text']!r}"


def test_the_formats_matrix_is_on_the_first_screen_at_1024_px(app_url, narrow_page):
    """A link to the Formats page is for its matrix: the explanations above it start closed (open, their ~600 px of
    prose pushed the matrix below a 1000 px tall window)."""
    open_page(narrow_page, page_link(app_url, "formats", "es"))
    top = narrow_page.locator("svg.formats-matrix").bounding_box()["y"]
    assert top < 1000, f"the matrix starts at {top:.0f} px"
