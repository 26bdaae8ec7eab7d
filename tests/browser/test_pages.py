"""What a user sees in a real browser: every registered page opens cleanly; shared links apply their values."""

from __future__ import annotations

import re

import pytest

from tests.support.browser import open_page, page_urls, registered_page_count

pytestmark = pytest.mark.browser


def _expect():
    """Playwright's retrying assertions (imported late so a missing package fails in the fixture message)."""
    from playwright.sync_api import expect

    return expect


def _queued_metric(page):
    """The 'Waiting in the queue' figure: the second cell of the first row of the request-states table."""
    table = page.locator('[data-testid="stMarkdown"] table').filter(has_text="Waiting in the queue")
    return table.locator("tbody tr").first.locator("td").nth(1)


def test_sidebar_lists_every_registered_page(app_url, page):
    urls = page_urls(page, app_url)
    expected = registered_page_count()
    # Streamlit hides the navigation when only one page is registered.
    assert len(urls) == (expected if expected > 1 else 1)


def test_every_page_opens_without_exception(app_url, page, screenshot_dir):
    for index, url in enumerate(page_urls(page, app_url)):
        open_page(page, url)
        assert page.locator('[data-testid="stException"]').count() == 0, f"exception shown on {url}"
        title = page.locator("h1").first
        assert title.is_visible(), f"no visible page title on {url}"
        assert title.inner_text().strip(), f"empty page title on {url}"
        page.screenshot(path=str(screenshot_dir / f"page-{index}.png"))


def test_home_shared_link_applies_its_values(app_url, page, screenshot_dir):
    expect = _expect()
    open_page(page, f"{app_url}/?home_connections=40&home_active=4")
    expect(page.get_by_label("Open connections (one request each)", exact=True)).to_have_value("40")
    expect(page.get_by_label("Sequences the engine admits at once", exact=True)).to_have_value("4")
    expect(_queued_metric(page)).to_have_text("36")
    # Both diagrams are drawn (layers, and connections -> queue -> active -> one copy of the weights).
    # the two diagrams are inline SVG (reports/svg_charts.py), no longer graphviz charts
    expect(page.locator('[data-testid="stMarkdown"] svg.sw-flow')).to_have_count(2)
    expect(page.locator("svg.home-requests")).to_contain_text("1 copy of the weights")
    expect(page.locator("svg.home-requests")).to_contain_text("36 queued")
    # figures keep their unit with a no-break space (calculators/units.UNIT_SPACE)
    assert "4 active sequences that each reach 8,192\u00a0tokens hold 4\u00a0GiB" in page.locator("body").inner_text()
    page.set_viewport_size({"width": 1400, "height": 3200})
    page.screenshot(path=str(screenshot_dir / "home-shared-link.png"))


def test_home_bad_link_value_falls_back_with_a_note(app_url, page):
    expect = _expect()
    open_page(page, f"{app_url}/?home_active=lots")
    note = page.locator('[data-testid="stAlert"]').filter(has_text="home_active")
    expect(note).to_be_visible()
    expect(note).to_contain_text("lots")
    expect(page.get_by_label("Sequences the engine admits at once", exact=True)).to_have_value("8")
    assert page.locator('[data-testid="stException"]').count() == 0


def test_home_widget_change_is_written_to_the_url(app_url, page):
    expect = _expect()
    open_page(page, app_url)
    field = page.get_by_label("Sequences the engine admits at once", exact=True)
    field.fill("16")
    field.press("Enter")
    page.wait_for_url(re.compile(r"home_active=16"))
    # The URL changes before the rerun finishes: retry until the new value is drawn.
    expect(_queued_metric(page)).to_have_text("84")
