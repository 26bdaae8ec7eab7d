"""Plotly figures of the capacity planner: cost against the rate each configuration sustains within the SLO,
and the latency each engine's best configuration shows as the rate grows (estimates)."""

from __future__ import annotations

import math
from collections.abc import Mapping

import plotly.graph_objects as go

from calculators.i18n import _
from calculators.planner.search import PlannerResult
from reports.chart_layout import chart_layout
from reports.numbers import compact

#: The page draws the two charts side by side.
_COLUMNS = 2
_HEIGHT_PX = 420


def pareto_figure(result: PlannerResult, names: Mapping[str, str], colours: Mapping[str, str],
                  gpus: Mapping[str, str]) -> go.Figure:
    """Cost per hour (US dollars) against requests/s sustained within the SLO, one point per priced candidate."""
    figure = go.Figure()
    for engine in dict.fromkeys(c.shape.engine for c in result.candidates):
        points = [c for c in result.candidates if c.shape.engine == engine and c.cost is not None and c.replicas]
        if not points:
            continue
        figure.add_trace(go.Scatter(
            x=[c.replicas * c.max_rate_per_instance for c in points],
            y=[c.cost.usd_per_hour for c in points],
            mode="markers", name=names.get(engine, engine), marker={"color": colours.get(engine), "size": 9},
            text=[f"{c.replicas} × {c.shape.gpus_per_instance} {gpus.get(c.shape.gpu_id, c.shape.gpu_id)}, "
                  f"{c.shape.weights}, {c.concurrency_setting} {c.concurrency}" for c in points],
            # plotly fills %{x} and %{y} with the layout's separators (the reader's decimal mark)
            hovertemplate="%{text}<br>" + _("{rate}\u00a0requests/s · {cost}/h").format(
                rate="%{x:.3g}", cost=_("${amount}").format(amount="%{y:.2f}")) + "<extra></extra>",
        ))
    figure.add_vline(x=result.load_rate_per_s, line_dash="dot", annotation_text=_("your load"),
                     annotation_position="bottom right")
    figure.update_layout(**chart_layout(title=_("Cost against the rate sustained within the SLO (estimate)"),
                                        x_title=_("requests/s within the SLO"), y_title=_("US dollars per hour"),
                                        height_px=_HEIGHT_PX, columns=_COLUMNS))
    return figure


def latency_figure(result: PlannerResult, names: Mapping[str, str], colours: Mapping[str, str]) -> go.Figure:
    """Simulated TTFT at the SLO's percentile against the rate per instance, for each engine's cheapest candidate."""
    figure = go.Figure()
    for engine, best in result.best_by_engine.items():
        probes = sorted((p for p in best.probes if p.ttft_s is not None), key=lambda p: p.rate_per_s)
        figure.add_trace(go.Scatter(
            x=[p.rate_per_s for p in probes], y=[p.ttft_s for p in probes], mode="lines+markers",
            name=names.get(engine, engine), line={"color": colours.get(engine)},
        ))
    target_s = result.spec.slo.ttft_s
    figure.add_hline(y=target_s, line_dash="dot")
    # Written by hand: on a log axis plotly 7.1 places add_hline's own annotation at y = 10**target (10 s over a 1 s
    # line), and an annotation on a log axis takes the exponent as its y.
    figure.add_annotation(text=_("target"), xref="x domain", x=1, yref="y", y=math.log10(target_s), showarrow=False,
                          xanchor="right", yanchor="bottom")
    title = _("p{pct} time to first token against the rate per instance (estimate)").format(
        pct=compact(result.spec.slo.ttft_percentile, 2))
    figure.update_layout(**chart_layout(title=title, x_title=_("requests/s per instance"), y_title=_("seconds"),
                                        height_px=_HEIGHT_PX, columns=_COLUMNS))
    figure.update_yaxes(type="log", dtick=1)  # decades only: minor-tick labels (2, 5) read as values
    return figure
