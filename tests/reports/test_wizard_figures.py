"""The wizard's points-by-concern chart: one bar trace per concern, engines in ranking order, legend below."""

from calculators.wizard.answers import parse_answers
from calculators.wizard.concerns import CONCERNS
from calculators.wizard.scoring import recommend
from knowledge.loader import load_knowledge
from reports.wizard import engine_names
from reports.wizard_figures import concern_figure


def test_one_trace_per_concern_and_the_legend_clears_the_axes():
    kb = load_knowledge()
    result = recommend(parse_answers({"use": "local-dev"}), kb)
    figure = concern_figure(result, kb.wizard.rules, engine_names(kb))
    assert [trace.name for trace in figure.data] == list(CONCERNS.values())
    eligible = [v for v in result.ranking if not v.excluded]
    assert list(figure.data[0].y) == [engine_names(kb)[v.engine] for v in eligible][::-1]
    assert figure.layout.legend.orientation == "h" and figure.layout.legend.yref == "container"  # below the axis title
    assert figure.layout.barmode == "relative"
