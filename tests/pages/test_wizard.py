"""The wizard page: default flow, a shared link's answers, and contradictory answers."""

from pathlib import Path

from streamlit.testing.v1 import AppTest

PAGE = str(Path(__file__).resolve().parents[2] / "pages" / "wizard.py")


def run_page(**query):
    at = AppTest.from_file(PAGE, default_timeout=30)
    for key, value in query.items():
        at.query_params[key] = value
    at.run()
    assert not at.exception, at.exception
    return at


def test_default_answers_rank_engines_with_reasons():
    at = run_page()
    assert any("First candidate" in s.value for s in at.success)
    # the ranking (a Markdown table: rank, engine, signed score) and the points-by-concern chart (inline SVG)
    assert any("| # |" in m.value and "| +" in m.value for m in at.markdown)
    assert any("wizard-concerns" in m.value for m in at.markdown)
    assert any("shared API" in m.value or "scheduler" in m.value for m in at.markdown)


def test_shared_link_reproduces_the_answers():
    at = run_page(wiz_use="shared-api", wiz_prefixes="true", wiz_users="32")
    top = next(s.value for s in at.success if "First candidate" in s.value)
    assert "SGLang" in top
    assert any("token for token" in w.value for w in at.warning)


def test_contradictory_answers_show_a_clear_message():
    at = run_page(wiz_hardware="apple", wiz_os="windows")
    assert any("contradict" in e.value and "macos" in e.value for e in at.error)


def test_bad_link_value_falls_back_with_a_note():
    at = run_page(wiz_use="chatbot", wiz_users="-5")
    notes = " ".join(w.value for w in at.warning)
    assert "wiz_use" in notes and "wiz_users" in notes
    assert any("First candidate" in s.value for s in at.success)


def test_top_choices_get_memory_plans_launch_commands_and_a_memory_page_link():
    at = run_page(wiz_model="llama-3.1-8b", wiz_gpu="h100-sxm-80gb", wiz_users="16")
    assert any("Memory plan for the top choices" in h.value for h in at.subheader)
    commands = [c.value for c in at.code]
    assert any(c.startswith("vllm serve meta-llama/Llama-3.1-8B") for c in commands) or any(
        "sglang" in c for c in commands)
    assert any("holds" in m.value for m in at.markdown)
    assert any("users** per instance within p95 TTFT ≤ 1\u00a0s" in m.value for m in at.markdown)


def test_without_model_and_gpu_the_plan_section_says_what_to_pick():
    at = run_page()
    assert any("Pick a catalog model and a GPU" in c.value for c in at.caption)


def test_each_use_case_caption_adds_to_its_name_in_both_languages():
    """The use-case answers read "Offline batch jobs / offline batch jobs" and "Public multi-tenant service / a
    public, multi-tenant service" (issue 19 review): a caption must say something its answer's name does not."""
    import re

    from tests.support.page_runs import page_in_language

    def words(text: str) -> set[str]:
        return set(re.findall(r"\w+", text.lower())) - {"a", "an", "the", "un", "una", "el", "la", "for", "para"}

    for lang in ("en", "es"):
        at = page_in_language(PAGE, lang).run()
        assert not at.exception
        use = at.radio(key="wiz_use")
        captions = list(use.proto.captions)
        assert len(captions) == len(use.options) == 6
        for name, caption in zip(use.options, captions, strict=True):
            assert not words(caption) <= words(name) | {"rag", "jobs", "service"}, (lang, name, caption)
            assert len(words(caption) - words(name)) >= 3, (lang, name, caption)


def test_the_check_verdicts_read_as_before_once_worded_in_reports():
    """The sentences of the rules built from the compatibility checks moved from calculators/wizard/compatibility.py
    to reports/compatibility.py (calculators return data): the page shows them word for word as before, in English
    and Spanish, in the ranking's expanders and in the Markdown download."""
    from calculators.i18n import language
    from calculators.wizard.answers import WizardAnswers
    from calculators.wizard.scoring import recommend
    from knowledge.loader import load_knowledge
    from reports.wizard import recommendation_markdown_for
    from tests.support.page_runs import page_in_language

    expected = {
        "en": ("Llama 3.1 8B, tool calls: tool calls parse once these launch flags are added: "
               "`--enable-auto-tool-choice` `--tool-call-parser llama3_json`",
               "**-4** — Llama 3.1 8B, tool calls: tool calls will come back as text, not tool_calls"),
        "es": ("Llama 3.1 8B, llamadas a herramientas: las llamadas a herramientas se interpretan una vez añadidos "
               "estos flags de arranque: `--enable-auto-tool-choice` `--tool-call-parser llama3_json`",
               "**-4** — Llama 3.1 8B, llamadas a herramientas: las llamadas a herramientas volverán como texto, no "
               "como tool_calls"),
    }
    kb = load_knowledge()
    for lang, (caveat, points) in expected.items():
        at = page_in_language(PAGE, lang, {"wiz_model": "llama-3.1-8b", "wiz_tools": "true"}).run()
        assert not at.exception, at.exception
        assert caveat in [w.value for w in at.warning], [w.value for w in at.warning]
        assert points in [m.value for e in at.expander for m in e.markdown]
        with language(lang):
            markdown = recommendation_markdown_for(recommend(WizardAnswers(model_id="llama-3.1-8b",
                                                                            tool_calling=True), kb), kb)
        assert f"- ⚠ {caveat}" in markdown.splitlines()
    embeddings = page_in_language(PAGE, "en", {"wiz_model": "bge-m3", "wiz_use": "embeddings"}).run()
    assert ("BGE-M3, embeddings: vectors match once these flags are added: `--embeddings` `-ub 8192 -b 8192`"
            in [w.value for w in embeddings.warning])
