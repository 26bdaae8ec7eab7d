"""The inline SVG charts (reports/svg_charts.py) and the memory page's two pictures built with them: every
category and band drawn, stacked in order, values on hover, marks at their value, and valid SVG in both
languages."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import pytest

from calculators.engines import ENGINE_IDS, display_name
from calculators.hardware.machine import Machine
from calculators.i18n import _, language
from calculators.memory.capacity import capacity_curve
from calculators.memory.compare import ComparisonInputs, Workload, compare_engines
from calculators.units import GIB
from reports.memory_figures import BANDS, band_gib, capacity_chart_svg, memory_bars_svg
from reports.svg_charts import (
    Band,
    Edge,
    Line,
    LineChart,
    Node,
    StackedBars,
    flow_diagram_svg,
    line_chart_svg,
    nice_step,
    stacked_bars_svg,
)
from tests.support.models import gqa

SVG = "{http://www.w3.org/2000/svg}"
MODEL = gqa(32, 8, 128, 32, 131_072)
H100 = Machine(device_memory_bytes=80 * GIB)


def _tree(svg: str) -> ET.Element:
    assert "\n" not in svg  # one line: Markdown would end the HTML block at a blank line
    return ET.fromstring(svg)


@pytest.mark.parametrize(("top", "step"), [(80 * 1.05, 20), (9.7, 2), (0.42, 0.1), (1234, 250), (3, 1)])
def test_tick_steps_are_round(top, step):
    assert nice_step(top) == pytest.approx(step)


def test_stacked_bars_stack_bands_in_order_with_hover_values_and_marks():
    chart = StackedBars(["A", "B"], [Band("low", "#111", [10.0, 0.0]), Band("high", "#222", [5.0, 30.0])],
                        y_title="GiB per GPU", unit="GiB", marks=[40.0, None], mark_name="capacity",
                        notes=["", "refuses"], alarm=[False, True])
    root = _tree(stacked_bars_svg(chart))
    rects = [r for r in root.iter(f"{SVG}rect") if r.find(f"{SVG}title") is not None]
    tips = [r.find(f"{SVG}title").text for r in rects]
    assert tips == ["A · low: 10.00 GiB", "A · high: 5.00 GiB", "B · high: 30.00 GiB"]  # zero bands not drawn
    low, high = rects[0], rects[1]
    # the second band sits on top of the first, twice as tall per GiB as half its value
    assert float(high.get("y")) + float(high.get("height")) == pytest.approx(float(low.get("y")), abs=0.2)
    assert float(low.get("height")) == pytest.approx(2 * float(high.get("height")), abs=0.2)
    mark = next(line for line in root.iter(f"{SVG}line") if line.find(f"{SVG}title") is not None)
    assert mark.find(f"{SVG}title").text == "A · capacity: 40.00 GiB"
    texts = [t.text for t in root.iter(f"{SVG}text")]
    assert {"low", "high", "capacity", "A", "B", "refuses"} <= set(texts)
    refused = next(t for t in root.iter(f"{SVG}text") if t.text == "refuses")
    assert refused.get("fill") == "#b00"


def test_line_chart_places_points_on_a_log_axis():
    chart = LineChart([Line("vLLM", "#f00", [(1024, 10), (8192, 2), (65536, 0)])], x_title="context",
                      y_title="sequences", x_unit="tokens", y_unit="sequences", x_log=True,
                      x_ticks=[(1024, "1k"), (8192, "8k"), (65536, "64k")], marker_x=8192, marker_label="yours")
    root = _tree(line_chart_svg(chart))
    xs = [float(c.get("cx")) for c in root.iter(f"{SVG}circle")]
    assert xs[1] - xs[0] == pytest.approx(xs[2] - xs[1])  # equal factors of 8 are equal steps
    assert [c.find(f"{SVG}title").text for c in root.iter(f"{SVG}circle")][1] == "vLLM · 8,192 tokens: 2 sequences"


@pytest.mark.parametrize("lang", ["en", "es"])
def test_memory_page_pictures_show_every_engine_by_name(lang):
    inputs = ComparisonInputs(MODEL, H100, 16 * GIB)
    rows = compare_engines(inputs, Workload(8192, 8))
    curves = [capacity_curve(inputs, engine, Workload(8192, 8), [1024, 8192, 65536]) for engine in ENGINE_IDS]
    with language(lang):
        bars, capacity = memory_bars_svg(rows), capacity_chart_svg(curves, 8192)
    root = _tree(bars)
    labels = " ".join(t.text for t in root.iter(f"{SVG}text") if "sw-category" in (t.get("class") or ""))
    for engine in ENGINE_IDS:
        assert all(word in labels for word in display_name(engine).split())
    # each planned engine's weights segment carries its GiB, in the reader's number format
    row = next(r for r in rows if r.plan is not None)
    weights = band_gib(row)[BANDS[0][0]]
    expected = f"{weights:,.2f}" if lang == "en" else f"{weights:,.2f}".replace(",", " ").replace(".", ",")
    tips = [t.text for t in root.iter(f"{SVG}title")]
    assert any(tip.startswith(display_name(row.engine)) and re.sub(r"\s", "", expected) in re.sub(r"\s", "", tip)
               for tip in tips), tips
    with language(lang):
        assert f">{_('KV cache')}<" in bars  # the legend in the reader's language
    _tree(capacity)
    assert "capacity-curves" in capacity


def test_every_text_is_escaped():
    """Names and labels may come from a pasted config or a catalog: markup in them stays text."""
    planted = '<script>alert(1)</script>"&'
    bars = stacked_bars_svg(StackedBars([planted], [Band(planted, "#111", [1.0])], y_title=planted, unit=planted,
                                        marks=[2.0], mark_name=planted, notes=[planted]))
    lines = line_chart_svg(LineChart([Line(planted, "#111", [(1, 1), (2, 2)])], x_title=planted, y_title=planted,
                                     x_unit=planted, y_unit=planted, x_ticks=[(1, planted)], marker_x=1,
                                     marker_label=planted))
    flow = flow_diagram_svg([Node("a", planted, "#fff", 0, 0), Node("b", planted, "#fff", 1, 0)],
                            [Edge("a", "b", planted)])
    for svg in (bars, lines, flow):
        assert "<script" not in svg
        root = _tree(svg)  # still well-formed
        assert any(planted in (element.text or "") for element in root.iter())
