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


#: The comparison's tables (the boxes before the sources expander): each one's engine names (first column, read as
#: a person reads them: a no-break hyphen is a hyphen) and how far it scrolls sideways.
COMPARISON_JS = """() => {
    const boxes = [...document.querySelectorAll('.sw-wide-table')].filter(b => !b.closest('details'));
    return boxes.map(box => ({
        names: [...box.querySelectorAll('tbody tr td:first-child')]
            .map(td => td.innerText.replace(/\\s+/g, ' ').replace(/\\u2011/g, '-').trim()),
        hidden: box.scrollWidth - box.clientWidth,
        laidOutWide: box.classList.contains('sw-laid-out-wide'),
    }));
}"""


@pytest.mark.parametrize("lang", ["en", "es"])
@pytest.mark.parametrize("width_px", [1440, 1024])
def test_engines_comparison_shows_every_engine_without_sideways_scroll(app_url, page, screenshot_dir, width_px, lang):
    """Issue 21: at 1440 px the comparison hid its last engine column; issue 19: with the flags kept whole it
    scrolled sideways at 1024 px (SGLang's column behind the scroll). The comparison is a few tables of related
    attributes, one row per engine: every table names every engine and none scrolls sideways, in both languages."""
    from knowledge import load_knowledge
    from reports.engines_tables import COMPARISON_GROUPS

    primary = [e.name for e in load_knowledge().engines if e.tier == "primary"]
    page.set_viewport_size({"width": width_px, "height": 1000})
    open_page(page, f"{app_url}/engines?lang={lang}")
    boxes = [box for box in page.evaluate(COMPARISON_JS) if not box["laidOutWide"]]
    comparison = [box for box in boxes if box["names"] == primary]
    assert len(comparison) > len(COMPARISON_GROUPS), boxes  # its groups, then the facts' currency, one row each
    assert all(box["hidden"] <= 1 for box in boxes), boxes
    page.screenshot(path=str(screenshot_dir / f"engines-table-{width_px}-{lang}.png"), full_page=True)
