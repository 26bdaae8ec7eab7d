"""People read names, links carry slugs, and a Spanish link opens the app in Spanish (real Chromium)."""

from __future__ import annotations

from urllib.parse import parse_qs, urlparse

import pytest

from tests.support.browser import open_page, page_urls, registered_page_count, wait_for_app

pytestmark = pytest.mark.browser


def _params(url: str) -> dict[str, list[str]]:
    return parse_qs(urlparse(url).query)


def _wait_for_param(page, key: str, timeout_ms: int = 30_000) -> None:
    """Wait until the URL carries query parameter `key` (a choice reaches the link; times out if it never does)."""
    page.wait_for_function("key => new URLSearchParams(location.search).has(key)", arg=key, timeout=timeout_ms)


def test_a_chosen_name_writes_the_slug_into_the_link(app_url, page):
    from playwright.sync_api import expect

    open_page(page, f"{app_url}/memory")
    page.get_by_label("GPU or Apple silicon").first.click()
    page.get_by_role("option", name="NVIDIA A100 SXM4 80 GB", exact=True).click()
    # The rerun a choice starts can begin after wait_for_app has seen the previous run finished (seen under load in
    # make test): wait for the link to change, then check what it says.
    _wait_for_param(page, "mem_gpu")
    wait_for_app(page)
    assert _params(page.url).get("mem_gpu") == ["a100-sxm-80gb"], page.url
    assert "NVIDIA" not in page.url and "SXM4" not in page.url
    page.get_by_label("Catalog model").first.click()
    page.get_by_role("option", name="Llama 3.1 70B", exact=True).click()
    _wait_for_param(page, "mem_model")
    wait_for_app(page)
    assert _params(page.url).get("mem_model") == ["llama-3.1-70b"], page.url
    # the link restores the names from the slugs
    open_page(page, page.url)
    expect(page.get_by_text("NVIDIA A100 SXM4 80 GB").first).to_be_visible()
    expect(page.get_by_text("Llama 3.1 70B").first).to_be_visible()
    assert page.locator('[data-testid="stException"]').count() == 0


def test_a_labelled_multiselect_keeps_slugs_in_the_link(app_url, page):
    open_page(page, f"{app_url}/simulator")
    picker = page.locator('[data-testid="stMultiSelect"]').filter(has_text="Engines to compare")
    picker.locator("input").first.click()
    page.get_by_role("option", name="llama.cpp (llama-server)", exact=True).click()
    wait_for_app(page)
    engines = _params(page.url).get("sim_engines", [])
    assert "llama-cpp" in engines and not any(" " in e or "(" in e for e in engines), page.url


def test_a_spanish_shared_link_opens_in_spanish_with_human_names(app_url, page, screenshot_dir):
    from playwright.sync_api import expect

    open_page(page, f"{app_url}/memory?lang=es&mem_gpu=h100-sxm-80gb&mem_model=llama-3.1-8b")
    expect(page.get_by_role("heading", name="Memoria y capacidad").first).to_be_visible()
    expect(page.get_by_text("NVIDIA H100 SXM5 80 GB").first).to_be_visible()
    expect(page.get_by_text("Llama 3.1 8B").first).to_be_visible()
    expect(page.locator('[data-testid="stSidebarNav"]').get_by_text("Inicio")).to_be_visible()
    assert page.locator('[data-testid="stException"]').count() == 0
    assert _params(page.url).get("lang") == ["es"]
    page.screenshot(path=str(screenshot_dir / "memory-es.png"), full_page=False)
    # moving to another page keeps the language
    page.locator('[data-testid="stSidebarNav"]').get_by_text("Inicio").click()
    wait_for_app(page)
    expect(page.get_by_role("heading", name="Cuatro capas, cuatro decisiones").first).to_be_visible()


def test_the_browser_language_is_the_default(browser, app_url):
    from playwright.sync_api import expect

    context = browser.new_context(locale="es-ES", viewport={"width": 1400, "height": 1000})
    try:
        tab = context.new_page()
        open_page(tab, app_url)
        expect(tab.get_by_role("heading", name="Cuatro capas, cuatro decisiones").first).to_be_visible()
        tab.locator('[data-testid="stSidebar"]').get_by_text("English", exact=True).click()
        wait_for_app(tab)
        expect(tab.get_by_role("heading", name="Four layers, four decisions").first).to_be_visible()
        assert _params(tab.url).get("lang") == ["en"]
    finally:
        context.close()


def _spanish_titles() -> dict[str, str]:
    """Each page's title (its st.title) in Spanish, keyed by the English title."""
    import re

    from calculators.i18n import _, language
    from tests.support.page_discovery import app_pages

    titles = {}
    for path in app_pages():
        found = re.search(r"""st\.title\(_\(["'](.+?)["']\)\)""", path.read_text())
        if found:
            with language("es"):
                titles[found.group(1)] = _(found.group(1))
    return titles


def test_every_page_opens_in_spanish_from_a_link(app_url, page, screenshot_dir):
    """Every page of the navigation, opened from a `lang=es` link, draws without error under its Spanish title."""
    titles = _spanish_titles()
    assert len(titles) >= 10, titles
    spanish = set(titles.values())
    urls = page_urls(page, f"{app_url}/?lang=es")
    assert len(urls) == registered_page_count()
    seen = set()
    for url in urls:
        open_page(page, url + ("&" if "?" in url else "?") + "lang=es")
        assert page.locator('[data-testid="stException"]').count() == 0, url
        heading = page.locator("h1").first.inner_text().strip()
        if heading != "servewise":  # Home's title is the product name
            assert heading in spanish, f"{url}: title {heading!r} is not a Spanish page title"
            seen.add(heading)
        name = urlparse(url).path.strip("/") or "home"
        page.screenshot(path=str(screenshot_dir / f"{name}-es.png"), full_page=False)
    assert seen == spanish - {"servewise"}, spanish - seen
