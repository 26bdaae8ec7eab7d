"""The wizard's tool-calling and embeddings answers use the checks' verdicts for the team's catalog model."""

from calculators.wizard.answers import WizardAnswers
from calculators.wizard.scoring import recommend
from knowledge.loader import load_knowledge


def _by_engine(result):
    return {v.engine: v for v in result.ranking}


def test_tool_calling_scores_each_engine_by_its_verdict_and_names_the_flags():
    kb = load_knowledge()
    verdicts = _by_engine(recommend(WizardAnswers(model_id="llama-3.1-8b", tool_calling=True), kb))
    mlx = [c for c in verdicts["mlx-lm"].contributions if c.rule_id == "check-tool-calls-mlx-lm"]
    assert [c.points for c in mlx] == [-4]  # MLX LM infers no parser from Llama 3.1's template
    assert [c.points for c in verdicts["llama-cpp"].contributions if c.rule_id.startswith("check-")] == [1]
    vllm_caveats = [c for c in verdicts["vllm"].caveats if c.id == "check-tool-calls-vllm"]
    # the flags as data, each with its value; reports/compatibility.py draws them (as code spans)
    assert [c.checked.flags for c in vllm_caveats if c.checked] == [
        ("--enable-auto-tool-choice", "--tool-call-parser llama3_json")]


def test_the_check_rules_carry_data_not_markdown():
    """Calculators return data, renderings live in reports/ (GUIDE): the rules built from the checks' verdicts wrote
    their Markdown sentence, code spans included, in calculators/wizard/compatibility.py."""
    kb = load_knowledge()
    result = recommend(WizardAnswers(model_id="llama-3.1-8b", tool_calling=True), kb)
    checked = [(c.reason, c.checked) for v in result.ranking for c in v.contributions if c.rule_id.startswith("check-")]
    checked += [(c.text, c.checked) for v in result.ranking for c in v.caveats if c.id.startswith("check-")]
    assert len(checked) == 5  # one verdict per engine
    effects = {e.explanation for e in kb.wizard.compatibility_effects.tool_calls}
    for text, verdict in checked:
        assert verdict is not None and verdict.model == "Llama 3.1 8B" and verdict.checked == "tool calls"
        assert text == verdict.explanation and text in effects  # the knowledge base's English sentence, untouched
        assert "`" not in text and all("`" not in flag for flag in verdict.flags)


def test_without_tool_calling_the_verdicts_do_not_count():
    kb = load_knowledge()
    verdicts = _by_engine(recommend(WizardAnswers(model_id="llama-3.1-8b"), kb))
    assert not any(c.rule_id.startswith("check-") for v in verdicts.values() for c in v.contributions)


def test_an_embeddings_service_scores_the_embedding_verdicts():
    kb = load_knowledge()
    verdicts = _by_engine(recommend(WizardAnswers(model_id="bge-m3", use="embeddings"), kb))
    assert [c.points for c in verdicts["mlx-lm"].contributions if c.rule_id.startswith("check-")] == [-4]
    assert [c.points for c in verdicts["vllm"].contributions if c.rule_id.startswith("check-")] == [1]
    llama = [c.checked.flags for c in verdicts["llama-cpp"].caveats if c.id.startswith("check-") and c.checked]
    assert llama and "--embeddings" in llama[0] and "-ub 8192 -b 8192" in llama[0]


def test_the_caveat_names_the_model_and_reads_in_the_readers_language():
    from calculators.i18n import language
    from reports.wizard import reason_text

    kb = load_knowledge()
    answers = WizardAnswers(model_id="llama-3.1-8b", tool_calling=True)
    caveats = [c for c in _by_engine(recommend(answers, kb))["vllm"].caveats if c.id == "check-tool-calls-vllm"]
    english = [reason_text(c.text, c.checked) for c in caveats]
    assert english == ["Llama 3.1 8B, tool calls: tool calls parse once these launch flags are added: "
                       "`--enable-auto-tool-choice` `--tool-call-parser llama3_json`"]
    with language("es"):
        spanish = [reason_text(c.text, c.checked) for c in caveats]  # worded where shown, in the reader's language
    assert spanish == ["Llama 3.1 8B, llamadas a herramientas: las llamadas a herramientas se interpretan una vez "
                       "añadidos estos flags de arranque: `--enable-auto-tool-choice` `--tool-call-parser llama3_json`"]
    assert "llama-3.1-8b" not in english[0] + spanish[0]  # the name, never the slug
