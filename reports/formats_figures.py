"""The engine x format compatibility matrix as an inline SVG grid, and the status words and colours it uses."""

from __future__ import annotations

from calculators.i18n import N_, _
from knowledge.formats import CompatStatus, Describes, FormatsSection, HardwareVerdict, Scope
from reports.svg_charts import GridCell, StatusGrid, status_grid_svg

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
#: A status in words (the KB's ids, "via-plugin", stay in the KB and the URL).
STATUS_WORDS: dict[CompatStatus, str] = {
    CompatStatus.NATIVE: N_("native"),
    CompatStatus.EXPERIMENTAL: N_("experimental"),
    CompatStatus.VIA_PLUGIN: N_("via a plugin"),
    CompatStatus.CONVERT_FIRST: N_("convert first"),
    CompatStatus.NOT_SUPPORTED: N_("not supported"),
    CompatStatus.UNKNOWN: N_("unknown"),
}
#: Which weights a scheme covers and what it describes, in words (the ids, "linear-layers", stay in the KB).
SCOPE_WORDS: dict[Scope, str] = {
    Scope.ALL: N_("all weights"), Scope.LINEAR_LAYERS: N_("linear layers"), Scope.MOE_EXPERTS: N_("MoE experts"),
}
DESCRIBES_WORDS: dict[Describes, str] = {
    Describes.STORAGE: N_("storage only"), Describes.EXECUTION: N_("execution"),
    Describes.STORAGE_AND_EXECUTION: N_("storage and execution"),
}


def compatibility_grid_svg(
    formats: FormatsSection,
    highlight: tuple[str, str] | None = None,
    verdicts: dict[tuple[str, str], HardwareVerdict] | None = None,
) -> str:
    """The matrix as inline SVG (reports/svg_charts.py): one row per engine, one column per format/quantization
    family, each cell coloured by its status with a short mark (* = depends on the hardware) and its note on
    hover; the chosen pair framed. SVG, so the page's answer appears without the browser loading plotly first.

    `verdicts` (calculators.hardware.compat.matrix_on_hardware) colours each cell by its status on one
    machine instead of its headline status.
    """
    engines = list(formats.engines)
    columns = list(formats.columns)
    cells = []
    for engine in engines:
        row = []
        for column in columns:
            cell = formats.cell(engine.id, column.id)
            verdict = (verdicts or {}).get((engine.id, column.id))
            status = verdict.status if verdict else cell.status if cell else CompatStatus.UNKNOWN
            mark = _(SHORT_LABELS[status]) + ("*" if cell is not None and cell.hardware_dependent else "")
            note = verdict.note if verdict else cell.note if cell else N_("no cell in the knowledge base")
            row.append(GridCell(STATUS_COLOURS[status], mark,
                                f"{engine.name} × {_(column.name)}: {_(STATUS_WORDS[status])}\n{_(note)}"))
        cells.append(row)
    place = None
    if highlight is not None:
        rows, cols = [e.id for e in engines], [c.id for c in columns]
        if highlight[0] in rows and highlight[1] in cols:
            place = (rows.index(highlight[0]), cols.index(highlight[1]))
    return status_grid_svg(StatusGrid([e.name for e in engines], [_(c.name) for c in columns], cells, place,
                                      "sw-grid formats-matrix"))
