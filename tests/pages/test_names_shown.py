"""People read names, not slugs: no page's typical link shows an id where the knowledge base has a name (AppTest).

The rule of tests/browser/test_names_and_language.py (names on screen, slugs in links and JSON), checked over every
text of every page (tests/support/page_text.py) in its typical state (tests/support/page_links.py). Issue 19 found
the tool-call page's call format shown as "llama3-json" (in its table, its caption and its reasons) and the
formats page's statuses as "via-plugin" / "not-supported" on English pages.

What may show an id: code spans (a flag's value, a command), links and query strings (`?mem_gpu=h100-sxm-80gb`),
and the formats page's `id` column of schemes, which lists the ids the CLI's --weights takes (catalog scheme ids are
therefore not checked here). A name equal to its id (OpenAI calls its model gpt-oss-20b) is not a slug shown.
"""

from __future__ import annotations

import re
from functools import cache
from urllib.parse import parse_qs

import pytest
from streamlit.testing.v1 import AppTest

from calculators.engines import ENGINES
from calculators.hardware.compat import CompatStatus
from knowledge import load_knowledge
from reports.compatibility import verdict_label
from reports.engines_tables import KB_WORDS
from tests.support.page_discovery import app_pages
from tests.support.page_links import TYPICAL_LINKS
from tests.support.page_text import page_script, page_texts

#: Verdict ids of the tool-call and embedding checks (reports/compatibility.verdict_label words them).
VERDICTS = ("needs-flags", "will-not-parse", "will-match", "will-not-match", "not-served")
#: What may carry an id: a code span, a Markdown link's target, a URL, a query string or a key=value setting.
_MAY_CARRY_IDS = re.compile(r"(`+).+?\1|\]\([^)]*\)|https?://\S+|\S*[?&=]\S*", re.S)


@cache
def slugs_with_names() -> dict[str, str]:
    """Every id a page must show by its name: engines, GPUs, models, call formats, statuses and KB words -> name."""
    kb = load_knowledge()
    names = {engine.id: engine.display_name for engine in ENGINES.values()}
    names |= {gpu.id: gpu.name for gpu in kb.gpus.all_gpus}
    names |= {model.id: model.name for model in kb.models.models}
    names |= {call_format.id: call_format.name for call_format in kb.tool_calling.call_formats}
    names |= {status.value: status.value.replace("-", " ") for status in CompatStatus}
    names |= dict(KB_WORDS) | {verdict: verdict_label(verdict) for verdict in VERDICTS}
    # only ids that read as ids (a hyphen, an underscore or a digit in them) and differ from their name
    return {slug: name for slug, name in names.items() if re.search(r"[-_\d]", slug) and slug != name}


def slugs_in(text: str) -> list[str]:
    """The ids of `slugs_with_names` that `text` shows as words of their own, outside code, links and settings."""
    pattern = re.compile(r"(?<![\w/.-])(" + "|".join(sorted(map(re.escape, slugs_with_names()), key=len,
                                                                 reverse=True)) + r")(?![\w/-])")
    return pattern.findall(_MAY_CARRY_IDS.sub(" ", text))


def test_the_check_itself_finds_a_slug_and_passes_a_name():
    assert slugs_in("The llama3_json parser reads the model's llama3-json calls.") == ["llama3-json"]
    assert slugs_in("Ollama × AWQ: not-supported") == ["not-supported"]
    assert slugs_in("vLLM: needs-flags") == ["needs-flags"]
    assert not slugs_in("The llama3_json parser reads the model's Llama 3 JSON calls; `--tool-call-parser llama3-json`")
    assert not slugs_in("Open the memory page with: ?mem_model=llama-3.1-8b&mem_gpu=h100-sxm-80gb")


@pytest.mark.parametrize("page", [path.stem for path in app_pages()])
def test_a_page_shows_names_not_slugs(page):
    path = next(p for p in app_pages() if p.stem == page)
    at = AppTest.from_string(page_script(path, "en"), default_timeout=300)
    for key, values in parse_qs(TYPICAL_LINKS.get(page, "")).items():
        at.query_params[key] = values if len(values) > 1 else values[0]
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    shown = {(text.where, slug, text.text[:120]) for text in page_texts(at) for slug in slugs_in(text.text)}
    assert not shown, sorted(shown)
