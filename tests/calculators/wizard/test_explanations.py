"""Wizard reasons and caveats cannot contradict the facts they cite (issue 21, item 1).

Two checks, each proven able to fail on a deliberately broken rule: no template types a status, default,
flag, variable or number itself (they are placeholders rendered from the KB), and no rendered text states
a status, default, flag or number that the knowledge base says otherwise.
"""

import pytest

from calculators.i18n import language
from calculators.wizard.answers import parse_answers
from calculators.wizard.explain import render_fact_text
from calculators.wizard.scoring import _rules_from_kb, recommend
from knowledge import load_knowledge
from knowledge.wizard import WizardRule
from tests.support.fact_claims import STATUS_CLAIMS, contradictions, literal_facts

KB = load_knowledge()
ENTRIES = [*KB.wizard.rules, *KB.wizard.caveats]
RENDERED_RULES, RENDERED_CAVEATS = _rules_from_kb(KB)

#: The reason wizard.yaml gave GGUF before issue 21: prose that went stale when SGLang x GGUF became native.
STALE_GGUF_REASON = ("GGUF is llama.cpp's own format and Ollama's native one; elsewhere it is converted, "
                     "experimental or missing (see the compatibility matrix).")


def _text(entry) -> str:
    return getattr(entry, "reason", None) or entry.text


@pytest.mark.parametrize("entry", ENTRIES, ids=lambda e: e.id)
def test_no_template_types_a_fact_itself(entry):
    assert literal_facts(_text(entry), KB) == []


@pytest.mark.parametrize(
    ("rendered", "engine"),
    [(r, e) for r in RENDERED_RULES for e in r.points] + [(c, e) for c in RENDERED_CAVEATS for e in c.engines],
    ids=lambda v: v if isinstance(v, str) else v.id,
)
def test_no_rendered_text_contradicts_a_cited_fact(rendered, engine):
    # every engine a rule scores (or a caveat warns) is shown the same rendered text: check it for each
    assert contradictions(_text(rendered), KB, rendered.rests_on) == [], engine


def test_the_templates_do_state_facts():
    """The placeholders are used: defaults, flags and statuses appear in the rendered texts."""
    texts = {r.id: _text(r) for r in (*RENDERED_RULES, *RENDERED_CAVEATS)}
    assert "SGLang: native" in texts["gguf-weights"]
    assert "`OLLAMA_NUM_PARALLEL` defaults to 1" in texts["ollama-one-request-at-a-time"]
    assert "`--kv-unified`, default off" in texts["slot-context-is-shared"]
    assert "macOS 15" in texts["mlx-wired-memory"]
    templated = [e.id for e in ENTRIES if e.says]
    assert len(templated) >= 8, templated


def test_the_reported_gguf_answer_no_longer_contradicts_the_matrix():
    """GGUF weights on a small shared API: every reason and caveat of every engine agrees with the matrix."""
    result = recommend(parse_answers({"use": "shared-api", "weight_format": "gguf", "concurrent_users": 4}), KB)
    # support-status reasons are the status's own explanation (checked below); here wizard.yaml's rules
    wizard_rules = {rule.id for rule in KB.wizard.rules}
    for verdict in result.ranking:
        for contribution in (c for c in verdict.contributions if c.rule_id in wizard_rules):
            assert contradictions(contribution.reason, KB, contribution.rests_on) == [], contribution.rule_id
        for caveat in verdict.caveats:
            assert contradictions(caveat.text, KB, caveat.rests_on) == [], caveat.id
    gguf = next(c for v in result.ranking for c in v.contributions if c.rule_id == "gguf-weights")
    assert f"SGLang: {KB.formats.cell('sglang', 'gguf').status}" in gguf.reason


def test_the_checks_catch_the_stale_gguf_reason():
    rests_on = ("compat:llama-cpp/gguf", "compat:ollama/gguf", "compat:vllm/gguf")
    literal = literal_facts(STALE_GGUF_REASON, KB)
    assert any("native" in p for p in literal) and any("missing" in p for p in literal)
    found = contradictions(STALE_GGUF_REASON, KB, rests_on)
    assert any(p.startswith("says SGLang x gguf is") and "matrix says native" in p for p in found), found


def test_the_checks_catch_a_wrong_default_an_unknown_flag_and_a_typed_number():
    broken = WizardRule(
        id="broken", when={}, points={"ollama": 1}, rests_on=("knob:ollama/num_parallel",),
        reason="Ollama's OLLAMA_NUM_PARALLEL defaults to 4; raise it with --num-parallel.",
    )
    literal = literal_facts(broken.reason, KB)
    assert {"literal number '4'", "literal flag '--num-parallel'", "literal knob name 'OLLAMA_NUM_PARALLEL'"} <= set(
        literal
    )
    found = contradictions(broken.reason, KB, broken.rests_on)
    assert "says 'OLLAMA_NUM_PARALLEL' defaults to '4'; engines.yaml says ['1']" in found
    assert "flag '--num-parallel' is not spelled in engines.yaml" in found
    # the same rule as a template renders the KB's default and passes both checks
    fixed = WizardRule(id="fixed", when={}, points={"ollama": 1}, rests_on=("knob:ollama/num_parallel",),
                       reason="Ollama's {p} defaults to {d}; raise it when users wait.",
                       says={"p": "name knob:ollama/num_parallel", "d": "default knob:ollama/num_parallel"})
    assert literal_facts(fixed.reason, KB) == []
    assert contradictions(render_fact_text(fixed.reason, fixed.says, KB), KB, fixed.rests_on) == []


def test_a_placeholder_must_cite_a_fact_in_rests_on():
    with pytest.raises(ValueError, match="must be listed in rests_on"):
        WizardRule(id="x", when={}, points={"ollama": 1}, rests_on=("engine:ollama",),
                   reason="Ollama's slots default to {d} at start-up.", says={"d": "default knob:ollama/num_parallel"})
    with pytest.raises(ValueError, match="placeholders"):
        WizardRule(id="x", when={}, points={"ollama": 1}, rests_on=("engine:ollama",),
                   reason="Ollama's slots default to {d} at start-up.", says={})


def test_each_support_status_explanation_claims_its_own_status():
    """The reasons for hardware/OS/format statuses are keyed by status: their words must name that status."""
    for effect in KB.wizard.support_status_effects:
        claimed = {s for s, p in STATUS_CLAIMS.items()
                   if p.search(effect.explanation)}
        assert claimed <= {effect.status}, (effect.status, claimed)


def test_templates_render_in_every_language():
    """A translated template keeps its placeholders: rendering in Spanish fills the same facts."""
    with language("es"):
        spanish = {r.id: _text(r) for r in _rules_from_kb(KB)[1]}
    assert "`OLLAMA_NUM_PARALLEL`" in spanish["ollama-one-request-at-a-time"]
