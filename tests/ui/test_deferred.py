"""ui/deferred.py in AppTest: a visit's first run stops after the main result, every later run draws the whole page."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest


def _page(visit: bool) -> None:
    import streamlit as st

    from ui import deferred

    if visit:
        deferred.start_visit("page")  # as app.py does before running a page
    st.markdown("main result")
    deferred.rest_follows(page_end=lambda: st.markdown("notes at the top"))
    st.markdown("the rest")
    st.markdown("page end")


def _texts(at: AppTest) -> list[str]:
    return [element.value for element in at.markdown]


def test_a_visits_first_run_stops_after_the_main_result_with_a_follow_up_and_its_page_end() -> None:
    at = AppTest.from_function(_page, kwargs={"visit": True}).run()
    assert not at.exception
    assert _texts(at) == ["main result", "notes at the top"]
    assert [caption.value for caption in at.caption] == ["The rest of this page is on its way…"]


def test_the_next_run_of_the_visit_draws_the_whole_page_without_the_note() -> None:
    # The follow-up the browser asks for is a rerun of the whole app; so is a widget change: neither defers.
    at = AppTest.from_function(_page, kwargs={"visit": True}).run()
    at.run()
    assert _texts(at) == ["main result", "the rest", "page end"]
    assert not at.caption


def test_a_page_run_outside_app_navigation_is_drawn_whole_at_once() -> None:
    at = AppTest.from_function(_page, kwargs={"visit": False}).run()
    assert _texts(at) == ["main result", "the rest", "page end"]
    assert not at.caption

