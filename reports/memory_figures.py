"""Figures of the Memory & capacity page as inline SVG (reports/svg_charts.py): memory per engine against the
device, and capacity curves. SVG rather than plotly: a shared link to this page shows its bars without the
browser fetching and compiling plotly's 4.7 MB script first."""

from __future__ import annotations

from calculators.engines import display_name
from calculators.i18n import N_, _, ngettext
from calculators.memory.capacity import CapacityCurve
from calculators.memory.compare import EngineComparison
from calculators.memory.plan import ComponentKind
from calculators.units import GIB
from reports.chart_layout import engine_colour
from reports.numbers import number
from reports.svg_charts import Band, Line, LineChart, StackedBars, line_chart_svg, stacked_bars_svg

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


def memory_bars_svg(rows: list[EngineComparison]) -> str:
    """The side-by-side bars (GiB per device, stacked by band, each engine's device capacity marked) as inline
    SVG: the page's first picture, drawn without loading plotly's script (see reports/svg_charts.py)."""
    per_engine = [band_gib(row) for row in rows]
    notes = [(_("not applicable") if row.not_applicable else _("cannot plan")) if row.plan is None
             else (_("refuses to start") if row.plan.refusal else "") for row in rows]
    return stacked_bars_svg(StackedBars(
        categories=[display_name(row.engine) for row in rows],
        bands=[Band(_(name), colour, [values[name] for values in per_engine]) for name, _kinds, colour in BANDS],
        y_title=_("GiB per GPU (2^30\u00a0bytes)"), unit="GiB",
        marks=[row.plan.device_capacity_bytes / GIB if row.plan is not None and row.plan.device_capacity_bytes
               else None for row in rows],
        mark_name=_("device capacity"), notes=notes,
        alarm=[row.plan is not None and bool(row.plan.refusal) for row in rows], css_class="sw-bars memory-bars",
    ))


def capped_note(sequences_limit: int) -> str:
    """The hover note of a capacity point at the chart's cap: the search stopped there, more may fit."""
    return _("the chart stops at {n}: at least this many fit").format(n=number(sequences_limit))


def capacity_chart_svg(curves: list[CapacityCurve], chosen_context: int) -> str:
    """Most concurrent sequences vs context length, one line per engine (log-scaled context), as inline SVG."""
    lines = [Line(display_name(curve.engine), engine_colour(curve.engine),
                  list(zip(curve.context_tokens, curve.max_sequences, strict=True)),
                  notes=[capped_note(curve.sequences_limit) if count >= curve.sequences_limit else ""
                         for count in curve.max_sequences])
             for curve in curves if not curve.reason and curve.max_sequences]
    contexts = [x for curve in curves for x in curve.context_tokens] or [chosen_context]
    ticks = [2**k for k in range(8, 25) if min(contexts) <= 2**k <= max(contexts)]
    return line_chart_svg(LineChart(
        lines, x_title=_("context per sequence (tokens, log scale)"), y_title=_("most concurrent sequences that fit"),
        x_unit=_("tokens"), y_unit=lambda n: ngettext("{n}\u00a0sequence", "{n}\u00a0sequences", n), x_log=True,
        x_ticks=[(t, f"{t // 1024}k" if t >= 1024 else str(t)) for t in ticks],
        marker_x=chosen_context, marker_label=_("your context"), css_class="sw-lines capacity-curves",
        open_point_name=_("at the cap ({n}): at least this many").format(
            n=number(max((curve.sequences_limit for curve in curves), default=0))),
    ))
