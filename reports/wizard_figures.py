"""The wizard's picture: each engine's points by concern (use, hardware, model and format, workload, operations)."""

from __future__ import annotations

from calculators.i18n import _
from calculators.wizard.concerns import CONCERNS, points_by_concern
from calculators.wizard.scoring import Recommendation
from reports.svg_charts import Band, DivergingBars, diverging_bars_svg

CONCERN_COLOURS = {
    "use": "#4c78a8",
    "hardware": "#f58518",
    "model": "#54a24b",
    "workload": "#b279a2",
    "operations": "#9d755d",
}


def concern_svg(result: Recommendation, rules, names: dict[str, str]) -> str:
    """Stacked horizontal bars as inline SVG (reports/svg_charts.py): one per engine in ranking order, points
    above 0 to the right, below to the left. Excluded engines are left out (a hard constraint, not points).
    Drawn beside the ranking table (half the page's width); SVG, so the wizard's answer appears without the
    browser loading plotly's script first.
    """
    ranked = [verdict for verdict in result.ranking if not verdict.excluded]
    table = points_by_concern(ranked, rules)
    return diverging_bars_svg(DivergingBars(
        categories=[names.get(verdict.engine, verdict.engine) for verdict in ranked],
        bands=[Band(_(label), CONCERN_COLOURS[concern], [float(table[v.engine][concern]) for v in ranked])
               for concern, label in CONCERNS.items()],
        x_title=_("points"), title=_("Points by concern"), css_class="sw-diverging wizard-concerns",
        width=270,  # its column's 274 px at 1024 px (half the page column): drawn at 1:1, its ticks read at 11 px
    ))
