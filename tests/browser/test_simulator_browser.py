"""The concurrency & queueing page in a real browser: shared links, URL updates, charts, bad inputs."""

from __future__ import annotations

import re
from urllib.parse import parse_qs, urlsplit

import pytest

from tests.support.browser import CUT_LABELS_JS, open_page, wait_for_app
from tests.support.page_links import page_link

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


#: How many screens (the 1000 px tall tab at 1024 px) a reader may scroll before the first result starts: none.
FIRST_RESULT_WITHIN_SCREENS = 1
#: Top of the side-by-side comparison (the page's first result), in px from the top of the page, and the tab's height.
FIRST_RESULT_TOP_JS = """
() => {
  const table = document.querySelector('[data-testid="stMain"] [data-testid="stMarkdown"] table');
  const main = document.querySelector('[data-testid="stMain"]');
  return table && {top: table.getBoundingClientRect().top + main.scrollTop, screen: window.innerHeight};
}
"""


@pytest.mark.parametrize("lang", ["en", "es"])
def test_the_first_result_starts_on_the_first_screen_at_1024_px(app_url, narrow_page, lang, screenshot_dir):
    # Issue 19 review: the engines' knobs (four expanders open) and a long workload column put the side-by-side
    # comparison 2,980 px down at 1024 px; the secondary inputs now fold into two boxes above it.
    open_page(narrow_page, page_link(app_url, "simulator", lang))
    where = narrow_page.evaluate(FIRST_RESULT_TOP_JS)
    assert where, "no comparison table on the page"
    narrow_page.screenshot(path=str(screenshot_dir / f"simulator-first-screen-{lang}.png"))
    assert where["top"] < FIRST_RESULT_WITHIN_SCREENS * where["screen"], where


#: A link setting inputs that sit in the folded boxes: the run's length, a length's shape, prefix, seed, typed
#: efficiencies and two engines' knobs.
FOLDED_LINK = ("sim_engines=vllm&sim_engines=static&sim_n=150&sim_prompt_kind=uniform&sim_prompt_max=900"
               "&sim_prefix=20&sim_seed=7&sim_typed_eff=true&sim_mem_eff=0.5&sim_vllm_seqs=4&sim_static_batch=4")


def test_a_link_keeps_the_values_of_inputs_folded_away(app_url, narrow_page):
    expect = _expect()
    page = narrow_page
    open_page(page, f"{app_url}/simulator?{FOLDED_LINK}")
    # drawn while folded, each with the link's value
    for label, value in (("Requests", "150"), ("Prompt max tokens", "900"),
                         ("Shared prefix (% of each prompt, token-identical)", "20"), ("Random seed", "7"),
                         ("Decode bandwidth efficiency", "0.50"), ("--max-num-seqs", "4"), ("Batch size", "4")):
        field = page.get_by_label(label, exact=True)
        expect(field).to_be_hidden()
        expect(field).to_have_value(value)
    changed = page.locator('[data-testid="stCaptionContainer"]').filter(has_text="Changed in the box above")
    expect(changed.first).to_contain_text("vLLM --max-num-seqs = 4")  # under the machine's box
    expect(changed.last).to_contain_text("Random seed = 7")  # under the workload's
    # a change to an input in sight keeps every folded value in the link
    rate = page.get_by_label("Arrival rate (requests/s)", exact=True)
    rate.fill("3")
    rate.press("Enter")
    page.wait_for_url(re.compile(r"sim_rate=3"))
    wait_for_app(page)
    query = parse_qs(urlsplit(page.url).query)
    for key, value in parse_qs(FOLDED_LINK).items():
        assert query.get(key) == value, (key, page.url)
    assert page.locator('[data-testid="stException"]').count() == 0


#: The two folded boxes' titles, in English and Spanish.
FOLDED_BOXES = re.compile("More workload settings|Step times and engine knobs|Más ajustes de la carga"
                          "|Tiempos de paso y parámetros de los motores")


@pytest.mark.parametrize("lang", ["en", "es"])
def test_nothing_in_the_folded_boxes_is_cut_when_unfolded_at_1024_px(app_url, narrow_page, lang):
    expect = _expect()
    page = narrow_page
    open_page(page, f"{app_url}/simulator?{FOLDED_LINK}&sim_engines=ollama&sim_engines=sglang&sim_engines=mlx-lm"
                    f"&sim_engines=llama-cpp&lang={lang}")
    summaries = page.locator('[data-testid="stExpander"] summary').filter(has_text=FOLDED_BOXES)
    expect(summaries).to_have_count(2)
    for summary in summaries.all():
        summary.click()
    expect(page.get_by_label("--max-num-seqs", exact=True)).to_be_visible()
    expect(page.locator('[data-testid="stExpander"] details[open]')).to_have_count(2)
    assert page.evaluate(CUT_LABELS_JS) == []
    assert page.locator('[data-testid="stException"]').count() == 0
