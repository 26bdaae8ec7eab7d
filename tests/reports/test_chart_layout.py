"""Every chart the reports build: legends below the x-axis title, titles that fit their column at 1024 px,
axis titles (or engine names as ticks), engines by name and in their own colour.

Each figure builder in reports/ (a public function returning plotly figures) is built here from real inputs;
a builder added without a case here fails `test_every_figure_builder_is_checked`.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from functools import cache

import plotly.graph_objects as go
import pytest

import reports
from calculators.engines import ENGINE_IDS, display_name
from calculators.hardware.machine import Machine
from calculators.i18n import language
from calculators.planner import HardwareOption, LoadSpec, PlannerSpec, SloSpec, plan_capacity
from calculators.simulator.engines import SIMULATED_ENGINES, default_policy
from calculators.simulator.roofline import StepCostModel
from calculators.simulator.run import simulate
from calculators.simulator.sweep import sweep_arrival_rates
from calculators.simulator.workload import LengthDistribution, WorkloadSpec
from calculators.units import GIB
from knowledge.loader import load_knowledge
from reports.chart_layout import ENGINE_COLOURS, axis_title_chars_per_line, title_chars_per_line, wrap_title
from reports.planner_figures import latency_figure, pareto_figure
from reports.simulator_charts import TIMELINE_PANEL_PX, sweep_figures, timeline_figure
from tests.support.models import gqa

KB = load_knowledge()
MODEL = gqa(32, 8, 128, 32, 131_072)
H100 = Machine(device_memory_bytes=80 * GIB)
COST = StepCostModel(memory_bandwidth_bytes_per_s=2e12, flops_per_s=4e14, weights_bytes=16e9, active_params=8e9,
                     kv_bytes_per_token=131_072, memory_efficiency=0.7, compute_efficiency=0.5)  # fmt: skip
WORKLOAD = WorkloadSpec(n_requests=60, rate_per_s=4.0, prompt=LengthDistribution(kind="fixed", value=512),
                        output=LengthDistribution(kind="fixed", value=64))  # fmt: skip
ENGINE_NAMES = {display_name(engine) for engine in ENGINE_IDS}


@cache
def _planner_result():
    spec = PlannerSpec(
        model_id="llama-3.1-8b",
        hardware=(HardwareOption(gpu_id="l4-24gb", max_gpus_per_host=2),),
        engines=("vllm", "llama-cpp"),
        load=LoadSpec(arrival_rate_per_s=2.0),
        slo=SloSpec(ttft_s=1.0, itl_s=0.05),
        concurrency_options=(8,),
        requests_per_simulation=60,
    )
    return plan_capacity(spec, KB)


def _simulator_figures() -> list[go.Figure]:
    engines = [engine for engine in SIMULATED_ENGINES if engine in ("vllm", "sglang", "static")] or SIMULATED_ENGINES
    results = [simulate(WORKLOAD, default_policy(engine), COST, 200_000) for engine in engines]
    points = []
    for engine in engines:
        points += sweep_arrival_rates(WORKLOAD, {engine: (default_policy(engine), 200_000)}, COST, [1.0, 4.0])
    return [timeline_figure(results), *sweep_figures(points)]


def _names() -> dict[str, str]:
    return {engine: display_name(engine) for engine in ENGINE_IDS}


#: builder name -> (how to build its figures from real inputs, how many charts share a row on its page).
CASES = {
    "timeline_figure": (lambda: _simulator_figures()[:1], 1),
    "sweep_figures": (lambda: _simulator_figures()[1:], 2),
    "pareto_figure": (lambda: [pareto_figure(_planner_result(), _names(), ENGINE_COLOURS, {})], 2),
    "latency_figure": (lambda: [latency_figure(_planner_result(), _names(), ENGINE_COLOURS)], 2),
}  # fmt: skip


def _figure_builders() -> set[str]:
    """Public functions in reports/ whose return annotation names a plotly Figure."""
    found = set()
    for module_info in pkgutil.iter_modules(reports.__path__):
        module = importlib.import_module(f"reports.{module_info.name}")
        for name, function in inspect.getmembers(module, inspect.isfunction):
            public = function.__module__ == module.__name__ and not name.startswith("_")
            if public and "Figure" in str(inspect.signature(function).return_annotation):
                found.add(name)
    return found


def test_every_figure_builder_is_checked():
    assert _figure_builders() == set(CASES)


@pytest.mark.parametrize("builder", sorted(CASES))
def test_legend_sits_in_the_bottom_margin_below_the_x_axis_title(builder):
    build, _ = CASES[builder]
    for figure in build():
        legend = figure.layout.legend
        named = [trace for trace in figure.data if trace.name]
        if figure.layout.showlegend is False or len(named) < 2:
            continue
        # Anchored to the figure's bottom edge (not the plot area's): plotly reserves the legend's rows in the
        # bottom margin and draws the x-axis ticks and title above them, however many rows it wraps onto.
        assert (legend.orientation, legend.yref, legend.yanchor, legend.y) == ("h", "container", "bottom", 0)
        assert figure.layout.xaxis.automargin is True


def _built(builder: str, lang: str) -> list[go.Figure]:
    """`builder`'s figures built with the reader's language set to `lang`."""
    with language(lang):
        return CASES[builder][0]()


@pytest.mark.parametrize("lang", ["en", "es"])
@pytest.mark.parametrize("builder", sorted(CASES))
def test_titles_fit_their_column_at_1024_px(builder, lang):
    columns = CASES[builder][1]
    for figure in _built(builder, lang):
        title = figure.layout.title.text
        if not title:
            continue
        lines = title.split("<br>")
        assert all(len(line) <= title_chars_per_line(columns) for line in lines), title
        assert figure.layout.title.automargin is True  # the top margin grows with the lines


def _engine_ticks(figure: go.Figure, axis: str) -> bool:
    """True when every trace's values on `axis` are engine names (the ticks then say what the axis is)."""
    engines = ENGINE_NAMES | {engine.name for engine in KB.formats.engines}
    values = [str(v) for trace in figure.data for v in (getattr(trace, axis, None) or ())]
    return bool(values) and set(values) <= engines


@pytest.mark.parametrize("builder", sorted(CASES))
def test_both_axes_have_titles_unless_their_ticks_are_engine_names(builder):
    build, _ = CASES[builder]
    for figure in build():
        for axis in ("x", "y"):
            # every axis of every panel that shows its ticks (stacked panels share one labelled time axis)
            shown = [figure.layout[name] for name in figure.layout
                     if name.startswith(f"{axis}axis") and figure.layout[name].showticklabels is not False]
            assert shown, f"{builder}: no {axis} axis shows its ticks"
            for layout_axis in shown:
                assert layout_axis.title.text or _engine_ticks(figure, axis), f"{builder}: no {axis}-axis title"


@pytest.mark.parametrize("builder", sorted(CASES))
def test_engines_appear_by_name_in_their_own_colour(builder):
    build, _ = CASES[builder]
    slugs = set(ENGINE_IDS) - ENGINE_NAMES  # ids that differ from their names ("vllm", "mlx-lm", ...)
    for figure in build():
        for trace in figure.data:
            assert trace.name not in slugs
            shown = [str(value) for axis in ("x", "y") for value in (getattr(trace, axis, None) or ())]
            assert not slugs & set(shown), f"{builder}: a slug on an axis: {slugs & set(shown)}"
            if trace.name in ENGINE_NAMES:
                engine = next(e for e in ENGINE_IDS if display_name(e) == trace.name)
                colour = getattr(getattr(trace, "line", None), "color", None) or trace.marker.color
                assert colour == ENGINE_COLOURS[engine], f"{builder}: {trace.name} drawn in {colour}"


@pytest.mark.parametrize("lang", ["en", "es"])
@pytest.mark.parametrize("builder", sorted(CASES))
def test_y_axis_titles_fit_along_the_plot(builder, lang):
    for figure in _built(builder, lang):
        title = figure.layout.yaxis.title.text or ""
        bound = axis_title_chars_per_line(figure.layout.height)
        assert all(len(line) <= bound for line in title.split("<br>")), f"{builder} ({lang}): {title!r}"


def test_a_long_title_wraps_into_lines_that_fit_and_keeps_every_word():
    title = "p99 time to first token vs arrival rate (estimate)"
    wrapped = wrap_title(title, columns=3)
    assert "<br>" in wrapped and wrapped.replace("<br>", " ") == title
    assert max(len(line) for line in wrapped.split("<br>")) <= title_chars_per_line(3) < title_chars_per_line(1)


@pytest.mark.parametrize("lang", ["en", "es"])
def test_charts_drawn_side_by_side_have_titles_of_equal_height(lang):
    with language(lang):
        figures = _simulator_figures()
    row = figures[1:]  # the two sweep charts (the time series is one figure of stacked panels)
    counts = {figure.layout.title.text.count("<br>") for figure in row}
    assert len(counts) == 1, [figure.layout.title.text for figure in row]


@pytest.mark.parametrize("lang", ["en", "es"])
def test_the_time_series_are_stacked_panels_on_one_time_axis_each_with_its_title(lang):
    """At 1024 px three side-by-side time-series charts were ~185 px wide each; now one figure the page's width."""
    with language(lang):
        figure = _simulator_figures()[0]
    rows = {trace.yaxis for trace in figure.data}
    assert rows == {"y", "y2", "y3"} and {trace.xaxis for trace in figure.data} == {"x", "x2", "x3"}
    assert figure.layout.xaxis.matches == "x3" and figure.layout.xaxis3.title.text  # one shared, titled time axis
    assert len(figure.layout.annotations) == 3  # a title per panel
    for axis in (figure.layout.yaxis, figure.layout.yaxis2, figure.layout.yaxis3):
        assert axis.title.text and all(len(line) <= max(10, TIMELINE_PANEL_PX // 7)
                                       for line in axis.title.text.split("<br>"))
    assert sum(bool(trace.showlegend) for trace in figure.data) == len(figure.data) // 3  # one entry per engine


def test_the_latency_target_is_labelled_on_its_line():
    """The TTFT axis is logarithmic: the 'target' note sits at log10(target), on the dotted line (it was drawn at
    10 s over a 1 s line, by add_hline's own annotation)."""
    import math

    (figure,) = CASES["latency_figure"][0]()
    (line,) = [shape for shape in figure.layout.shapes if shape.y0 == shape.y1]
    (note,) = [a for a in figure.layout.annotations if a.text == "target"]
    assert figure.layout.yaxis.type == "log" and line.y0 == 1.0
    assert note.yref == "y" and note.y == math.log10(line.y0) and note.yanchor == "bottom"


def test_the_cost_chart_hover_speaks_the_readers_language():
    (english,) = CASES["pareto_figure"][0]()
    assert "requests/s · $%{y:.2f}/h" in english.data[0].hovertemplate
    (spanish,) = _built("pareto_figure", "es")
    assert "peticiones/s · %{y:.2f} US$/h" in spanish.data[0].hovertemplate and spanish.layout.separators == ",."
