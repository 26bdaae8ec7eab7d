"""Each engine's points summed by concern add up to its score, and every wizard answer belongs to one concern."""

from calculators.wizard.answers import WizardAnswers, parse_answers
from calculators.wizard.concerns import CONCERNS, answer_concern, points_by_concern, rule_concern
from calculators.wizard.scoring import recommend
from knowledge.loader import load_knowledge


def test_every_answer_and_every_rule_has_a_concern():
    kb = load_knowledge()
    assert all(answer_concern(field) in CONCERNS for field in WizardAnswers.model_fields)
    assert {rule_concern(rule.when) for rule in kb.wizard.rules} <= set(CONCERNS)
    assert rule_concern({"use": "batch"}) == "use" and rule_concern({"ops_skill": "low"}) == "operations"


def test_points_by_concern_add_up_to_each_score():
    kb = load_knowledge()
    answers = parse_answers({"use": "shared-api", "weight_format": "gguf", "ops_skill": "low", "concurrent_users": 200})
    result = recommend(answers, kb)
    table = points_by_concern(result.ranking, kb.wizard.rules)
    for verdict in result.ranking:
        assert sum(table[verdict.engine].values()) == sum(c.points for c in verdict.contributions)
    # a shared API is a "use" answer: vLLM gains there
    assert table["vllm"]["use"] > 0
