"""Memory & capacity page in a real browser: a shared link restores its state, and a changed widget reaches the URL."""

from __future__ import annotations

from urllib.parse import parse_qs, urlparse

import pytest

from tests.support.browser import open_page, wait_for_app

pytestmark = pytest.mark.browser

SHARED = "mem_gpu=a100-sxm-80gb&mem_gpus=2&mem_ctx=32768&mem_seqs=4&mem_kv=8-bit&mem_model=llama-3.1-8b"


def _expect():
    from playwright.sync_api import expect

    return expect


def test_shared_link_restores_state_and_changes_reach_the_url(app_url, page, screenshot_dir):
    expect = _expect()
    open_page(page, f"{app_url}/memory?{SHARED}")
    assert page.locator('[data-testid="stException"]').count() == 0
    expect(page.get_by_label("Context per sequence (prompt + output, tokens)", exact=True)).to_have_value("32768")
    expect(page.get_by_label("Concurrent active sequences", exact=True)).to_have_value("4")
    expect(page.get_by_label("Number of GPUs", exact=True)).to_have_value("2")
    body = page.locator("body")
    expect(body).to_contain_text("A100")
    expect(body).to_contain_text("For 4 sequences")
    # the capacity table names the shared context and sequence count
    expect(body).to_contain_text("longest context for 4 sequences")
    # the bars and the capacity curves are inline SVG in Markdown elements (reports/svg_charts.py)
    expect(page.locator('[data-testid="stMarkdown"] svg.memory-bars')).to_have_count(1)
    expect(page.locator('[data-testid="stMarkdown"] svg.capacity-curves')).to_have_count(1)
    page.set_viewport_size({"width": 1400, "height": 4200})
    page.screenshot(path=str(screenshot_dir / "memory-shared-link.png"), full_page=True)

    sequences = page.get_by_label("Concurrent active sequences", exact=True)
    sequences.fill("12")
    sequences.press("Enter")
    wait_for_app(page)
    expect(body).to_contain_text("For 12 sequences")
    query = parse_qs(urlparse(page.url).query)
    assert query.get("mem_seqs") == ["12"]
    assert query.get("mem_ctx") == ["32768"]


def test_bad_link_values_fall_back_with_a_note(app_url, page):
    expect = _expect()
    open_page(page, f"{app_url}/memory?mem_gpu=no-such-gpu&mem_seqs=-5")
    assert page.locator('[data-testid="stException"]').count() == 0
    expect(page.locator('[data-testid="stAlert"]').filter(has_text="mem_gpu")).to_have_count(1)
    expect(page.locator('[data-testid="stAlert"]').filter(has_text="mem_seqs")).to_have_count(1)


def test_launch_commands_copy_whole_and_leave_the_syntax_highlighter_unloaded(app_url, browser):
    """Each engine's launch command is Markdown inline code (a span per word): a triple-click selects exactly the
    command and Ctrl+C copies it. st.code would load Streamlit's syntax-highlighter script (~1.5 MB), whose parsing
    delayed the bars at the top of a shared link (issue 19, bench/bench_shared_link.py), so the page must not fetch it.
    """
    expect = _expect()
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    context.grant_permissions(["clipboard-read", "clipboard-write"], origin=app_url)
    page = context.new_page()
    scripts: list[str] = []
    page.on("request", lambda request: scripts.append(request.url) if request.resource_type == "script" else None)
    try:
        open_page(page, f"{app_url}/memory?{SHARED}")
        page.get_by_role("tab", name="vLLM", exact=True).click()
        # One code span per word (ui/command_text.command_markdown), all in one paragraph: the paragraph is the command.
        command = page.locator('[data-testid="stTabPanel"] [data-testid="stMarkdown"] p').filter(
            has=page.locator("code", has_text="vllm")).filter(has_text="--max-model-len").first
        expect(command).to_be_visible()
        shown = command.inner_text()
        assert shown.startswith("vllm serve ") and "--max-model-len 32768" in shown
        command.click(click_count=3)
        assert page.evaluate("() => window.getSelection().toString()").strip() == shown
        page.keyboard.press("Control+C")
        assert page.evaluate("() => navigator.clipboard.readText()").strip() == shown
        assert page.locator('[data-testid="stCode"]').count() == 0
        assert not [url for url in scripts if "SyntaxHighlighter" in url]
    finally:
        context.close()
