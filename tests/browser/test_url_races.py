"""Races between a user's quick edits and the page's reruns, reproduced without timing.

The server's messages to the tab are held (tests/support/held_messages.py) while the user acts, so the browser
is exactly in the window a slow server opens: it has sent one action, the answer has not arrived, and the user
acts again. Everything the user set must end up both in the widget and in the link.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.support.browser import open_page, wait_for_app
from tests.support.held_messages import (
    HeldServerMessages,
    fragment_runs_finished,
    page_info_sent,
    run_finished,
    without_widget_in_timer_reruns,
)
from tests.support.streamlit_server import app_url_fixture

pytestmark = pytest.mark.browser

SLOW_TAB_APP = Path(__file__).parent / "apps" / "slow_tab_app.py"


slow_tab_url = app_url_fixture(SLOW_TAB_APP, "slow-tab")


def _type_while_the_tab_opens(page, held: HeldServerMessages, tab: str, key: str, number: str) -> None:
    """Open `tab` with a real click, and type `number` into `key` before the server's answer to the click arrives."""
    held.hold()
    page.get_by_role("tab", name=tab).click()
    held.wait_until(page, page_info_sent)  # the server ran the tab's callback and wrote the link
    typed_at = len(held.seen)
    field = page.locator(f".st-key-{key} input").first
    field.fill(number)
    field.press("Enter")
    page.wait_for_url(f"**{key}={number}*")  # the browser put it in the link itself
    held.wait_until(page, run_finished(after=typed_at))  # ... and the server answered the number too
    held.release()


def _assert_typed_value_drawn_and_kept_on_reload(page, key: str, value: str) -> None:
    """The widget `key` shows `value` once the app settles, and again after a reload (the link kept it)."""
    for reload in (False, True):
        if reload:
            page.reload()
        wait_for_app(page)
        assert page.locator(f".st-key-{key} input").first.input_value() == value


def test_a_number_typed_while_a_slow_tab_rerun_runs_stays_in_the_link(slow_tab_url, page):
    """Issue 19: opening a link-bound tab reruns the page and writes the tab into the link; on a busy server a
    number typed before that write arrives used to stay in the widget but drop out of the URL (Streamlit sends the
    whole query string its run began with, and the browser replaces its address with it)."""
    from playwright.sync_api import expect

    held = HeldServerMessages(page)
    open_page(page, slow_tab_url)
    _type_while_the_tab_opens(page, held, "2 · Second", "count", "5")
    # The held answers are applied one after the other: the first writes `step=2` over the whole address
    # (without the number: that run began before it was typed); what follows must bring the number back.
    expect(page).to_have_url(re.compile(r"(?=.*step=2)(?=.*count=5)"), timeout=15_000)
    _assert_typed_value_drawn_and_kept_on_reload(page, "count", "5")
    assert page.get_by_role("tab", name="2 · Second").get_attribute("aria-selected") == "true"


def test_the_wizard_keeps_a_number_typed_while_its_tab_opens(app_url, page):
    """The same on the wizard itself (its Hardware tab and GPU count), however fast the server is."""
    from playwright.sync_api import expect

    held = HeldServerMessages(page)
    open_page(page, app_url + "/wizard")
    _type_while_the_tab_opens(page, held, "2 · Hardware", "wiz_gpus", "5")
    expect(page).to_have_url(re.compile(r"(?=.*wiz_step=2)(?=.*wiz_gpus=5)"), timeout=15_000)
    wait_for_app(page)
    assert page.locator(".st-key-wiz_gpus input").first.input_value() == "5"


def test_the_speed_page_keeps_a_number_typed_while_it_writes_the_calibration(app_url, page):
    """The speed page writes the calibration into the link from its script; a number typed before that write
    reaches the browser must stay in the link too (the write goes through ui/url_widgets like every other)."""
    from playwright.sync_api import expect

    from tests.support.paths import REPO_ROOT

    held = HeldServerMessages(page)
    open_page(page, app_url + "/speed?speed_engine=llama-cpp&speed_gpu=rtx-4090-24gb")
    pasted = page.locator(".st-key-speed_bench_text textarea").first
    pasted.fill((REPO_ROOT / "tests" / "data" / "speed" / "llama_bench_readme.json").read_text())
    pasted.press("Control+Enter")
    button = page.locator(".st-key-speed_use_cal button").first
    expect(button).to_be_visible(timeout=60_000)
    wait_for_app(page)
    held.hold()
    button.click()
    held.wait_until(page, page_info_sent)  # the server ran the click and wrote the calibration into the link
    typed_at = len(held.seen)
    field = page.locator(".st-key-speed_concurrency input").first
    field.fill("5")
    field.press("Enter")
    page.wait_for_url("**speed_concurrency=5*")
    held.wait_until(page, run_finished(after=typed_at))
    held.release()
    expect(page).to_have_url(re.compile(r"(?=.*speed_cal=)(?=.*speed_concurrency=5)"), timeout=15_000)
    _assert_typed_value_drawn_and_kept_on_reload(page, "speed_concurrency", "5")
    expect(page.get_by_text("Calibration in use from the link")).to_be_visible()


def test_a_number_being_typed_when_the_tabs_answer_arrives_is_kept(app_url, page):
    """Opening a link-bound tab writes it into the link (`wiz_step=4`); the tabs' default followed the link, and
    Streamlit 1.67 makes the default part of the tabs' element id, so the answer to the click drew the tabs anew and
    a number being typed into them was dropped: it was never sent and the field showed the link's value again
    (traced for the wizard in a load reproduction). Here the answer arrives between typing and Enter."""
    held = HeldServerMessages(page)
    open_page(page, app_url + "/wizard?wiz_users=39")
    held.hold()
    page.get_by_role("tab", name="4 · Workload").click()
    held.wait_until(page, run_finished())  # the server has answered the click and written the tab into the link
    field = page.locator(".st-key-wiz_users input").first
    field.fill("40")
    held.release()
    page.wait_for_url("**wiz_step=4*")  # the answer is applied
    wait_for_app(page)
    field.press("Enter")
    page.wait_for_url("**wiz_users=40*", timeout=15_000)
    wait_for_app(page)
    assert field.input_value() == "40"


def _forced_values(messages, key: str) -> list[float]:
    """The values the server sent for the number input `key` with `set_value` (the browser then shows that value,
    whatever the reader typed)."""
    forced = []
    for message in messages:
        if message.WhichOneof("type") == "delta" and message.delta.WhichOneof("type") == "new_element":
            element = message.delta.new_element
            number_input = element.number_input if element.WhichOneof("type") == "number_input" else None
            if number_input is not None and number_input.id.endswith(f"-{key}") and number_input.set_value:
                forced.append(number_input.value)
    return forced


#: Timer ticks whose request lacks the wizard's users input (its script still loading) before the browser has it.
TICKS_WITHOUT_THE_FIELD = 3


def test_a_number_typed_before_the_rest_of_a_shared_link_arrives_is_kept(app_url, page):
    """test_load's session 18 (main ea4420e): a shared link's first run ends early and the browser's timer asks for
    the rest (ui/deferred.py). Under load the timer's request carried no value for the wizard's users input (traced:
    the browser had not built it yet), so the rerun that drew the rest seeded it from the link again and sent it with
    `set_value`: when that answer arrived after the reader had typed, the browser put the link's old number back
    (typed 40, shown 39). Here the first ticks lack the field's value: no rerun may answer them; the rest follows
    the first tick that has it, without `set_value` for the field, and is held until the number is typed."""
    from playwright.sync_api import expect

    held = HeldServerMessages(
        page, edit_from_browser=without_widget_in_timer_reruns("wiz_users", times=TICKS_WITHOUT_THE_FIELD))
    held.hold_after(lambda message: run_finished()([message]))  # the first run: the timer starts when it is drawn
    page.goto(app_url + "/wizard?wiz_users=39", wait_until="domcontentloaded")
    ticks_answered = fragment_runs_finished(TICKS_WITHOUT_THE_FIELD)
    held.wait_until(page, lambda messages: ticks_answered(messages) or run_finished()(messages))
    forced = _forced_values(held.seen, "wiz_users")
    assert not run_finished()(held.seen), f"a tick without the field's value reran the page (sent with {forced})"
    held.wait_until(page, run_finished())  # the server has drawn the rest of the page; the browser has not seen it
    forced = _forced_values(held.seen, "wiz_users")
    assert not forced, f"the rest of the page would replace what the reader types with {forced}"
    typed_at = len(held.seen)
    page.get_by_role("tab", name="4 · Workload").click()
    field = page.locator(".st-key-wiz_users input").first
    field.fill("40")
    field.press("Enter")
    page.wait_for_url("**wiz_users=40*")
    held.wait_until(page, run_finished(after=typed_at))  # the server has answered the number too
    held.release()
    wait_for_app(page)
    expect(page).to_have_url(re.compile(r"wiz_users=40"), timeout=15_000)
    assert field.input_value() == "40"
    page.reload()
    wait_for_app(page)
    assert page.locator(".st-key-wiz_users input").first.input_value() == "40"
