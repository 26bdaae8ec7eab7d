"""Plotly figure for the engine x format compatibility matrix."""

from __future__ import annotations

import plotly.graph_objects as go

from knowledge.formats import CompatStatus, FormatsSection

#: One colour per status, from most direct (green) to absent (grey); order fixes the colour scale.
STATUS_COLOURS: dict[CompatStatus, str] = {
    CompatStatus.NATIVE: "#2e7d32",
    CompatStatus.EXPERIMENTAL: "#f9a825",
    CompatStatus.VIA_PLUGIN: "#1e88e5",
    CompatStatus.CONVERT_FIRST: "#8e24aa",
    CompatStatus.NOT_SUPPORTED: "#9e9e9e",
    CompatStatus.UNKNOWN: "#e0e0e0",
}


def _discrete_colorscale() -> list[list[float | str]]:
    """A stepped colour scale: integer i in [0, n) maps to the i-th status colour."""
    colours = list(STATUS_COLOURS.values())
    n = len(colours)
    scale: list[list[float | str]] = []
    for i, colour in enumerate(colours):
        scale.append([i / n, colour])
        scale.append([(i + 1) / n, colour])
    return scale


def compatibility_heatmap(formats: FormatsSection, highlight: tuple[str, str] | None = None) -> go.Figure:
    """Heatmap with one row per engine and one column per format/quantization family, coloured by status."""
    order = list(STATUS_COLOURS)
    engines = [e for e in formats.engines]
    columns = list(formats.columns)
    z, text, notes = [], [], []
    for engine in engines:
        row_z, row_text, row_notes = [], [], []
        for column in columns:
            cell = formats.cell(engine.id, column.id)
            status = cell.status if cell else CompatStatus.UNKNOWN
            row_z.append(order.index(status))
            row_text.append(status.value)
            row_notes.append(cell.note if cell else "no cell in the knowledge base")
        z.append(row_z)
        text.append(row_text)
        notes.append(row_notes)
    figure = go.Figure(
        go.Heatmap(
            z=z,
            x=[c.name for c in columns],
            y=[e.name for e in engines],
            text=text,
            customdata=notes,
            texttemplate="%{text}",
            textfont={"size": 10},
            hovertemplate="<b>%{y}</b> x <b>%{x}</b>: %{text}<br>%{customdata}<extra></extra>",
            colorscale=_discrete_colorscale(),
            zmin=0,
            zmax=len(order),
            showscale=False,
            xgap=2,
            ygap=2,
        )
    )
    if highlight is not None:
        engine_id, column_id = highlight
        names = {e.id: e.name for e in engines} | {c.id: c.name for c in columns}
        if engine_id in names and column_id in names:
            figure.add_trace(
                go.Scatter(
                    x=[names[column_id]],
                    y=[names[engine_id]],
                    mode="markers",
                    marker={"symbol": "square-open", "size": 38, "line": {"width": 3, "color": "#000000"}},
                    hoverinfo="skip",
                    showlegend=False,
                )
            )
    figure.update_layout(
        height=120 + 48 * len(engines),
        margin={"l": 10, "r": 10, "t": 10, "b": 10},
        xaxis={"side": "top", "tickangle": -35},
        yaxis={"autorange": "reversed"},
    )
    return figure
