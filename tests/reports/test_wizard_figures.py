"""The wizard's points-by-concern chart (inline SVG): one band per concern, engines in ranking order, each
segment's signed points on hover, positive points right of the zero line and negative ones left of it."""

import xml.etree.ElementTree as ET

from calculators.i18n import _
from calculators.wizard.answers import parse_answers
from calculators.wizard.concerns import CONCERNS, points_by_concern
from calculators.wizard.scoring import recommend
from knowledge.loader import load_knowledge
from reports.wizard import engine_names
from reports.wizard_figures import concern_svg

SVG = "{http://www.w3.org/2000/svg}"


def test_one_band_per_concern_engines_in_ranking_order_signed_points_on_hover():
    kb = load_knowledge()
    result = recommend(parse_answers({"use": "local-dev"}), kb)
    root = ET.fromstring(concern_svg(result, kb.wizard.rules, engine_names(kb)))
    legend = [t.text for t in root.iter(f"{SVG}text") if "sw-legend" in (t.get("class") or "")]
    assert legend == [_(label) for label in CONCERNS.values()]
    eligible = [v for v in result.ranking if not v.excluded]
    rows = ["".join(t.itertext()) for t in root.iter(f"{SVG}text") if "sw-category" in (t.get("class") or "")]
    assert rows == [engine_names(kb)[v.engine] for v in eligible]
    table = points_by_concern(eligible, kb.wizard.rules)
    zero = next(float(line.get("x1")) for line in root.iter(f"{SVG}line") if line.get("stroke-width") == "2")
    segments = [rect for rect in root.iter(f"{SVG}rect") if rect.find(f"{SVG}title") is not None]
    assert segments, "no segment drawn"
    for verdict in eligible:
        name = engine_names(kb)[verdict.engine]
        for concern, label in CONCERNS.items():
            points = table[verdict.engine][concern]
            tips = [r for r in segments if r.find(f"{SVG}title").text.startswith(f"{name} · {_(label)}:")]
            assert len(tips) == (points != 0)
            if points:
                rect = tips[0]
                assert f"{points:+d}" in rect.find(f"{SVG}title").text
                left, right = float(rect.get("x")), float(rect.get("x")) + float(rect.get("width"))
                assert (left >= zero - 0.2) if points > 0 else (right <= zero + 0.2)
