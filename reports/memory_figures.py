"""Plotly figures of the Memory & capacity page: memory per engine against the device, and capacity curves."""

from __future__ import annotations

import math

import plotly.graph_objects as go

from calculators.engines import display_name
from calculators.i18n import N_, _
from calculators.memory.capacity import CapacityCurve
from calculators.memory.compare import EngineComparison
from calculators.memory.plan import ComponentKind
from calculators.units import GIB
from reports.chart_layout import chart_layout, engine_colour

# Stack order (bottom to top) and colours; several component kinds share one band.
BANDS: list[tuple[str, tuple[ComponentKind, ...], str]] = [
    (N_("Weights"), (ComponentKind.WEIGHTS,), "#4c78a8"),
    (N_("KV cache"), (ComponentKind.KV_CACHE, ComponentKind.RECURRENT_STATE), "#f58518"),
    (N_("Activations / runtime"), (ComponentKind.ACTIVATIONS, ComponentKind.RUNTIME), "#e45756"),
    (N_("Reserved, unused"), (ComponentKind.RESERVED,), "#bab0ac"),
    (N_("Free"), (ComponentKind.FREE,), "#d4ecd0"),
]


def band_gib(row: EngineComparison) -> dict[str, float]:
    """GiB per band for one engine's plan (free = whatever the capacity leaves beyond the components)."""
    plan = row.plan
    values = {name: 0.0 for name, _kinds, _colour in BANDS}
    if plan is None:
        return values
    for name, kinds, _colour in BANDS:
        values[name] = sum(c.bytes for c in plan.components if c.kind in kinds) / GIB
    capacity = plan.device_capacity_bytes
    if capacity is not None and values["Free"] == 0:
        used = sum(values.values()) * GIB
        values["Free"] = max(0.0, (capacity - used) / GIB)
    return values


def memory_bars(rows: list[EngineComparison]) -> go.Figure:
    """Stacked bar per engine (GiB per device) with each engine's device capacity marked.

    Built from one plain spec (not trace by trace): plotly validates a whole spec several times faster.
    """
    engines = [row.engine for row in rows]
    names = [display_name(e) for e in engines]  # the x axis shows names; each bar stays keyed by its engine
    per_engine = {row.engine: band_gib(row) for row in rows}
    data: list[dict] = [
        {"type": "bar", "name": _(name), "x": names, "y": [per_engine[e][name] for e in engines],
         "marker": {"color": colour}, "hovertemplate": "%{x}: %{y:,.2f} GiB<extra>" + _(name) + "</extra>"}
        for name, _kinds, colour in BANDS
    ]
    caps = [(row.engine, row.plan.device_capacity_bytes / GIB) for row in rows
            if row.plan is not None and row.plan.device_capacity_bytes]
    if caps:
        data.append({"type": "scatter", "name": _("device capacity"), "x": [display_name(e) for e, _ in caps],
                     "y": [c for _, c in caps], "mode": "markers",
                     "marker": {"symbol": "line-ew", "size": 60, "line": {"width": 3, "color": "black"}},
                     "hovertemplate": "%{x}: " + _("capacity") + " %{y:,.2f} GiB<extra></extra>"})
    annotations = []
    for row in rows:
        if row.plan is None:
            annotations.append({"x": display_name(row.engine), "y": 0, "yshift": 40, "textangle": -90,
                                "showarrow": False,
                                "text": _("not applicable") if row.not_applicable else _("cannot plan"),
                                "font": {"color": "#666"}})
        elif row.plan.refusal:
            annotations.append({"x": display_name(row.engine), "y": sum(per_engine[row.engine].values()), "yshift": 10,
                                "showarrow": False, "text": _("refuses to start"), "font": {"color": "#b00"}})
    layout = {**chart_layout(y_title=_("GiB per GPU (2^30 bytes)"), height_px=440), "barmode": "stack",
              "annotations": annotations}
    # The capacity marks are 60 px wide markers, and plotly pads a marker's autorange by its size: the axis
    # would run ~20 % past the tallest bar with an empty band on top. The range is the data's, plus 5 %.
    tallest_gib = max([sum(values.values()) for values in per_engine.values()] + [c for _, c in caps] + [1.0])
    layout["yaxis"]["range"] = [0, tallest_gib * 1.05]
    return go.Figure({"data": data, "layout": layout})


def capacity_chart(curves: list[CapacityCurve], chosen_context: int) -> go.Figure:
    """Max concurrent sequences vs context length, one line per engine (log-scaled context)."""
    data = [
        {"type": "scatter", "name": display_name(curve.engine), "x": list(curve.context_tokens),
         "y": list(curve.max_sequences), "mode": "lines+markers", "line": {"color": engine_colour(curve.engine)},
         "hovertemplate": "%{x:,} " + _("tokens: %{y} sequences") + "<extra>" + display_name(curve.engine) + "</extra>"}
        for curve in curves if not curve.reason and curve.max_sequences
    ]
    contexts = [x for curve in curves for x in curve.context_tokens] or [chosen_context]
    ticks = [2**k for k in range(8, 25) if min(contexts) <= 2**k <= max(contexts)]
    layout = chart_layout(x_title=_("context per sequence (tokens, log scale)"),
                          y_title=_("most concurrent sequences that fit"), height_px=420)
    layout["xaxis"].update({"type": "log", "tickvals": ticks,
                            "ticktext": [f"{t // 1024}k" if t >= 1024 else str(t) for t in ticks]})
    layout["margin"]["t"] = 30  # room for "your context" above the plot
    layout |= {
        "shapes": [{"type": "line", "xref": "x", "yref": "paper", "x0": chosen_context, "x1": chosen_context,
                    "y0": 0, "y1": 1, "line": {"dash": "dot", "color": "#888"}}],
        "annotations": [{"xref": "x", "yref": "paper", "x": math.log10(chosen_context), "y": 1, "yanchor": "bottom",
                         "showarrow": False, "text": _("your context")}],
    }
    return go.Figure({"data": data, "layout": layout})
