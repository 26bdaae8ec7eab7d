"""Every reason the checks can give has a sentence, with its placeholders filled."""

import re

from calculators.checks.embeddings import check_embeddings, embedding_model_from_catalog
from calculators.checks.tool_calls import check_tool_calls, tool_model_from_catalog
from knowledge.loader import load_knowledge
from reports.compatibility import (
    _EMBEDDING_REASONS,
    _TOOL_REASONS,
    checks_json,
    embedding_checks_markdown,
    embedding_reason_text,
    tool_checks_markdown,
    tool_reason_text,
    verdict_label,
)

PLACEHOLDER = re.compile(r"\{[a-z_]+\}")
TOOLS = load_knowledge().tool_calling
EMBED = load_knowledge().embedding_serving


def test_every_catalog_verdict_renders_without_unfilled_placeholders() -> None:
    kb = load_knowledge()
    tool_checks = [
        check_tool_calls(tool_model_from_catalog(m.id, TOOLS), engine, None, TOOLS)
        for m in kb.models.models if m.embedding is None for engine in TOOLS.engines
    ]
    embed_checks = [
        check_embeddings(embedding_model_from_catalog(m), engine, None, EMBED)
        for m in kb.models.models if m.embedding is not None for engine in EMBED.engines
    ]
    for check in tool_checks:
        for reason in check.reasons:
            assert reason.code in _TOOL_REASONS
            text = tool_reason_text(reason.code, reason.values)
            assert not PLACEHOLDER.search(text) and text.strip()
    for check in embed_checks:
        for reason in check.reasons:
            assert reason.code in _EMBEDDING_REASONS
            text = embedding_reason_text(reason.code, reason.values)
            assert not PLACEHOLDER.search(text) and text.strip()
    assert tool_checks_markdown(tool_checks[:5]).count("\n") == 6
    assert embedding_checks_markdown(embed_checks[:5]).count("\n") == 6
    assert '"verdict"' in checks_json(tool_checks[:1] + embed_checks[:1])


def test_verdicts_and_reasons_read_in_spanish() -> None:
    from calculators.i18n import language

    with language("es"):
        assert verdict_label("needs-flags") == "necesita flags"
        assert tool_reason_text("parser-missing", {"flag": "--tool-call-parser", "parser": "hermes"}) == (
            "No se ha elegido parser de llamadas; añade --tool-call-parser\u00a0hermes."  # one code span where drawn
        )


def test_the_spanish_tool_call_verdict_says_the_calls_will_not_be_interpreted():
    """'will not parse' read "no se analizará" ("will not be analysed") on the Spanish page (issue 19 review); the
    page says elsewhere that tool calls "se interpretan" once a parser reads them, and the verdict uses that verb."""
    from calculators.i18n import language
    from reports.compatibility import verdict_label

    with language("es"):
        assert verdict_label("will-not-parse") == "no se interpretarán"
        assert "analiz" not in verdict_label("will-not-parse")


def test_a_call_format_is_shown_by_its_name_and_its_id_stays_in_the_json():
    """Issue 19: the tool-call page showed the slug "llama3-json"; people read the name knowledge/tool_calling.yaml
    gives it (as the cited parser spells it), the JSON keeps the id."""
    from knowledge import load_knowledge
    from reports.compatibility import call_format_text, tool_reason_text

    formats = load_knowledge().tool_calling.call_formats
    assert all(f.name and f.name != f.id for f in formats)
    assert call_format_text("llama3-json") == "Llama 3 JSON"
    assert call_format_text("hermes-json") == "Hermes JSON"
    sentence = tool_reason_text("parser-reads-format", {"parser": "llama3_json", "call_format": "llama3-json"})
    assert sentence == "The llama3_json parser reads the model's Llama 3 JSON calls."
