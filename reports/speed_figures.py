"""The Speed page's picture as inline SVG (reports/svg_charts.py): decode speed as more sequences share the
accelerator, for each sequence and for all of them together, each with its band."""

from __future__ import annotations

from calculators.i18n import _, ngettext
from calculators.speed.predict import DecodePoint
from reports.chart_layout import engine_colour
from reports.svg_charts import Line, LineChart, line_chart_svg

#: Height of each chart in drawing units: the two charts stack in one column, so each is lower than a lone chart.
CHART_HEIGHT = 300


def _ticks(concurrencies: list[int]) -> list[tuple[float, str]]:
    """Every power of two of the sweep as an x tick (the user's own concurrency has the dotted marker)."""
    powers = [c for c in concurrencies if c & (c - 1) == 0]
    step = max(1, (len(powers) + 6) // 7)  # at most about 7 labels: they fit at 1024 px
    return [(float(c), str(c)) for c in powers[::step]]


def decode_charts_svg(points: list[DecodePoint], engine: str, chosen_concurrency: int) -> tuple[str, str]:
    """Two line charts over concurrent sequences (log-scaled): tokens/s each sequence gets, and tokens/s of all
    sequences together, the shaded band the fit's error band, the user's concurrency marked."""
    colour = engine_colour(engine)
    xs = [float(p.concurrency) for p in points]
    ticks = _ticks([p.concurrency for p in points])
    common = dict(x_title=_("concurrent sequences (log scale)"), y_unit=_("tokens/s"),
                  x_unit=lambda n: ngettext("{n}\u00a0sequence", "{n}\u00a0sequences", n),
                  x_log=True, x_ticks=ticks, marker_x=float(chosen_concurrency), marker_label=_("your choice"),
                  height=CHART_HEIGHT)
    each = line_chart_svg(LineChart(
        [Line(_("each sequence"), colour, list(zip(xs, [p.per_sequence.value for p in points], strict=True)),
              band=[(p.per_sequence.low, p.per_sequence.high) for p in points])],
        y_title=_("tokens/s per sequence"), css_class="sw-lines speed-per-sequence", **common))
    together = line_chart_svg(LineChart(
        [Line(_("all sequences together"), colour,
              list(zip(xs, [p.all_sequences.value for p in points], strict=True)),
              band=[(p.all_sequences.low, p.all_sequences.high) for p in points])],
        y_title=_("tokens/s in all"), css_class="sw-lines speed-all-sequences", **common))
    return each, together
