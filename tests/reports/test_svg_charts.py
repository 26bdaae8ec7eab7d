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
    # zero bands not drawn
    assert tips == ["A · low: 10.00\u00a0GiB", "A · high: 5.00\u00a0GiB", "B · high: 30.00\u00a0GiB"]
    low, high = rects[0], rects[1]
    # the second band sits on top of the first, twice as tall per GiB as half its value
    assert float(high.get("y")) + float(high.get("height")) == pytest.approx(float(low.get("y")), abs=0.2)
    assert float(low.get("height")) == pytest.approx(2 * float(high.get("height")), abs=0.2)
    mark = next(line for line in root.iter(f"{SVG}line") if line.find(f"{SVG}title") is not None)
    assert mark.find(f"{SVG}title").text == "A · capacity: 40.00\u00a0GiB"
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
    titles = [c.find(f"{SVG}title").text for c in root.iter(f"{SVG}circle")]
    assert titles[1] == "vLLM · 8,192\u00a0tokens: 2\u00a0sequences"


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


@pytest.mark.parametrize("lang", ["en", "es"])
def test_no_arrow_crosses_its_own_label(lang):
    """The home page's request-state diagram drew "over the limit" / "por encima del límite" centred on its slanted
    arrow, so the line ran through the words (issue 19 review screenshots). Each label's box, estimated as the
    layout estimates it, must stay clear of every arrow, in the home page's own layout and words."""
    from reports.svg_charts import EDGE_TEXT, _text_width

    with language(lang):
        words = [_("over the limit"), _("admitted"), _("when a sequence finishes"), _("all read")]
        svg = flow_diagram_svg([
            Node("conn", "40 " + _("open connections"), "#fff", 0.5, 0), Node("queue", "36 queued", "#fff", 0, 1),
            Node("active", "4 active", "#fff", 1, 1), Node("weights", "1 copy", "#fff", 1, 2),
        ], [Edge("conn", "queue", words[0]), Edge("conn", "active", words[1]),
            Edge("queue", "active", words[2], dashed=True), Edge("active", "weights", words[3])])
    tree = _tree(svg)
    lines = [tuple(float(line.get(k)) for k in ("x1", "y1", "x2", "y2")) for line in tree.iter(f"{SVG}line")]
    labels = [text for text in tree.iter(f"{SVG}text") if text.get("class") == "sw-edge"]
    assert [text.text for text in labels] == words
    for text in labels:
        x, y, width = float(text.get("x")), float(text.get("y")), _text_width(text.text, EDGE_TEXT)
        left = {"start": x, "middle": x - width / 2, "end": x - width}[text.get("text-anchor")]
        box = (left - 2, y - 0.8 * EDGE_TEXT, left + width + 2, y + 0.25 * EDGE_TEXT)
        for x1, y1, x2, y2 in lines:
            for step in range(101):
                px, py = x1 + (x2 - x1) * step / 100, y1 + (y2 - y1) * step / 100
                assert not (box[0] <= px <= box[2] and box[1] <= py <= box[3]), (text.text, (x1, y1, x2, y2))


def test_line_chart_shades_a_lines_band_and_scales_to_its_top():
    """A line's band is one shaded polygon through its highs then back through its lows; the y axis reaches the
    highest high (a band above every point was cut off), and each point's hover gives its band."""
    chart = LineChart([Line("vLLM", "#f00", [(1, 100), (2, 90), (4, 80)], band=[(90, 110), (80, 100), (70, 200)])],
                      x_title="sequences", y_title="tokens/s", x_unit="sequences", y_unit="tokens/s", x_log=True)
    root = _tree(line_chart_svg(chart))
    polygons = list(root.iter(f"{SVG}polygon"))
    assert len(polygons) == 1 and polygons[0].get("fill") == "#f00"
    corners = [tuple(map(float, c.split(","))) for c in polygons[0].get("points").split()]
    assert len(corners) == 6
    ticks = [float(t.text.replace(",", "")) for t in root.iter(f"{SVG}text") if t.get("text-anchor") == "end"]
    assert max(ticks) >= 200
    circles = list(root.iter(f"{SVG}circle"))
    top_of_band = min(y for _x, y in corners)  # SVG y grows downwards: the band's top is above every point
    assert all(top_of_band < float(c.get("cy")) for c in circles)
    assert circles[2].find(f"{SVG}title").text == "vLLM · 4\u00a0sequences: 80\u00a0tokens/s (70–200)"


def test_a_band_that_does_not_match_its_points_is_refused():
    chart = LineChart([Line("vLLM", "#f00", [(1, 100), (2, 90)], band=[(90, 110)])],
                      x_title="x", y_title="y", x_unit="", y_unit="")
    with pytest.raises(ValueError, match="1 band entries for 2 points"):
        line_chart_svg(chart)


def test_a_point_with_a_note_is_drawn_open_and_says_so_on_hover_and_in_the_legend():
    """Points with a note (a capped search's bound) are rings with the note after their value; the legend names
    them only when a line has one; notes that do not match the points are refused."""
    noted = Line("vLLM", "#f00", [(512, 256), (8192, 40)], notes=["at least", ""])
    chart = LineChart([noted], x_title="x", y_title="y", x_unit="tokens", y_unit="sequences", x_log=True,
                      open_point_name="capped")
    root = _tree(line_chart_svg(chart))
    circles = [c for c in root.iter(f"{SVG}circle") if c.find(f"{SVG}title") is not None]
    assert [c.get("fill") for c in circles] == ["#fff", "#f00"]
    assert circles[0].get("stroke") == "#f00"
    assert circles[0].find(f"{SVG}title").text == "vLLM · 512\u00a0tokens: 256\u00a0sequences (at least)"
    assert circles[1].find(f"{SVG}title").text == "vLLM · 8,192\u00a0tokens: 40\u00a0sequences"
    legend = [t.text for t in root.iter(f"{SVG}text") if t.get("class") == "sw-legend"]
    assert legend == ["vLLM", "capped"]
    rings = [c for c in root.iter(f"{SVG}circle") if c.find(f"{SVG}title") is None]
    assert len(rings) == 1 and rings[0].get("fill") == "#fff"  # the legend's open point
    plain = LineChart([Line("vLLM", "#f00", [(512, 40)], notes=[""])], x_title="x", y_title="y", x_unit="",
                      y_unit="", open_point_name="capped")
    assert "capped" not in line_chart_svg(plain)
    with pytest.raises(ValueError, match="1 notes for 2 points"):
        line_chart_svg(LineChart([Line("vLLM", "#f00", [(1, 2), (2, 1)], notes=["x"])], x_title="x", y_title="y",
                                 x_unit="", y_unit=""))


@pytest.mark.parametrize(("lang", "one", "two"), [("en", "1\u00a0sequence", "2\u00a0sequences"),
                                                  ("es", "1\u00a0secuencia", "2\u00a0secuencias")])
def test_a_count_in_a_hover_takes_its_singular_or_plural(lang, one, two):
    """Issue 19 review: the speed charts' hovers read "1 sequences" at one concurrent sequence (and the memory
    capacity chart at one sequence that fits): a counted word goes through ngettext, in both languages."""
    from calculators.memory.capacity import CapacityCurve
    from calculators.speed.model import Prediction, SpeedBasis
    from calculators.speed.predict import DecodePoint
    from reports.speed_figures import decode_charts_svg

    basis = SpeedBasis(kind="default-fit", engine_family="vllm", hardware_class="datacenter-hbm", group="vllm")
    points = [DecodePoint(concurrency=n, all_sequences=Prediction(value=50.0 * n, low=40.0 * n, high=60.0 * n,
                                                                  basis=basis),
                          per_sequence=Prediction(value=50.0, low=40.0, high=60.0, basis=basis)) for n in (1, 2)]
    curve = CapacityCurve("vllm", (4096, 8192), (2, 1), sequences_limit=256, plans_evaluated=2)
    with language(lang):
        charts = [*decode_charts_svg(points, "vllm", 1), capacity_chart_svg([curve], 4096)]
    for svg in charts:
        tips = [t.text for t in _tree(svg).iter(f"{SVG}title") if t.text and "·" in t.text]
        assert len(tips) == 2, tips
        assert any(f"{one}:" in tip or tip.endswith(f": {one}") for tip in tips), tips
        assert any(f"{two}:" in tip or tip.endswith(f": {two}") for tip in tips), tips
        assert not any(f"1\u00a0{two.split(chr(0xa0))[1]}" in tip for tip in tips), tips


@pytest.mark.parametrize(("lang", "legend"), [("en", "SGLang (dashed where it lies on vLLM)"),
                                              ("es", "SGLang (discontinua donde coincide con vLLM)")])
def test_a_line_lying_on_another_is_dashed_and_says_so(lang, legend):
    """Issue 19 review: on the memory page's capacity chart SGLang's line hid vLLM's where they fit the same number
    of sequences. A later line lying on an earlier one along half its length or more is dashed (the earlier shows in
    its gaps), its legend says so, and a point on another's is drawn smaller with both figures in its hover."""
    from calculators.memory.capacity import CapacityCurve

    vllm = CapacityCurve("vllm", (1024, 4096, 16384, 65536), (256, 183, 61, 7), sequences_limit=256, plans_evaluated=4)
    sglang = CapacityCurve("sglang", (1024, 4096, 16384, 65536), (256, 182, 60, 7), sequences_limit=256,
                           plans_evaluated=4)
    ollama = CapacityCurve("ollama", (1024, 4096, 16384, 65536), (256, 196, 90, 8), sequences_limit=256,
                           plans_evaluated=4)
    with language(lang):
        root = _tree(capacity_chart_svg([ollama, vllm, sglang], 4096))
    polylines = {line.get("stroke"): line.get("stroke-dasharray") for line in root.iter(f"{SVG}polyline")}
    colours = {engine: next(c.get("fill") for c in root.iter(f"{SVG}circle")
                            if (c.find(f"{SVG}title") is not None and c.find(f"{SVG}title").text.startswith(name)
                                and c.get("fill") != "#fff"))
               for engine, name in (("ollama", "Ollama"), ("vllm", "vLLM"), ("sglang", "SGLang"))}
    # only SGLang is dashed: Ollama is the first line; vLLM meets Ollama at the cap and at 65536 (7 and 8
    # sequences), two points of four but no segment, and SGLang lies on vLLM all along
    assert {engine: polylines[colour] for engine, colour in colours.items()} == {
        "ollama": None, "vllm": None, "sglang": "7 5"}
    legends = [t.text for t in root.iter(f"{SVG}text") if t.get("class") == "sw-legend"]
    assert legend in legends and "vLLM" in legends and "Ollama" in legends, legends
    sglang_points = [c for c in root.iter(f"{SVG}circle")
                     if c.find(f"{SVG}title") is not None and c.find(f"{SVG}title").text.startswith("SGLang")]
    assert [c.get("r") for c in sglang_points] == ["2.5", "2.5", "2.5", "2.5"]
    vllm_points = [c for c in root.iter(f"{SVG}circle")
                   if c.find(f"{SVG}title") is not None and c.find(f"{SVG}title").text.startswith("vLLM")]
    assert [c.get("r") for c in vllm_points] == ["2.5", "4", "4", "2.5"]  # on Ollama's at the cap and at 65536
    tip = sglang_points[2].find(f"{SVG}title").text
    assert tip.endswith("60\u00a0" + ("sequences; vLLM: 61\u00a0sequences" if lang == "en"
                                      else "secuencias; vLLM: 61\u00a0secuencias")), tip


def test_lines_apart_are_drawn_solid():
    chart = LineChart([Line("a", "#f00", [(1, 100), (2, 50)]), Line("b", "#0f0", [(1, 60), (2, 10)])],
                      x_title="x", y_title="y", x_unit="", y_unit="")
    svg = line_chart_svg(chart)
    assert "stroke-dasharray" not in svg and "dashed" not in svg and 'r="2.5"' not in svg
