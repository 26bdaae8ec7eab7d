"""One look for servewise's plotly charts: titles that wrap to their column, legends that never cover an axis,
one colour per engine.

Pages put up to three charts side by side; at a 1024 px window with the sidebar open the page's main column
is about 560 px wide, so one of three charts gets ~185 px. Titles are wrapped with `<br>` for that width and
start at the chart's left edge above the plot area (plotly grows the top margin to fit them). Legends are
horizontal and anchored to the bottom of the figure itself (`yref="container"`): plotly reserves their rows in
the bottom margin and places the x-axis ticks and title above them, however many rows a narrow column needs.
"""

from __future__ import annotations

import textwrap
from typing import Any

from babel.numbers import get_decimal_symbol, get_group_symbol

from calculators.engines import ENGINES
from calculators.i18n import current_language

#: Width (px) of the page's main column at the narrowest window the app is checked at (1024 px, sidebar open).
NARROW_COLUMN_PX = 560
#: Average width (px) of one character of a chart title at TITLE_FONT_PX, with room for the plot's own padding.
TITLE_CHAR_PX = 8.0
TITLE_FONT_PX = 14
LEGEND_FONT_PX = 11
#: The legend's distance (px) from the figure's bottom edge.
LEGEND_PAD_PX = 4


#: One colour per engine, the same in every chart (from each engine's adapter); others (a baseline) in grey.
ENGINE_COLOURS = {engine.id: engine.colour for engine in ENGINES.values()}
OTHER_COLOUR = "#7f7f7f"


def engine_colour(engine: str) -> str:
    """The colour `engine`'s bars, lines and points have in every chart (grey for an unregistered id)."""
    return ENGINE_COLOURS.get(engine, OTHER_COLOUR)


def title_chars_per_line(columns: int = 1) -> int:
    """How many title characters fit on one line when `columns` charts share the narrow main column."""
    return max(16, int(NARROW_COLUMN_PX / max(columns, 1) / TITLE_CHAR_PX) - 2)


def axis_title_chars_per_line(height_px: int) -> int:
    """How many characters of a y-axis title fit along the plot of a chart `height_px` tall (at 1024 px the
    chart's title, x axis and legend take about 200 px of it; an axis title character is about 7 px)."""
    return max(12, (height_px - 200) // 7)


def wrap_title(text: str, columns: int = 1) -> str:
    """`text` broken with `<br>` into lines that fit one of `columns` side-by-side charts at 1024 px."""
    return "<br>".join(textwrap.wrap(text, title_chars_per_line(columns), break_on_hyphens=False)) or text


def align_titles(*figures: Any) -> None:
    """Give charts drawn side by side titles of the same line count (blank lines on top of the shorter ones), so
    their plot areas start at the same height; titles sit just above their plot (yanchor bottom)."""
    lines = {id(f): (f.layout.title.text or "").count("<br>") + 1 for f in figures if f.layout.title.text}
    most = max(lines.values(), default=1)
    for figure in figures:
        if id(figure) in lines and lines[id(figure)] < most:
            figure.update_layout(title_text=" <br>" * (most - lines[id(figure)]) + figure.layout.title.text)


def chart_layout(
    *,
    title: str | None = None,
    x_title: str | None = None,
    y_title: str | None = None,
    height_px: int = 400,
    columns: int = 1,
) -> dict[str, Any]:
    """Plotly layout keys for a chart drawn in one of `columns` side-by-side columns (`height_px` tall in all).

    Merge the result into the figure's layout (`figure.update_layout(**chart_layout(...))` or a spec's
    layout dict); axes keep any other settings given afterwards with `update_xaxes` / `update_yaxes`.
    """
    layout: dict[str, Any] = {
        "height": height_px,
        "margin": {"l": 10, "r": 10, "t": 20, "b": 10},
        "legend": {
            "orientation": "h", "x": 0, "xanchor": "left", "xref": "paper",
            "y": 0, "yanchor": "bottom", "yref": "container", "font": {"size": LEGEND_FONT_PX},
        },
        "xaxis": {"automargin": True},
        "yaxis": {"automargin": True},
        # hover and tick numbers in the reader's language (1,234.5 / 1.234,5): plotly's decimal then group mark
        "separators": get_decimal_symbol(current_language()) + get_group_symbol(current_language()),
    }  # fmt: skip
    if title:
        layout["title"] = {
            "text": wrap_title(title, columns), "x": 0, "xanchor": "left", "xref": "container",
            "y": 1, "yanchor": "bottom", "yref": "paper", "automargin": True,
            "font": {"size": TITLE_FONT_PX}, "pad": {"b": 8, "l": 6},
        }  # fmt: skip
    if x_title:
        layout["xaxis"]["title"] = {"text": x_title, "standoff": 6}
    if y_title:  # longer than the plot is tall (Spanish often is), it wraps instead of running off the chart
        lines = textwrap.wrap(y_title, axis_title_chars_per_line(height_px), break_on_hyphens=False)
        layout["yaxis"]["title"] = {"text": "<br>".join(lines) or y_title, "standoff": 6}
    return layout
