"""Plotly figures and tables for the concurrency & queueing page (no Streamlit calls here)."""

from __future__ import annotations

import csv
import io
import textwrap

import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from calculators.engines import display_name
from calculators.i18n import N_, _
from calculators.simulator.policy import STATIC_BASELINE
from calculators.simulator.results import Distribution, SimulationResult
from calculators.simulator.sweep import SweepPoint
from reports.chart_layout import TITLE_FONT_PX, align_titles, chart_layout, engine_colour
from reports.numbers import percent, quantity, with_unit

#: The binding limit as the table shows it: its name in English, words in other languages.
BINDING_TEXT = {"none": N_("none"), "max_running": N_("running places"), "kv_capacity": N_("KV capacity"),
                "token_budget": N_("step token budget"), "static_batch": N_("static batching"),
                "prefill_slots": N_("prefill places")}  # words, not the Constraint ids


def _line(engine: str) -> dict:
    return {"color": engine_colour(engine)}


def engine_label(engine: str) -> str:
    """The name a person reads for a simulated engine (the static baseline included)."""
    return _("static batching (baseline)") if engine == STATIC_BASELINE else display_name(engine)


#: Height (px) of the time-series figure and of each of its three panels' plot areas.
TIMELINE_HEIGHT_PX = 640
TIMELINE_PANEL_PX = 140


def timeline_figure(results: list[SimulationResult]) -> go.Figure:
    """Queued requests, running sequences and KV use (% of capacity) over time: three panels stacked on one shared
    time axis, one line per engine, one legend.

    Stacked, each panel is the page's full width: as three charts side by side each got ~185 px at 1024 px, too
    small to read a peak's time; on one time axis a queue's growth lines up with the KV it waits for.
    """
    panels = [(_("Waiting in the queue (estimate)"), _("requests")), (_("Running sequences (estimate)"),
              _("sequences")), (_("KV cache in use (estimate)"), _("% of KV capacity"))]
    figure = make_subplots(rows=3, cols=1, shared_xaxes=True, vertical_spacing=0.1,
                           subplot_titles=[title for title, _unit in panels])
    for r in results:
        ts, d = r.timeseries, r.diagnostics
        name = engine_label(r.engine)
        share = [100.0 * used / d.kv_capacity_tokens for used in ts.kv_used_tokens]
        percent_sign = percent(0).removeprefix("0")  # "%" / " %" (non-breaking), as the language writes it
        # The knob and the KV capacity go in the hover, not the legend: one legend entry per engine.
        for row, (values, hover, shape) in enumerate((
            (ts.queued, with_unit("%{x:.0f}", "s") + ": %{y}<extra>" + name + "</extra>", "hv"),
            (ts.active, with_unit("%{x:.0f}", "s")
             + f": %{{y}}<extra>{name} ({d.max_running_knob} {d.max_running})</extra>", "hv"),
            (share, with_unit("%{x:.0f}", "s") + f": %{{y:.0f}}{percent_sign}<extra>{name} "
                    f"({quantity(d.kv_capacity_tokens, 'tokens', 0)})</extra>", "linear"),
        ), start=1):
            figure.add_scatter(x=ts.t_s, y=values, name=name, legendgroup=name, showlegend=row == 1,
                               line={**_line(r.engine), "shape": shape}, hovertemplate=hover, row=row, col=1)
    figure.update_layout(**chart_layout(x_title=None, y_title=panels[0][1], height_px=TIMELINE_HEIGHT_PX))
    for row, (_title, unit) in enumerate(panels, start=1):
        lines = textwrap.wrap(unit, max(10, TIMELINE_PANEL_PX // 7), break_on_hyphens=False)
        figure.update_yaxes(title={"text": "<br>".join(lines) or unit, "standoff": 6}, automargin=True, row=row,
                            col=1)
    figure.update_xaxes(automargin=True)
    figure.update_xaxes(title={"text": _("time (s)"), "standoff": 6}, row=3, col=1)
    figure.update_annotations(x=0, xanchor="left", font={"size": TITLE_FONT_PX})  # panel titles, left-aligned
    return figure


def sweep_figures(points: list[SweepPoint]) -> tuple[go.Figure, go.Figure]:
    """Goodput vs arrival rate and p99 TTFT vs arrival rate, one line per engine."""
    goodput, ttft = go.Figure(), go.Figure()
    for engine in dict.fromkeys(p.engine for p in points):
        mine = [p for p in points if p.engine == engine]
        rates = [p.rate_per_s for p in mine]
        name = engine_label(engine)
        goodput.add_scatter(x=rates, y=[p.goodput_rps for p in mine], name=name, mode="lines+markers",
                            line=_line(engine))
        ttft.add_scatter(x=rates, y=[p.p99_ttft_s for p in mine], name=name, mode="lines+markers", line=_line(engine))
    goodput.update_layout(**chart_layout(title=_("Goodput vs arrival rate (estimate)"),
                                         x_title=_("arrivals per second"),
                                         y_title=_("goodput (req/s)"), height_px=340, columns=2))
    ttft.update_layout(**chart_layout(title=_("p99 time to first token vs arrival rate (estimate)"),
                                      x_title=_("arrivals per second"), y_title=_("p99 TTFT (s)"), height_px=340,
                                      columns=2))
    ttft.update_yaxes(type="log", dtick=1)  # decades only: minor-tick labels (2, 5) read as values
    align_titles(goodput, ttft)
    return goodput, ttft


def comparison_table(results: list[SimulationResult]) -> pd.DataFrame:
    """One row per engine: outcomes, throughput, goodput, headline latencies and the binding limit."""
    rows = []
    for r in results:
        s, d = r.summary, r.diagnostics
        rows.append({
            _("engine"): engine_label(r.engine),
            _("finished"): s.n_finished,
            _("rejected"): s.n_rejected,
            _("cancelled"): s.n_cancelled,
            _("preemptions"): s.n_preemptions,
            _("throughput (req/s)"): s.throughput_rps,
            _("output tokens/s"): s.output_tokens_per_s,
            _("goodput (req/s)"): s.goodput_rps,
            _("TTFT p50 (s)"): _pick(s.ttft, "p50"),
            _("TTFT p99 (s)"): _pick(s.ttft, "p99"),
            _("ITL p50 (ms)"): _ms(_pick(s.itl, "p50")),
            _("ITL p99 (ms)"): _ms(_pick(s.itl, "p99")),
            _("peak running"): d.peak_active,
            _("binding limit"): _(BINDING_TEXT.get(d.binding.value, d.binding.value)),
        })
    table = pd.DataFrame(rows).round({_("throughput (req/s)"): 3, _("output tokens/s"): 1, _("goodput (req/s)"): 3})
    latencies = [_("TTFT p50 (s)"), _("TTFT p99 (s)"), _("ITL p50 (ms)"), _("ITL p99 (ms)")]
    table[latencies] = table[latencies].map(_three_digits)  # "1,395.596 s" claimed a precision it does not have
    return table


def _three_digits(value: float | None) -> float | None:
    """`value` rounded to three significant digits (606.1504 -> 606, 0.012345 -> 0.0123); None and NaN kept."""
    return value if value is None or value != value else float(f"{value:.3g}")


def engines_as_columns(comparison: pd.DataFrame) -> pd.DataFrame:
    """`comparison_table` turned sideways: one column per engine, one row per figure, goodput first.

    As one row per engine its 14 columns ran ~640 px past the page at 1024 px (~220 px even at 1440 px), and
    goodput, the figure the page is for, was among those out of sight; with engines as columns it fits.
    """
    goodput = _("goodput (req/s)")
    sideways = comparison.set_index(_("engine")).T
    sideways = sideways.loc[[goodput, *(row for row in sideways.index if row != goodput)]]
    sideways.columns.name = None
    return sideways


def distribution_table(results: list[SimulationResult]) -> pd.DataFrame:
    """Queue time, TTFT, ITL and end-to-end latency percentiles per engine (seconds)."""
    rows = []
    for r in results:
        s = r.summary
        for label, dist in ((_("queue time"), s.queue), (_("time to first token"), s.ttft),
                            (_("inter-token latency"), s.itl), (_("end-to-end"), s.e2e)):
            if dist is None:
                continue
            rows.append({_("engine"): engine_label(r.engine), _("latency"): label, _("p50 (s)"): dist.p50,
                         _("p90 (s)"): dist.p90,
                         _("p99 (s)"): dist.p99, _("max (s)"): dist.max, _("requests"): dist.count})
    # Three significant digits ("606 s", "0.0123 s"): four decimals ("606.1504 s") claimed a precision a roofline
    # estimate does not have, and the wider cells made the table scroll sideways at 1024 px in Spanish.
    table = pd.DataFrame(rows)
    seconds = [column for column in table.columns if column not in (_("engine"), _("latency"), _("requests"))]
    table[seconds] = table[seconds].map(_three_digits)
    return table


def _pick(dist: Distribution | None, name: str) -> float | None:
    return None if dist is None else getattr(dist, name)


def _ms(seconds: float | None) -> float | None:
    return None if seconds is None else seconds * 1000


def loop_comparison_table(closed: list[SimulationResult], open_loop: list[SimulationResult]) -> pd.DataFrame:
    """Per engine: the closed loop's rate and queue against independent arrivals at that same rate."""
    rows = []
    for c, o in zip(closed, open_loop, strict=True):
        rows.append({
            _("engine"): engine_label(c.engine),
            _("requests/s (closed loop)"): c.summary.n_requests / c.summary.duration_s
            if c.summary.duration_s else None,
            _("max waiting, closed"): max(c.timeseries.queued),
            _("max waiting, open"): max(o.timeseries.queued),
            _("TTFT p99 (s), closed"): _pick(c.summary.ttft, "p99"),
            _("TTFT p99 (s), open"): _pick(o.summary.ttft, "p99"),
            _("rejected or cancelled, open"): o.summary.n_rejected + o.summary.n_cancelled,
        })
    return pd.DataFrame(rows).round(3)


RECORD_COLUMNS = (
    "engine", "request", "status", "reject_reason", "arrival_s", "admit_s", "first_token_s", "end_s",
    "queue_s", "ttft_s", "itl_s", "e2e_s", "prompt_tokens", "output_tokens", "generated_tokens",
    "prefix_hit_tokens", "preemptions", "truncated",
)


def records_csv(results: list[SimulationResult]) -> str:
    """Every simulated request of every engine as CSV text (seconds, tokens; empty cell = not reached)."""
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(RECORD_COLUMNS)
    for result in results:
        for r in result.records:
            writer.writerow((
                result.engine, r.index, r.status.value, r.reject_reason.value if r.reject_reason else "",
                r.arrival_s, _blank(r.admit_s), _blank(r.first_token_s), r.end_s, _blank(r.queue_s),
                _blank(r.ttft_s), _blank(r.itl_s), _blank(r.e2e_s), r.prompt_tokens, r.output_tokens,
                r.generated_tokens, r.prefix_hit_tokens, r.preemptions, r.truncated,
            ))
    return out.getvalue()


def _blank(value: float | None) -> float | str:
    return "" if value is None else value
