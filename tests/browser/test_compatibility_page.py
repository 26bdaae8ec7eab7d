"""The tool calls and embeddings page in a real browser: a choice lands in the URL, a shared link restores it."""

from __future__ import annotations

import pytest

from tests.support.browser import open_page, wait_for_app

pytestmark = pytest.mark.browser


def test_choosing_a_model_writes_the_link_and_the_link_restores_it(app_url, page, screenshot_dir):
    from playwright.sync_api import expect

    open_page(page, f"{app_url}/compatibility")
    expect(page.get_by_role("heading", name="Tool calls and embeddings").first).to_be_visible()
    page.get_by_label("Chat model").first.click()
    page.get_by_role("option", name="Llama 3.1 8B", exact=True).click()
    wait_for_app(page)
    assert "cmp_tool_model=llama-3.1-8b" in page.url
    # the verdicts: a Markdown table (no dataframe grid to load before it)
    expect(page.locator('[data-testid="stMarkdown"] table').filter(has_text="Parser").first).to_be_visible()
    assert page.locator('[data-testid="stException"]').count() == 0
    page.set_viewport_size({"width": 1400, "height": 2000})
    page.screenshot(path=str(screenshot_dir / "compatibility-tools.png"), full_page=True)

    cmd = "vllm serve meta-llama/Llama-3.1-8B-Instruct --enable-auto-tool-choice --tool-call-parser llama3_json"
    open_page(page, f"{app_url}/compatibility?cmp_tool_model=llama-3.1-8b&cmp_tool_cmd={cmd.replace(' ', '+')}")
    expect(page.get_by_label("Launch command (optional; checked for the engine it starts)")).to_have_value(cmd)
    expect(page.get_by_text("vLLM: works")).to_be_visible()  # the engine by its name, never its id
