"""Plotly figure for the engine x format compatibility matrix."""

from __future__ import annotations

import textwrap

import plotly.graph_objects as go

from calculators.i18n import N_, _
from knowledge.formats import CompatStatus, FormatsSection, HardwareVerdict
from reports.chart_layout import chart_layout

#: One colour per status, from most direct (green) to absent (grey); order fixes the colour scale.
STATUS_COLOURS: dict[CompatStatus, str] = {
    CompatStatus.NATIVE: "#2e7d32",
    CompatStatus.EXPERIMENTAL: "#f9a825",
    CompatStatus.VIA_PLUGIN: "#1e88e5",
    CompatStatus.CONVERT_FIRST: "#8e24aa",
    CompatStatus.NOT_SUPPORTED: "#9e9e9e",
    CompatStatus.UNKNOWN: "#e0e0e0",
}


#: Cell marks narrow enough for sixteen columns in a 1024 px window (~20 px a cell); the colour, the hover and
#: the caption under the chart give the full meaning.
SHORT_LABELS: dict[CompatStatus, str] = {
    CompatStatus.NATIVE: "✓",
    CompatStatus.EXPERIMENTAL: N_("exp"),
    CompatStatus.VIA_PLUGIN: "+",
    CompatStatus.CONVERT_FIRST: "→",
    CompatStatus.NOT_SUPPORTED: "✗",
    CompatStatus.UNKNOWN: "?",
}


#: Each status as the knowledge base spells it, translated where shown.
STATUS_WORDS: dict[CompatStatus, str] = {
    CompatStatus.NATIVE: N_("native"),
    CompatStatus.EXPERIMENTAL: N_("experimental"),
    CompatStatus.VIA_PLUGIN: N_("via-plugin"),
    CompatStatus.CONVERT_FIRST: N_("convert-first"),
    CompatStatus.NOT_SUPPORTED: N_("not-supported"),
    CompatStatus.UNKNOWN: N_("unknown"),
}


def _discrete_colorscale() -> list[list[float | str]]:
    """A stepped colour scale over [0, n]: values in [i, i + 1) take the i-th status colour."""
    colours = list(STATUS_COLOURS.values())
    n = len(colours)
    scale: list[list[float | str]] = []
    for i, colour in enumerate(colours):
        scale.append([i / n, colour])
        scale.append([(i + 1) / n, colour])
    return scale


def _wrap(text: str, width: int = 70) -> str:
    """Break a long note into hover-sized lines (plotly hover labels do not wrap by themselves)."""
    return "<br>".join(textwrap.wrap(text, width))


def compatibility_heatmap(
    formats: FormatsSection,
    highlight: tuple[str, str] | None = None,
    verdicts: dict[tuple[str, str], HardwareVerdict] | None = None,
) -> go.Figure:
    """Heatmap with one row per engine and one column per format/quantization family, coloured by status.

    `verdicts` (calculators.hardware.compat.matrix_on_hardware) colours each cell by its status on one
    machine instead of its headline status.
    """
    order = list(STATUS_COLOURS)
    engines = list(formats.engines)
    columns = list(formats.columns)
    z, text, notes = [], [], []
    for engine in engines:
        row_z, row_text, row_notes = [], [], []
        for column in columns:
            cell = formats.cell(engine.id, column.id)
            verdict = (verdicts or {}).get((engine.id, column.id))
            status = verdict.status if verdict else cell.status if cell else CompatStatus.UNKNOWN
            row_z.append(order.index(status) + 0.5)  # middle of the status's colour step
            row_text.append(_(SHORT_LABELS[status]) + ("*" if cell is not None and cell.hardware_dependent else ""))
            note = verdict.note if verdict else cell.note if cell else N_("no cell in the knowledge base")
            row_notes.append([_(STATUS_WORDS[status]), _wrap(_(note))])
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
            textfont={"size": 11},
            hovertemplate="<b>%{y}</b> x <b>%{x}</b>: %{customdata[0]}<br>%{customdata[1]}<extra></extra>",
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
        rows = [e.id for e in engines]
        cols = [c.id for c in columns]
        if engine_id in rows and column_id in cols:
            # A frame around the selected cell; category axes place item i at coordinate i.
            x, y = cols.index(column_id), rows.index(engine_id)
            figure.add_shape(
                type="rect",
                x0=x - 0.5,
                x1=x + 0.5,
                y0=y - 0.5,
                y1=y + 0.5,
                line={"width": 3, "color": "#000000"},
            )
    figure.update_layout(**chart_layout(x_title=_("format or quantization"),
                                        height_px=170 + 46 * len(engines)))
    figure.update_xaxes(side="top", tickangle=-35, fixedrange=True)
    figure.update_yaxes(autorange="reversed", fixedrange=True)
    return figure
