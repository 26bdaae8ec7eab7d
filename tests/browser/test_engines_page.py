"""The Engines page in a real browser: a shared link applies its filters; a stale value gets a visible note."""

from __future__ import annotations

import pytest

from tests.support.browser import open_page

pytestmark = pytest.mark.browser


def test_engines_shared_link_applies_its_filters(app_url, page, screenshot_dir):
    from playwright.sync_api import expect

    open_page(page, f"{app_url}/engines?engines_backend=metal&engines_feature=prometheus-metrics&engines_knobs=vllm")
    # Metal + Prometheus metrics leaves llama.cpp, vLLM (vllm-metal plugin) and SGLang (experimental MLX/MPS)
    expect(page.get_by_role("heading", name="3 of 5 engines")).to_be_visible()
    expect(page.locator('[data-testid="stMultiSelect"]').filter(has_text="Hardware backend")).to_contain_text("metal")
    expect(page.get_by_role("heading", name="Strengths and limits of vLLM")).to_be_visible()
    assert page.locator('[data-testid="stException"]').count() == 0
    page.set_viewport_size({"width": 1400, "height": 2600})
    page.screenshot(path=str(screenshot_dir / "engines-shared-link.png"))


def test_engines_stale_link_value_gets_a_note(app_url, page):
    from playwright.sync_api import expect

    open_page(page, f"{app_url}/engines?engines_os=beos&engines_os=linux")
    note = page.locator('[data-testid="stAlert"]').filter(has_text="engines_os")
    expect(note).to_be_visible()
    expect(note).to_contain_text("beos")
    # the valid half of the link still applies: every primary engine runs on Linux
    expect(page.get_by_role("heading", name="5 of 5 engines")).to_be_visible()
    assert page.locator('[data-testid="stException"]').count() == 0
