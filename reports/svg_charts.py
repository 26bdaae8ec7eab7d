"""Stacked bars and line charts as one inline SVG string: a page's pictures drawn without a chart library.

A shared link opens in a fresh browser, and Streamlit loads each element type's script the first time a page
uses it: plotly's is 4.7 MB, which the browser must fetch and compile before the first plotly chart appears.
An SVG inside the Markdown element the page already needs costs nothing extra, so the result a user opened
the link for is on screen as soon as the script reaches it. Hovering a bar segment or a point shows its value
(an SVG `<title>`). Pages show the string with `st.markdown(svg, unsafe_allow_html=True)`; no Streamlit calls here.
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Callable
from dataclasses import dataclass, field
from html import escape
from itertools import pairwise

from calculators.i18n import _
from reports.numbers import compact, number, quantity

#: Drawing units of the SVG's viewBox; the SVG scales to its column's width (text scales with it). 560 units are
#: the main column's 564 px at 1024 px, so a chart is drawn there at 1:1 and an 11-unit tick label reads at 11 px
#: (at 600 units it was 10.3 px, at 760 units 8 px); at 1440 px the chart grows to at most `WIDE_SCALE` times this.
WIDTH = 560
WIDE_SCALE = 1.3
#: Smallest text size a chart may be drawn at, in CSS px, at the narrowest width checked (1024 px).
MIN_TEXT_PX = 11
LEGEND_ROW = 20
PLOT_BOTTOM_PAD = 50
#: Average width of one 12-unit character (for laying out legend entries and wrapping category names).
CHAR_W = 6.6
PLOT_LEFT = 64
PLOT_RIGHT_PAD = 12
FONT = "font-family:'Source Sans Pro',sans-serif"


@dataclass(frozen=True)
class Band:
    """One stacked band: its legend name, colour and one value per category (in the chart's unit)."""

    name: str
    colour: str
    values: list[float]


@dataclass(frozen=True)
class StackedBars:
    """A stacked bar chart: categories on x, bands stacked bottom to top, an optional mark per category."""

    categories: list[str]
    bands: list[Band]
    y_title: str
    unit: str
    #: A horizontal mark per category (e.g. a device's capacity); None = no mark for that category.
    marks: list[float | None] = field(default_factory=list)
    mark_name: str = ""
    #: Text written above a category's bar (e.g. "refuses to start"); "" = none. Grey unless `alarm`.
    notes: list[str] = field(default_factory=list)
    #: Categories whose note is a warning (drawn in red).
    alarm: list[bool] = field(default_factory=list)
    height: int = 360
    css_class: str = "sw-bars"


def nice_step(top: float, ticks: int = 5, multiples: tuple[float, ...] = (1, 2, 2.5, 5, 10)) -> float:
    """A round tick step (one of `multiples` times a power of ten) giving about `ticks` ticks from 0 to `top`."""
    raw = max(top, 1e-9) / ticks
    power = 10 ** math.floor(math.log10(raw))
    return next(m * power for m in multiples if m * power >= raw)


def _escaped(text: str) -> str:
    """`text` for SVG markup: markup characters escaped, line breaks as character references, so the SVG stays
    one line (Markdown ends an HTML block at a blank line) and a hover text keeps its lines."""
    return escape(text).replace("\r\n", "&#10;").replace("\n", "&#10;")


def _text(x: float, y: float, text: str, size: int = 12, anchor: str = "middle", colour: str = "#31333f",
          extra: str = "") -> str:
    return (f'<text x="{x:.1f}" y="{y:.1f}" font-size="{size}" text-anchor="{anchor}" fill="{colour}" '
            f'style="{FONT}"{extra}>{_escaped(text)}</text>')


def _legend_rows(entries: list[str], left: float, right: float) -> list[list[tuple[float, str]]]:
    """Legend entries laid out left to right, wrapping to a new row when the next one would pass `right`."""
    rows: list[list[tuple[float, str]]] = [[]]
    x = left
    for name in entries:
        width = 17 + CHAR_W * len(name) + 16
        if rows[-1] and x + width - 16 > right:
            rows.append([])
            x = left
        rows[-1].append((x, name))
        x += width
    return rows


def _svg_open(css_class: str, width: float, height: float, title: str = "", max_scale: float = 1.4) -> list[str]:
    """The opening <svg> tag (scaling to its column, at most `max_scale` times its drawn width) and its title."""
    parts = [f'<svg class="{css_class}" viewBox="0 0 {width:.0f} {height:.0f}" width="100%" role="img" '
             f'xmlns="http://www.w3.org/2000/svg" style="max-width:{width * max_scale:.0f}px">']
    return parts + ([f"<title>{_escaped(title)}</title>"] if title else [])


def _draw_legend(parts: list[str], rows: list[list[tuple[float, str]]], styles: dict[str, tuple[str, str]],
                 top: float) -> None:
    """Legend rows from `_legend_rows`, starting at `top`: a swatch ("rect"), a line ("line"), a dashed line
    ("dash") or an open point ("ring") and each name."""
    for row_index, row in enumerate(rows):
        top_y = top + LEGEND_ROW * row_index
        for x, name in row:
            colour, shape = styles[name]
            if shape == "rect":
                parts.append(f'<rect x="{x:.1f}" y="{top_y}" width="12" height="12" fill="{colour}"/>')
            elif shape == "ring":
                parts.append(f'<circle cx="{x + 7:.1f}" cy="{top_y + 6}" r="4" fill="#fff" stroke="{colour}" '
                             f'stroke-width="2"/>')
            else:
                dash = ' stroke-dasharray="4 2"' if shape == "dash" else ""
                parts.append(f'<line x1="{x:.1f}" y1="{top_y + 6}" x2="{x + 14:.1f}" y2="{top_y + 6}" '
                             f'stroke="{colour}" stroke-width="3"{dash}/>')
            parts.append(_text(x + 17, top_y + 10.5, name, 12, "start", extra=' class="sw-legend"'))


def stacked_bars_svg(chart: StackedBars) -> str:
    """The chart as one line of SVG markup (no blank lines, so Markdown keeps it as one HTML block)."""
    n = len(chart.categories)
    totals = [sum(band.values[i] for band in chart.bands) for i in range(n)]
    marks = chart.marks or [None] * n
    top = max([*totals, *(m for m in marks if m is not None), 1e-9]) * 1.05
    step = nice_step(top)
    top = max(top, step)
    marked = any(m is not None for m in marks) and chart.mark_name
    styles = {band.name: (band.colour, "rect") for band in chart.bands}
    if marked:
        styles[chart.mark_name] = ("#000", "line")
    legend = _legend_rows(list(styles), PLOT_LEFT, WIDTH - PLOT_RIGHT_PAD)
    plot_top = 24 + LEGEND_ROW * len(legend)
    plot_bottom = chart.height - PLOT_BOTTOM_PAD
    plot_h = plot_bottom - plot_top
    plot_w = WIDTH - PLOT_LEFT - PLOT_RIGHT_PAD
    slot = plot_w / max(n, 1)
    bar_w = min(slot * 0.6, 120)

    def y_of(value: float) -> float:
        return plot_bottom - value / top * plot_h

    parts = _svg_open(chart.css_class, WIDTH, chart.height, chart.y_title, WIDE_SCALE)
    _draw_legend(parts, legend, styles, 8)  # on top: a swatch (or the mark's line) and each band's name
    # Grid lines and y ticks.
    value = 0.0
    while value <= top + 1e-9:
        y = y_of(value)
        parts.append(f'<line x1="{PLOT_LEFT}" y1="{y:.1f}" x2="{WIDTH - PLOT_RIGHT_PAD}" y2="{y:.1f}" '
                     f'stroke="#e6e6e6" stroke-width="1"/>')
        parts.append(_text(PLOT_LEFT - 6, y + 4, number(value, 0 if step >= 1 else 1), 11, "end"))
        value += step
    axis_mid = (plot_top + plot_bottom) / 2
    parts.append(_text(14, axis_mid, chart.y_title, 12, extra=f' transform="rotate(-90 14 {axis_mid:.1f})"'))
    # Bars, bottom band first; each segment's hover text names the category, band and value.
    for i, category in enumerate(chart.categories):
        centre = PLOT_LEFT + slot * (i + 0.5)
        base = 0.0
        for band in chart.bands:
            height_value = band.values[i]
            if height_value <= 0:
                continue
            y_top, y_base = y_of(base + height_value), y_of(base)
            tip = f"{category} · {band.name}: {quantity(height_value, chart.unit, 2)}"
            parts.append(f'<rect x="{centre - bar_w / 2:.1f}" y="{y_top:.1f}" width="{bar_w:.1f}" '
                         f'height="{max(y_base - y_top, 0.5):.1f}" fill="{band.colour}"><title>{_escaped(tip)}'
                         f"</title></rect>")
            base += height_value
        mark = marks[i]
        if mark is not None:
            y = y_of(mark)
            tip = f"{category} · {chart.mark_name}: {quantity(mark, chart.unit, 2)}"
            parts.append(f'<line x1="{centre - bar_w / 2 - 8:.1f}" y1="{y:.1f}" x2="{centre + bar_w / 2 + 8:.1f}" '
                         f'y2="{y:.1f}" stroke="#000" stroke-width="3"><title>{_escaped(tip)}</title></line>')
        note = chart.notes[i] if chart.notes else ""
        if note:
            colour = "#b00" if chart.alarm and chart.alarm[i] else "#666"
            parts.append(_text(centre, y_of(totals[i]) - 6, note, 12, colour=colour))
        lines = textwrap.wrap(category, max(6, int(slot / CHAR_W)), break_on_hyphens=False) or [category]
        for line_index, line in enumerate(lines[:2]):
            parts.append(_text(centre, plot_bottom + 18 + 15 * line_index, line, 12, extra=' class="sw-category"'))
    parts.append(f'<line x1="{PLOT_LEFT}" y1="{plot_bottom}" x2="{WIDTH - PLOT_RIGHT_PAD}" y2="{plot_bottom}" '
                 f'stroke="#888" stroke-width="1"/>')
    parts.append("</svg>")
    return "".join(parts)


@dataclass(frozen=True)
class Line:
    """One line of a line chart: its legend name, colour and (x, y) points."""

    name: str
    colour: str
    points: list[tuple[float, float]]
    #: An optional band around the line, drawn shaded: (low, high) per point, in the y unit (empty: no band).
    band: list[tuple[float, float]] = field(default_factory=list)
    #: An optional note per point ("" for none; empty list: no notes), shown after its value in its hover text; a
    #: point with a note is drawn open (a ring), as a value that is a bound rather than the answer (a capped search).
    notes: list[str] = field(default_factory=list)


#: What a line chart's hover writes after a figure: a unit ("tokens/s"), or for a count a function of the count that
#: gives its phrase with an {n} field, singular or plural in the reader's language
#: (`lambda n: ngettext("{n}\u00a0sequence", "{n}\u00a0sequences", n)`): a hover read "1 sequences".
HoverUnit = str | Callable[[int], str]


def hover_figure(value: float, unit: HoverUnit) -> str:
    """`value` rounded to a whole number with its unit (a count's phrase for the rounded count), unbreakable."""
    if isinstance(unit, str):
        return quantity(value, unit, 0)
    count = round(value)  # half to even, as Babel rounds the written figure
    return unit(count).format(n=number(count))


@dataclass(frozen=True)
class LineChart:
    """Lines over a log-scaled or linear x axis, with an optional dotted vertical marker (e.g. the chosen x)."""

    lines: list[Line]
    x_title: str
    y_title: str
    x_unit: HoverUnit
    y_unit: HoverUnit
    x_log: bool = False
    #: x positions of the x ticks and their labels.
    x_ticks: list[tuple[float, str]] = field(default_factory=list)
    marker_x: float | None = None
    marker_label: str = ""
    height: int = 360
    css_class: str = "sw-lines"
    #: The legend's entry for the open points (points with a note, `Line.notes`), drawn when a line has one.
    open_point_name: str = ""


#: Two lines' points at one x closer than this share of the y axis's height are drawn on top of each other (2 units
#: of a 250-unit plot, a 2-unit line's width): the later line hides the earlier one there.
COINCIDE_SHARE = 0.008
#: The dash pattern of a line drawn over an earlier one it coincides with: the earlier line shows in its gaps.
OVER_DASH = "7 5"


def coinciding_points(lines: list[Line], top: float) -> list[list[list[int]]]:
    """For each line, for each of its points: the earlier lines (their indices) with a point at the same x whose y
    is within COINCIDE_SHARE of the axis `top` of it, so drawn there the two would be one."""
    found: list[list[list[int]]] = []
    for index, line in enumerate(lines):
        earlier = [dict(other.points) for other in lines[:index]]
        near = COINCIDE_SHARE * top
        found.append([[j for j, points in enumerate(earlier) if x in points and abs(points[x] - y) <= near]
                      for x, y in line.points])
    return found


def lies_on(points_over: list[list[int]]) -> list[int]:
    """The earlier lines a line hides along at least half of its segments (both ends coinciding with that line's
    points, `coinciding_points`): drawn solid, it would make them disappear there."""
    segments = max(len(points_over) - 1, 1)
    shared = [j for start, end in pairwise(points_over) for j in start if j in end]
    return sorted({j for j in shared if 2 * shared.count(j) >= segments})


def line_chart_svg(chart: LineChart) -> str:
    """The chart as one line of SVG markup: lines with round points, ticks, grid, legend on top.

    A line that lies on an earlier one along half its length or more (SGLang on vLLM: the same sequences fit, or
    within one) is drawn dashed, so the earlier line shows in its gaps, and its legend entry says so; wherever a
    point lies on an earlier line's point it is drawn smaller, the earlier one a ring around it, and its hover
    gives the other line's figure too."""
    xs = [x for line in chart.lines for x, _y in line.points] + ([chart.marker_x] if chart.marker_x else [])
    xs += [x for x, _label in chart.x_ticks]
    ys = [y for line in chart.lines for _x, y in line.points]
    ys += [high for line in chart.lines for _low, high in line.band]
    scale = (lambda v: math.log10(max(v, 1e-12))) if chart.x_log else (lambda v: v)
    x_lo, x_hi = (min(map(scale, xs)), max(map(scale, xs))) if xs else (0.0, 1.0)
    if x_hi <= x_lo:
        x_hi = x_lo + 1
    top = max([*ys, 1e-9]) * 1.05
    step = nice_step(top)
    top = max(top, step)
    over = coinciding_points(chart.lines, top)
    legend_names = {}
    for line, points_over in zip(chart.lines, over, strict=True):
        under = lies_on(points_over)
        legend_names[line.name] = line.name if not under else _("{line} (dashed where it lies on {other})").format(
            line=line.name, other=", ".join(chart.lines[j].name for j in under))
    styles = {legend_names[line.name]: (line.colour, "dash" if legend_names[line.name] != line.name else "line")
              for line in chart.lines}
    if chart.open_point_name and any(note for line in chart.lines for note in line.notes):
        styles[chart.open_point_name] = ("#555", "ring")
    legend = _legend_rows(list(styles), PLOT_LEFT, WIDTH - PLOT_RIGHT_PAD)
    plot_top = 24 + LEGEND_ROW * len(legend)
    plot_bottom = chart.height - PLOT_BOTTOM_PAD
    plot_left, plot_right = PLOT_LEFT, WIDTH - PLOT_RIGHT_PAD - 8

    def x_of(value: float) -> float:
        return plot_left + (scale(value) - x_lo) / (x_hi - x_lo) * (plot_right - plot_left)

    def y_of(value: float) -> float:
        return plot_bottom - value / top * (plot_bottom - plot_top)

    parts = _svg_open(chart.css_class, WIDTH, chart.height, chart.y_title, WIDE_SCALE)
    _draw_legend(parts, legend, styles, 8)
    value = 0.0
    while value <= top + 1e-9:
        y = y_of(value)
        parts.append(f'<line x1="{plot_left}" y1="{y:.1f}" x2="{plot_right}" y2="{y:.1f}" stroke="#e6e6e6"/>')
        parts.append(_text(plot_left - 6, y + 4, number(value, 0 if step >= 1 else 1), 11, "end"))
        value += step
    for x, label in chart.x_ticks:
        parts.append(_text(x_of(x), plot_bottom + 16, label, 11))
    parts.append(_text((plot_left + plot_right) / 2, plot_bottom + 36, chart.x_title, 12))
    axis_mid = (plot_top + plot_bottom) / 2
    parts.append(_text(14, axis_mid, chart.y_title, 12, extra=f' transform="rotate(-90 14 {axis_mid:.1f})"'))
    parts.append(f'<line x1="{plot_left}" y1="{plot_bottom}" x2="{plot_right}" y2="{plot_bottom}" stroke="#888"/>')
    if chart.marker_x is not None:
        x = x_of(chart.marker_x)
        parts.append(f'<line x1="{x:.1f}" y1="{plot_top}" x2="{x:.1f}" y2="{plot_bottom}" stroke="#888" '
                     f'stroke-dasharray="3 3"/>')
        parts.append(_text(x, plot_top - 4, chart.marker_label, 11, colour="#666"))
    for line in chart.lines:
        if line.band:
            if len(line.band) != len(line.points):
                raise ValueError(f"line {line.name!r}: {len(line.band)} band entries for {len(line.points)} points")
            outline = ([(x, high) for (x, _y), (_low, high) in zip(line.points, line.band, strict=True)]
                       + [(x, low) for (x, _y), (low, _high) in reversed(list(zip(line.points, line.band,
                                                                                   strict=True)))])
            corners = " ".join(f"{x_of(x):.1f},{y_of(y):.1f}" for x, y in outline)
            parts.append(f'<polygon points="{corners}" fill="{line.colour}" fill-opacity="0.15" stroke="none"/>')
    for line, points_over in zip(chart.lines, over, strict=True):
        path = " ".join(f"{x_of(x):.1f},{y_of(y):.1f}" for x, y in line.points)
        dash = f' stroke-dasharray="{OVER_DASH}"' if lies_on(points_over) else ""
        parts.append(f'<polyline points="{path}" fill="none" stroke="{line.colour}" stroke-width="2"{dash}/>')
        if line.notes and len(line.notes) != len(line.points):
            raise ValueError(f"line {line.name!r}: {len(line.notes)} notes for {len(line.points)} points")
        for index, (x, y) in enumerate(line.points):
            tip = f"{line.name} · {hover_figure(x, chart.x_unit)}: {hover_figure(y, chart.y_unit)}"
            if line.band:
                low, high = line.band[index]
                tip += f" ({number(low, 0)}–{number(high, 0)})"
            # the point hides the earlier lines' points under it: its hover gives their figures too
            tip += "".join(f"; {chart.lines[j].name}: {hover_figure(dict(chart.lines[j].points)[x], chart.y_unit)}"
                           for j in points_over[index])
            note = line.notes[index] if line.notes else ""
            tip += f" ({note})" if note else ""
            fill = f'fill="#fff" stroke="{line.colour}" stroke-width="2"' if note else f'fill="{line.colour}"'
            radius = 2.5 if points_over[index] else 4  # the earlier point shows as a ring around it
            parts.append(f'<circle cx="{x_of(x):.1f}" cy="{y_of(y):.1f}" r="{radius}" {fill}>'
                         f"<title>{_escaped(tip)}</title></circle>")
    parts.append("</svg>")
    return "".join(parts)


@dataclass(frozen=True)
class Node:
    """A box of a flow diagram: its label (lines split at a literal backslash-n, as graphviz writes them), fill
    colour and place in a grid (column, row; halves allowed)."""

    key: str
    label: str
    fill: str
    column: float
    row: float


@dataclass(frozen=True)
class Edge:
    """An arrow between two boxes, with an optional label; dashed for a path taken later."""

    source: str
    target: str
    label: str = ""
    dashed: bool = False


# Boxes 180 units wide: two columns of them and the widest arrow label between fit the 564 px column at 1024 px
# at >= 0.9 scale, so a 13-unit label reads at >= 11.7 px (220-unit boxes scaled the home page's to 0.80: 10.4 px).
BOX_W, BOX_GAP_X, ROW_H, LINE_H = 180, 70, 120, 17
BOX_CHARS = 22  # characters of 14-unit text per line inside a box
EDGE_TEXT = 13  # size of an arrow's label


def _text_width(text: str, size: float) -> float:
    """Estimated drawn width of `text` at `size` units (CHAR_W is the average 12-unit character)."""
    return CHAR_W * size / 12 * len(text)


def _edge_label(label: str, x1: float, y1: float, x2: float, y2: float) -> str:
    """An arrow's label beside the middle of the arrow, on the side its line leaves free.

    A horizontal arrow's label sits centred above it, a vertical one's starts just right of it. A slanted arrow's
    label ends just left of its middle when the arrow runs down to the left (its line is to the right above the
    middle) and starts just right of it when the arrow runs down to the right, its baseline a little above the
    middle: centred on the middle, the home page's "over the limit" was crossed by its own arrow."""
    mx, my = (x1 + x2) / 2, (y1 + y2) / 2
    if abs(x2 - x1) < 1:
        x, y, anchor = mx + 6, my + 4, "start"
    elif abs(y2 - y1) < 1:
        x, y, anchor = mx, my - 7, "middle"
    elif (x2 - x1) * (y2 - y1) < 0:
        x, y, anchor = mx - 6, my - 2, "end"
    else:
        x, y, anchor = mx + 6, my - 2, "start"
    return _text(x, y, label, EDGE_TEXT, anchor, "#444",
                 extra=' class="sw-edge" paint-order="stroke" stroke="#fff" stroke-width="4"')


def flow_diagram_svg(nodes: list[Node], edges: list[Edge], css_class: str = "sw-flow") -> str:
    """Boxes and arrows as one line of SVG markup (a small graphviz-like diagram without graphviz's script).

    Columns are spread apart just enough for the label of an arrow between two boxes of one row, so a label never
    runs under a box; a label drawn beside a vertical arrow widens the picture instead of leaving it. Labels are
    drawn last, on a white halo, beside their arrow (`_edge_label`), so no line crosses them.
    """
    lines = {node.key: [piece for part in node.label.split("\\n")
                        for piece in (textwrap.wrap(part, BOX_CHARS, break_on_hyphens=False) or [part])]
             for node in nodes}
    heights = {key: LINE_H * len(text) + 18 for key, text in lines.items()}
    rows = {node.key: node.row for node in nodes}
    level_labels = [_text_width(edge.label, EDGE_TEXT) for edge in edges
                    if edge.label and rows[edge.source] == rows[edge.target]]
    gap_x = max([BOX_GAP_X, *(width + 24 for width in level_labels)])
    centres = {node.key: (20 + BOX_W / 2 + node.column * (BOX_W + gap_x), 20 + ROW_H / 2 + node.row * ROW_H)
               for node in nodes}

    def border(key: str, towards: tuple[float, float]) -> tuple[float, float]:
        """Where the line from `key`'s centre towards a point leaves its box."""
        (x, y), (tx, ty) = centres[key], towards
        dx, dy = tx - x, ty - y
        half_w, half_h = BOX_W / 2, heights[key] / 2
        scale = min(half_w / abs(dx) if dx else math.inf, half_h / abs(dy) if dy else math.inf)
        return x + dx * scale, y + dy * scale

    arrows, labels, right = [], [], max(x for x, _y in centres.values()) + BOX_W / 2
    for edge in edges:
        x1, y1 = border(edge.source, centres[edge.target])
        x2, y2 = border(edge.target, centres[edge.source])
        dash = ' stroke-dasharray="5 4"' if edge.dashed else ""
        arrows.append(f'<line x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}" stroke="#555" '
                      f'stroke-width="1.5"{dash} marker-end="url(#sw-arrow)"/>')
        if edge.label:
            labels.append(_edge_label(edge.label, x1, y1, x2, y2))
            if abs(x2 - x1) < 1:  # a vertical arrow's label starts just right of it and may widen the picture
                right = max(right, (x1 + x2) / 2 + 6 + _text_width(edge.label, EDGE_TEXT))
    width = right + 20
    height = max(y for _x, y in centres.values()) + ROW_H / 2 + 10
    parts = [*_svg_open(css_class, width, height, max_scale=1.0),
             '<defs><marker id="sw-arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" '
             'orient="auto-start-reverse"><path d="M 0 0 L 10 5 L 0 10 z" fill="#555"/></marker></defs>', *arrows]
    for node in nodes:
        x, y = centres[node.key]
        h = heights[node.key]
        parts.append(f'<rect x="{x - BOX_W / 2:.1f}" y="{y - h / 2:.1f}" width="{BOX_W}" height="{h}" rx="8" '
                     f'fill="{node.fill}" stroke="#8da2c0"/>')
        first = y - h / 2 + 9 + LINE_H * 0.8
        for index, text in enumerate(lines[node.key]):
            parts.append(_text(x, first + index * LINE_H, text, 14, extra=' class="sw-node"'))
    parts += labels
    parts.append("</svg>")
    return "".join(parts)


@dataclass(frozen=True)
class DivergingBars:
    """Horizontal stacked bars around zero: one row per category, positive parts to the right of the zero line
    and negative parts to the left, each band in its colour (e.g. points by concern per engine)."""

    categories: list[str]
    bands: list[Band]
    x_title: str
    title: str = ""
    css_class: str = "sw-diverging"
    #: Drawing width in viewBox units: about the px width of the column it is drawn in at 1024 px, so its text
    #: keeps its size there; category names wrap onto two lines to leave the bars room.
    width: int = 560


def diverging_bars_svg(chart: DivergingBars) -> str:
    """The chart as one line of SVG markup; hovering a segment shows its category, band and signed value."""
    n = len(chart.categories)
    width, right_pad, row_h = chart.width, 16, 34
    names = [textwrap.wrap(category, 14, break_on_hyphens=False)[:2] or [category] for category in chart.categories]
    label_w = 14 + max([_text_width(line, 12) for lines in names for line in lines] or [40])
    positive = [sum(max(band.values[i], 0) for band in chart.bands) for i in range(n)]
    negative = [sum(min(band.values[i], 0) for band in chart.bands) for i in range(n)]
    low, high = min([*negative, 0.0]), max([*positive, 0.0])
    if high - low <= 0:
        high = 1.0
    # whole points: a 2.5 step drew -7.5 and -2.5 as "-8" and "-2", ticks that looked unevenly spaced
    step = nice_step(high - low, 4, (1, 2, 5, 10))
    low, high = math.floor(low / step) * step, math.ceil(high / step) * step
    legend = _legend_rows([band.name for band in chart.bands], 8, width - right_pad)
    top = (26 if chart.title else 6) + LEGEND_ROW * len(legend) + 8
    plot_left, plot_right = label_w, width - right_pad
    bottom = top + row_h * n
    height = bottom + 44

    def x_of(value: float) -> float:
        return plot_left + (value - low) / (high - low) * (plot_right - plot_left)

    parts = _svg_open(chart.css_class, width, height, chart.title or chart.x_title)
    if chart.title:
        parts.append(_text(8, 16, chart.title, 14, "start", extra=' class="sw-title" font-weight="600"'))
    _draw_legend(parts, legend, {band.name: (band.colour, "rect") for band in chart.bands}, 26 if chart.title else 6)
    value = low
    while value <= high + 1e-9:
        x = x_of(value)
        parts.append(f'<line x1="{x:.1f}" y1="{top}" x2="{x:.1f}" y2="{bottom}" stroke="#e6e6e6"/>')
        parts.append(_text(x, bottom + 16, ("+" if value > 0 else "") + compact(value, 2), 11))
        value += step
    parts.append(_text((plot_left + plot_right) / 2, bottom + 36, chart.x_title, 12))
    for i, category in enumerate(chart.categories):
        y = top + row_h * i + 6
        # one <text> per category (its lines as <tspan>s), so the name reads whole to a screen reader and a test
        first = y + (row_h - 12) / 2 + 4 - 7 * (len(names[i]) - 1)
        lines = "".join(f'<tspan x="{plot_left - 8:.1f}" y="{first + 14 * index:.1f}">{_escaped(line)}'
                        f'{" " if index < len(names[i]) - 1 else ""}</tspan>' for index, line in enumerate(names[i]))
        parts.append(f'<text font-size="12" text-anchor="end" fill="#31333f" style="{FONT}" class="sw-category">'
                     f"{lines}</text>")
        right, left = 0.0, 0.0
        for band in chart.bands:
            value = band.values[i]
            if value == 0:
                continue
            start, end = (right, right + value) if value > 0 else (left + value, left)
            if value > 0:
                right += value
            else:
                left += value
            tip = f"{category} · {band.name}: {'+' if value > 0 else ''}{number(value)}"
            parts.append(f'<rect x="{x_of(start):.1f}" y="{y:.1f}" width="{x_of(end) - x_of(start):.1f}" '
                         f'height="{row_h - 12}" fill="{band.colour}"><title>{_escaped(tip)}</title></rect>')
    zero = x_of(0)
    parts.append(f'<line x1="{zero:.1f}" y1="{top - 2}" x2="{zero:.1f}" y2="{bottom + 2}" stroke="#31333f" '
                 f'stroke-width="2"/>')
    parts.append("</svg>")
    return "".join(parts)


GRID_SLANT_DEG = 60


@dataclass(frozen=True)
class GridCell:
    """One cell of a status grid: fill colour, a short mark drawn in it and its hover text."""

    fill: str
    mark: str
    tip: str


@dataclass(frozen=True)
class StatusGrid:
    """Rows x columns of coloured cells (e.g. engines x formats), column names slanted on top, one cell framed."""

    rows: list[str]
    columns: list[str]
    cells: list[list[GridCell]]
    #: (row, column) index of the framed cell, or None.
    highlight: tuple[int, int] | None = None
    css_class: str = "sw-grid"


def status_grid_svg(grid: StatusGrid) -> str:
    """The grid as one line of SVG markup; hovering a cell shows its text."""
    # Column names slanted at 60 degrees: they need little room to the right of the last column, so seventeen
    # format columns fit WIDTH units and the grid is drawn at 1:1 at 1024 px (at 35 degrees and 826 units wide
    # it was scaled to 0.68 and its marks read at 7.5 px). A cell is at least 22 units, room for an 11-unit "exp*".
    cos, sin = math.cos(math.radians(GRID_SLANT_DEG)), math.sin(math.radians(GRID_SLANT_DEG))
    label_w = 8 + CHAR_W * max((len(r) for r in grid.rows), default=4)
    overhang = cos * CHAR_W * len(grid.columns[-1] if grid.columns else "") + 8  # the last column's slanted name
    cell_w = max(22.0, (WIDTH - label_w - overhang) / max(len(grid.columns), 1))
    cell_h = 30
    header_h = 16 + sin * CHAR_W * max((len(c) for c in grid.columns), default=4)
    width = label_w + cell_w * len(grid.columns) + overhang
    height = header_h + cell_h * len(grid.rows) + 8
    parts = _svg_open(grid.css_class, width, height)
    for j, column in enumerate(grid.columns):
        x = label_w + cell_w * (j + 0.5)
        parts.append(_text(x, header_h - 6, column, 12, "start", extra=f' transform="rotate(-{GRID_SLANT_DEG} '
                           f'{x:.1f} {header_h - 6:.1f})" class="sw-column"'))
    for i, row in enumerate(grid.rows):
        y = header_h + cell_h * i
        parts.append(_text(label_w - 8, y + cell_h / 2 + 4, row, 12, "end", extra=' class="sw-category"'))
        for j, cell in enumerate(grid.cells[i]):
            x = label_w + cell_w * j
            parts.append(f'<rect x="{x + 1:.1f}" y="{y + 1:.1f}" width="{cell_w - 2:.1f}" height="{cell_h - 2}" '
                         f'fill="{cell.fill}"><title>{_escaped(cell.tip)}</title></rect>')
            parts.append(_text(x + cell_w / 2, y + cell_h / 2 + 4, cell.mark, 11, colour="#111",
                               extra=' pointer-events="none"'))
    if grid.highlight is not None:
        i, j = grid.highlight
        parts.append(f'<rect x="{label_w + cell_w * j:.1f}" y="{header_h + cell_h * i:.1f}" width="{cell_w:.1f}" '
                     f'height="{cell_h}" fill="none" stroke="#000" stroke-width="3" class="sw-highlight"/>')
    parts.append("</svg>")
    return "".join(parts)
