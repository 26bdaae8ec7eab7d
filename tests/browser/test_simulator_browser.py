"""The concurrency & queueing page in a real browser: shared links, URL updates, charts, bad inputs."""

from __future__ import annotations

import re

import pytest

from tests.support.browser import open_page

pytestmark = pytest.mark.browser


def _expect():
    """Playwright's retrying assertions (imported late so a missing package fails in the fixture message)."""
    from playwright.sync_api import expect

    return expect


def test_shared_link_runs_the_simulation_with_its_values(app_url, page, screenshot_dir):
    expect = _expect()
    open_page(page, f"{app_url}/simulator?sim_engines=vllm&sim_engines=static&sim_vllm_seqs=4&sim_n=200")
    expect(page.get_by_label("--max-num-seqs", exact=True)).to_have_value("4")
    # the stacked queue / running / KV panels, then the two sweep charts
    expect(page.locator('[data-testid="stPlotlyChart"]')).to_have_count(3)
    expect(page.locator('[data-testid="stDataFrame"]').first).to_be_visible()
    assert page.locator('[data-testid="stException"]').count() == 0
    body = page.locator("body").inner_text()
    assert "max_num_seqs" in body and "estimate" in body
    page.set_viewport_size({"width": 1400, "height": 3600})
    page.screenshot(path=str(screenshot_dir / "simulator-shared-link.png"))


def test_changing_the_rate_is_written_to_the_url(app_url, page):
    expect = _expect()
    open_page(page, f"{app_url}/simulator?sim_engines=ollama&sim_n=100")
    field = page.get_by_label("Arrival rate (requests/s)", exact=True)
    field.fill("3")
    field.press("Enter")
    page.wait_for_url(re.compile(r"sim_rate=3"))
    expect(field).to_have_value("3.00")


def test_zero_rate_in_a_link_gives_a_message_not_a_traceback(app_url, page):
    expect = _expect()
    open_page(page, f"{app_url}/simulator?sim_rate=0&sim_n=100")
    alert = page.locator('[data-testid="stAlert"]').filter(has_text="Cannot simulate")
    expect(alert).to_be_visible()
    expect(alert).to_contain_text("rate_per_s")
    assert page.locator('[data-testid="stException"]').count() == 0


def test_mlx_lm_is_simulated_with_its_knobs_from_a_shared_link(app_url, page, screenshot_dir):
    expect = _expect()
    open_page(page, f"{app_url}/simulator?sim_engines=mlx-lm&sim_engines=vllm&sim_mlx_prompt=2&sim_mlx_step=512"
                    "&sim_n=150")
    expect(page.get_by_label("--prompt-concurrency", exact=True)).to_have_value("2")
    expect(page.get_by_label("--prefill-step-size", exact=True)).to_have_value("512")
    expect(page.get_by_label("--decode-concurrency", exact=True)).to_have_value("32")
    expect(page.locator('[data-testid="stDataFrame"]').first).to_be_visible()
    assert page.locator('[data-testid="stException"]').count() == 0
    assert "MLX LM" in page.locator("body").inner_text()
    for width in (1440, 1024):
        page.set_viewport_size({"width": width, "height": 3600})
        page.screenshot(path=str(screenshot_dir / f"simulator-mlx-{width}.png"))
