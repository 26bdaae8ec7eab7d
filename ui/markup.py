"""Show markup built in reports/ (inline SVG charts, wide tables) and ui/uploads' styles: the one place pages pass
HTML to Streamlit."""

from __future__ import annotations

import streamlit as st


def show_svg(svg: str) -> None:
    """Draw `svg` (markup from reports/svg_charts.py, every text in it escaped there) in a Markdown element.

    Markdown, not st.html or st.image: the Markdown element's script is loaded by every page already, so the
    chart appears without the browser fetching another script first, and its <title> hover texts work.
    """
    if not svg.startswith("<svg ") or "<script" in svg.lower():
        raise ValueError("show_svg draws reports/svg_charts.py markup only")
    # Inside a <div> the markup is a Markdown HTML block, passed through as it is; a bare <svg> would be inline
    # HTML in a paragraph, and Markdown would read a text's `*` or `_` as emphasis and break the SVG apart.
    st.markdown(f'<div class="sw-chart">{svg}</div>', unsafe_allow_html=True)


#: Class of a wide-table box laid out wider than the page on purpose (`min_width_px`): it scrolls sideways by design,
#: where any other box that scrolls at 1024 px is a layout to fix (tests/browser/test_layout_1024.py).
LAID_OUT_WIDE_CLASS = "sw-laid-out-wide"


def show_wide_table(table_markdown: str, min_width_px: int | None = None, one_line_names: bool = False) -> None:
    """Draw a Markdown table (reports/tables.py) that scrolls sideways when it is wider than the page.

    The table stays Markdown, parsed as any other; only the opening and closing <div>s around it are HTML (each
    its own block, so the table between them is Markdown and ends up inside the scrolling box). With
    `min_width_px`, the table is laid out at least that wide and scrolls rather than squeezing prose columns to a
    word per line. With `one_line_names`, the first column's names never wrap ("llama.cpp (llama-" / "server)"
    read as two words in a narrow column).
    """
    if not table_markdown.lstrip().startswith("|") or "<script" in table_markdown.lower():
        raise ValueError("show_wide_table draws reports/tables.py Markdown tables only")
    classes = " ".join(["sw-wide-table"] + [LAID_OUT_WIDE_CLASS] * bool(min_width_px)
                       + ["sw-one-line-names"] * one_line_names)
    inner = f'<div style="min-width:{int(min_width_px)}px">' if min_width_px else "<div>"
    st.markdown(f'<div class="{classes}" style="overflow-x:auto">{inner}\n\n{table_markdown}\n\n</div></div>',
                unsafe_allow_html=True)


def show_style(style: str) -> None:
    """Add one <style> element: ui/uploads.uploader_style (its texts escaped into CSS strings there) or PAGE_STYLE."""
    body = style.removeprefix("<style").split(">", 1)[-1].removesuffix("</style>")
    if not style.startswith("<style") or not style.endswith("</style>") or "<" in body:
        raise ValueError("show_style draws one <style> element with no markup inside")
    st.markdown(style, unsafe_allow_html=True)


#: The style every page gets (app.py). A code span in prose (a flag, a setting, a command) is laid out as one box: it
#: moves to the next line whole instead of breaking at a hyphen ("--enable-auto-tool-" / "choice" read as two
#: words and were retyped wrongly); one wider than its column still wraps inside (max-width), so nothing runs
#: off the page. In a table cell a code span never wraps: the column is made as wide as its widest flag (the
#: tool-call verdicts showed "--enable-" / "auto-tool-" / "choice" in a column sized for its other words).
#: Code blocks (`code` inside `pre`) are left as they are. A wide table drawn with `one_line_names` keeps its first
#: column's names on one line. Table cells are padded 8 px on each side (Streamlit: 12 px): a name or version joined
#: by no-break hyphens (reports/tables.unbroken_words) no longer wraps at them, and at 1024 px the facts currency
#: table (six columns, two of versions) came out 12 px (English) and 27 px (Spanish) wider than the page.
PAGE_STYLE = (
    '<style>[data-testid="stMarkdownContainer"] code:not(pre code) '
    "{display: inline-block; max-width: 100%; vertical-align: bottom}"
    '[data-testid="stMarkdownContainer"] :is(td, th) code:not(pre code) {white-space: nowrap; max-width: none}'
    '[data-testid="stMarkdownContainer"] :is(td, th) {padding-left: 0.5rem; padding-right: 0.5rem}'
    ".sw-one-line-names td:first-child {white-space: nowrap}"
    "</style>"
)


def show_page_style() -> None:
    """Add PAGE_STYLE (a constant: no user text) to the page; app.py calls it once per run, in the sidebar."""
    show_style(PAGE_STYLE)
