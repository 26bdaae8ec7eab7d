"""The Operations page in a browser: a shared link selects engines and plan parameters; a change reaches the URL."""

from __future__ import annotations

import pytest

from tests.support.browser import open_page, wait_for_app

pytestmark = pytest.mark.browser


def test_operations_shared_link_shows_sourced_tables_and_plan(app_url, page, screenshot_dir):
    from playwright.sync_api import expect

    open_page(page, f"{app_url}/operations?ops_engines=sglang&ops_engines=ollama&ops_rates=2%2C%208")
    engines = page.locator('[data-testid="stMultiSelect"]').filter(has_text="Engines")
    # people read the engines' names; the slugs stay in the link (issue 19)
    expect(engines).to_contain_text("SGLang")
    expect(engines).to_contain_text("Ollama")
    expect(page.get_by_role("heading", name="Endpoints")).to_be_visible()
    assert page.locator('[data-testid="stException"]').count() == 0
    page.set_viewport_size({"width": 1400, "height": 2400})
    page.screenshot(path=str(screenshot_dir / "operations-api.png"), full_page=True)

    page.get_by_role("tab", name="Metrics and lifecycle").click()
    expect(page.get_by_text("Ollama lacks:")).to_be_visible()
    page.screenshot(path=str(screenshot_dir / "operations-metrics.png"), full_page=True)

    page.get_by_role("tab", name="Security").click()
    expect(page.get_by_text("does not create an access boundary")).to_be_visible()
    page.screenshot(path=str(screenshot_dir / "operations-security.png"), full_page=True)

    page.get_by_role("tab", name="Benchmark plan").click()
    sglang = page.locator('[data-testid="stExpander"]').filter(has_text="SGLang")
    sglang.locator("summary").click()
    # the link's rate 8 reaches SGLang's own tool, spelled its way
    expect(sglang.locator('[data-testid="stCode"]')).to_contain_text("--request-rate 8")
    expect(page.get_by_role("button", name="Download plan (YAML)")).to_be_visible()
    page.screenshot(path=str(screenshot_dir / "operations-plan.png"), full_page=True)


def test_operations_widget_change_reaches_the_url(app_url, page):
    from playwright.sync_api import expect

    open_page(page, f"{app_url}/operations?ops_engines=vllm")
    page.get_by_role("tab", name="Benchmark plan").click()
    page.get_by_text("Include tool calls").click()
    wait_for_app(page)
    page.wait_for_function("() => window.location.search.includes('ops_tools=true')")
    assert "ops_engines=vllm" in page.url
    expect(page.get_by_text("Tool calling: needs-flag; parser flags: --enable-auto-tool-choice")).to_be_visible()


def test_a_spanish_link_shows_the_knowledge_base_prose_in_spanish(app_url, page):
    """The facts quoted from knowledge/engines.yaml read in Spanish; flags and sources stay as written (issue 19)."""
    from playwright.sync_api import expect

    open_page(page, f"{app_url}/operations?lang=es&ops_engines=vllm")
    expect(page.get_by_text("la plantilla de chat del tokenizador").first).to_be_visible()
    expect(page.get_by_text("el generation_config.json del modelo (--generation-config auto, por defecto)").first
           ).to_be_visible()
    assert page.get_by_text("the tokenizer's chat template").count() == 0
    assert page.locator('[data-testid="stException"]').count() == 0
    assert "ops_engines=vllm" in page.url and "lang=es" in page.url
