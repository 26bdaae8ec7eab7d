"""The wizard in a browser: a recommendation link reproduces the ranking and reasons; an answer reaches the URL."""

from __future__ import annotations

import re

import pytest

from tests.support.browser import open_page, wait_for_app

pytestmark = pytest.mark.browser

LINK = "/wizard?wiz_use=shared-api&wiz_prefixes=true&wiz_users=32&wiz_tools=true"


def test_recommendation_link_shows_the_same_ranking_and_reasons(app_url, page, screenshot_dir):
    from playwright.sync_api import expect

    from calculators.wizard.answers import parse_answers
    from calculators.wizard.scoring import recommend
    from knowledge import load_knowledge

    kb = load_knowledge()
    expected = recommend(parse_answers({"use": "shared-api", "shared_prefixes": True, "concurrent_users": 32,
                                        "tool_calling": True}), kb)
    names = {engine.id: engine.name for engine in kb.engines}
    open_page(page, app_url + LINK)
    expect(page.get_by_text("First candidate:")).to_contain_text(names[expected.top.engine])
    # the reasons the link's answers bring, in the breakdown
    expect(page.get_by_text("token-identical prefixes").first).to_be_visible()
    expect(page.get_by_text("identical token for token").first).to_be_visible()
    # the ranking beside the chart: a Markdown table, the link's first candidate on its first row with its score
    ranking = page.locator('[data-testid="stHorizontalBlock"]').filter(has=page.locator("svg.wizard-concerns"))
    first_row = ranking.locator('[data-testid="stMarkdown"] table tbody tr').first
    expect(first_row).to_contain_text(names[expected.top.engine])
    expect(first_row).to_contain_text(f"{expected.top.score:+d}")
    assert page.locator('[data-testid="stException"]').count() == 0
    page.screenshot(path=str(screenshot_dir / "wizard-link.png"), full_page=True)


def test_an_answer_changed_in_the_page_reaches_the_url(app_url, page):
    from playwright.sync_api import expect

    open_page(page, app_url + "/wizard")
    # the radio shows the use's name; its slug goes to the link (issue 19)
    page.get_by_text("Offline batch jobs", exact=True).first.click()
    wait_for_app(page)
    expect(page).to_have_url(re.compile(r"wiz_use=batch"))
    page.reload()
    wait_for_app(page)
    expect(page.get_by_role("radio", name="Offline batch jobs")).to_be_checked()


def test_a_spanish_link_keeps_its_answers_when_the_rest_of_the_page_follows(app_url, page):
    """The rest of a visit's first run arrives through a timer's rerun (ui/deferred, ui/background.note_until). That
    rerun sends every widget's value as the browser would, a radio's as its label: written in English by the timer's
    own run, the Spanish page read the use as "Shared internal API" and said "Estas respuestas se contradicen: use:
    debe ser uno de estos: 'occasional-local', ..." in place of the recommendation."""
    from playwright.sync_api import expect

    open_page(page, app_url + LINK + "&lang=es")
    expect(page.get_by_text("Primer candidato:")).to_be_visible(timeout=60_000)
    expect(page.locator('[data-testid="stTable"], [data-testid="stMarkdown"] table').first).to_be_visible()
    assert page.locator('[data-testid="stAlertContentError"]').count() == 0, page.locator(
        '[data-testid="stAlertContentError"]').all_inner_texts()
    assert page.locator('[data-testid="stException"]').count() == 0
