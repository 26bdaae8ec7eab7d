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
    backend = page.locator('[data-testid="stMultiSelect"]').filter(has_text="Hardware backend")
    expect(backend).to_contain_text("Metal (Apple)")  # the backend's name; the link keeps the slug
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


COMPARISON_JS = """() => {
    const box = document.querySelector('.sw-wide-table');
    const table = box.querySelector('table');
    const header = [...table.querySelectorAll('thead th')].slice(1);
    const edge = box.getBoundingClientRect();
    return {
        names: header.map(th => th.textContent.trim()),
        lastInside: header[header.length - 1].getBoundingClientRect().right <= edge.right + 1,
        scrollLeft: box.scrollLeft, scrollWidth: box.scrollWidth, clientWidth: box.clientWidth,
    };
}"""


@pytest.mark.parametrize("width_px", [1440, 1024])
def test_engines_table_shows_every_engine_name(app_url, page, screenshot_dir, width_px):
    """Issue 21: at 1440 px the comparison hid its last engine column. The comparison is a Markdown table now
    (attributes as rows, one column per engine) in a box that scrolls sideways when the page is narrower than
    the table: scrolled to its end, the last engine's column is on screen."""
    from knowledge import load_knowledge

    primary = [e.name for e in load_knowledge().engines if e.tier == "primary"]
    page.set_viewport_size({"width": width_px, "height": 1000})
    open_page(page, f"{app_url}/engines")
    found = page.evaluate(COMPARISON_JS)
    assert found["names"] == primary
    page.screenshot(path=str(screenshot_dir / f"engines-table-{width_px}.png"))
    page.evaluate("() => { const b = document.querySelector('.sw-wide-table'); b.scrollLeft = b.scrollWidth; }")
    scrolled = page.evaluate(COMPARISON_JS)
    assert scrolled["lastInside"], scrolled
    assert scrolled["scrollLeft"] > 0 or scrolled["scrollWidth"] <= scrolled["clientWidth"]
