"""The "Check against your engine" page in a real browser: paste a log, see the reconciliation table."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.browser import open_page, wait_for_app

pytestmark = pytest.mark.browser

LOGS = Path(__file__).resolve().parents[1] / "data" / "logs"


def test_pasted_llamacpp_log_shows_the_comparison(app_url, page, screenshot_dir):
    from playwright.sync_api import expect

    open_page(page, f"{app_url}/check_log")
    expect(page.get_by_role("heading", name="Check against your engine").first).to_be_visible()
    box = page.get_by_label("Start-up log")
    # llama.cpp 2025-08, gpt-oss-20b on 8 NPUs (tests/data/logs/SOURCES.md): every cache figure is exact
    box.fill((LOGS / "llamacpp-2025-08-gptoss-20b-8x-cann-swa.log").read_text())
    box.press("Control+Enter")
    wait_for_app(page)
    expect(page.locator('[data-testid="stDataFrame"]').first).to_be_visible()
    metrics = page.locator('[data-testid="stMetric"]')
    expect(metrics.filter(has_text="exact")).to_contain_text("24")
    expect(metrics.filter(has_text="unexplained")).to_contain_text("0")
    assert page.locator('[data-testid="stException"]').count() == 0
    page.set_viewport_size({"width": 1400, "height": 1800})
    page.screenshot(path=str(screenshot_dir / "check-log-llamacpp.png"), full_page=True)


def test_pasted_vllm_log_with_a_model_from_the_link(app_url, page, screenshot_dir):
    from playwright.sync_api import expect

    open_page(page, f"{app_url}/check_log?log_model=qwen3-14b")
    box = page.get_by_label("Start-up log")
    # LMCache issue 1739: vLLM, Qwen3-14B, 6.51 GiB available -> 42,656 tokens
    box.fill((LOGS / "vllm-v0.11-enginecore-qwen3-14b.log").read_text())
    box.press("Control+Enter")
    wait_for_app(page)
    expect(page.locator('[data-testid="stDataFrame"]').first).to_be_visible()
    expect(page.locator('[data-testid="stMetric"]').filter(has_text="explained").first).to_contain_text("2")
    assert page.locator('[data-testid="stException"]').count() == 0
    page.set_viewport_size({"width": 1400, "height": 2000})
    page.screenshot(path=str(screenshot_dir / "check-log-vllm.png"), full_page=True)


def test_stale_model_in_the_link_gets_a_note(app_url, page):
    from playwright.sync_api import expect

    open_page(page, f"{app_url}/check_log?log_model=no-such-model")
    box = page.get_by_label("Start-up log")
    box.fill((LOGS / "vllm-v0.11-enginecore-qwen3-14b.log").read_text())
    box.press("Control+Enter")
    wait_for_app(page)
    expect(page.locator('[data-testid="stAlert"]').filter(has_text="log_model")).to_be_visible()
    assert page.locator('[data-testid="stException"]').count() == 0


def test_unexplained_difference_is_marked(app_url, page, screenshot_dir):
    from playwright.sync_api import expect

    # vLLM issue 21348's figures read as one GPU (no per-rank rule applies): 178,880 tokens printed,
    # servewise 180,816-181,040 for 8.11 GiB -> unexplained
    open_page(page, f"{app_url}/check_log?log_model=qwen3-235b-a22b&log_settings=tensor_parallel_size%3D1")
    box = page.get_by_label("Start-up log")
    box.fill((LOGS / "vllm-v0.9-tp4-qwen3-235b.log").read_text())
    box.press("Control+Enter")
    wait_for_app(page)
    expect(page.locator('[data-testid="stMetric"]').filter(has_text="unexplained")).to_contain_text("1")
    # the explanation under the table (the grid's own cells are drawn on a canvas, hidden from the DOM)
    expect(page.locator('[data-testid="stText"]').filter(has_text="no known rule accounts for it")).to_be_visible()
    assert page.locator('[data-testid="stException"]').count() == 0
    page.set_viewport_size({"width": 1400, "height": 1800})
    page.screenshot(path=str(screenshot_dir / "check-log-unexplained.png"), full_page=True)


def test_text_that_is_not_a_log_gets_its_message_on_the_first_screen_at_1024_px(app_url, narrow_page):
    """The capture help folds once something is pasted: open, it pushed the message (or the verdicts) ~1500 px down."""
    from playwright.sync_api import expect

    open_page(narrow_page, f"{app_url}/check_log?lang=es")
    box = narrow_page.locator('[data-testid="stTextArea"] textarea').first
    box.fill("hola\nesto no es un log\n")
    box.press("Control+Enter")
    wait_for_app(narrow_page)
    message = narrow_page.locator('[data-testid="stAlert"]').filter(has_text="No se reconoció")
    expect(message).to_be_visible()
    assert message.bounding_box()["y"] < 1000, message.bounding_box()
    expect(box).to_have_value("hola\nesto no es un log\n")  # nothing typed is lost
    assert narrow_page.locator('[data-testid="stException"]').count() == 0
