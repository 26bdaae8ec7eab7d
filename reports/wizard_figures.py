"""The wizard's picture: each engine's points by concern (use, hardware, model and format, workload, operations)."""

from __future__ import annotations

import plotly.graph_objects as go

from calculators.i18n import _
from calculators.wizard.concerns import CONCERNS, points_by_concern
from calculators.wizard.scoring import Recommendation

CONCERN_COLOURS = {
    "use": "#4c78a8",
    "hardware": "#f58518",
    "model": "#54a24b",
    "workload": "#b279a2",
    "operations": "#9d755d",
}


def concern_figure(result: Recommendation, rules, names: dict[str, str]) -> go.Figure:
    """Stacked horizontal bars: one per engine in ranking order, points above 0 to the right, below to the left.

    Excluded engines are left out (a hard constraint, not points). The legend sits below the x-axis title and
    grows downward on a narrow column, so it never covers an axis, its title or the chart's title.
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
        barmode="relative",
        height=170 + 44 * max(len(engines), 1),
        margin={"l": 10, "r": 10, "t": 40, "b": 10},
        legend={"orientation": "h", "yanchor": "top", "y": -0.3, "xanchor": "left", "x": 0},
        xaxis={"title": {"text": _("points"), "standoff": 6}, "zeroline": True, "zerolinewidth": 2},
        title={"text": _("Points by concern"), "y": 0.98, "yanchor": "top", "x": 0, "font": {"size": 14}},
    )
    return figure
