"""The wizard's picture: each engine's points by concern (use, hardware, model and format, workload, operations)."""

from __future__ import annotations

import plotly.graph_objects as go

from calculators.i18n import _
from calculators.wizard.concerns import CONCERNS, points_by_concern
from calculators.wizard.scoring import Recommendation
from reports.chart_layout import chart_layout

CONCERN_COLOURS = {
    "use": "#4c78a8",
    "hardware": "#f58518",
    "model": "#54a24b",
    "workload": "#b279a2",
    "operations": "#9d755d",
}


def concern_figure(result: Recommendation, rules, names: dict[str, str]) -> go.Figure:
    """Stacked horizontal bars: one per engine in ranking order, points above 0 to the right, below to the left.

    Excluded engines are left out (a hard constraint, not points). Drawn beside the ranking table (half the
    page's width); the legend sits below the x-axis title (reports/chart_layout.py).
    """
    ranked = [verdict for verdict in result.ranking if not verdict.excluded]
    table = points_by_concern(ranked, rules)
    engines = [names.get(verdict.engine, verdict.engine) for verdict in ranked][::-1]
    figure = go.Figure()
    for concern, label in CONCERNS.items():
        values = [table[verdict.engine][concern] for verdict in ranked][::-1]
        figure.add_bar(
            name=_(label), y=engines, x=values, orientation="h", marker_color=CONCERN_COLOURS[concern],
            hovertemplate="%{y}: %{x:+d} (" + _(label) + ")<extra></extra>",
        )
    figure.update_layout(
        **chart_layout(title=_("Points by concern"), x_title=_("points"),
                       height_px=190 + 44 * max(len(engines), 1), columns=2),
        barmode="relative",
    )
    figure.update_xaxes(zeroline=True, zerolinewidth=2)
    return figure
