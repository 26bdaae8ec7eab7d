"""ui/run_control.end_run in Streamlit's own script runner (AppTest): a rerun the browser asked for while a page
was running survives the page ending its run early; with `st.stop()` it is dropped (why end_run exists)."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest


def _page(end_with: str) -> None:
    import streamlit as st
    from streamlit.runtime.scriptrunner_utils.script_requests import RerunData
    from streamlit.runtime.scriptrunner_utils.script_run_context import get_script_run_ctx

    from ui.run_control import end_run

    st.session_state["runs"] = st.session_state.get("runs", 0) + 1
    st.markdown(f"run {st.session_state['runs']}")
    if st.session_state["runs"] == 1:
        # What the browser does when the reader changes a widget while this run is still going: the server
        # queues a rerun carrying the new widget values.
        ctx = get_script_run_ctx()
        assert ctx is not None
        ctx.script_requests.request_rerun(RerunData(query_string=ctx.query_string,
                                                    page_script_hash=ctx.page_script_hash))
        if end_with == "end_run":
            end_run()
        st.stop()
    st.markdown("rest")


def test_a_rerun_requested_during_the_run_runs_after_end_run() -> None:
    at = AppTest.from_function(_page, kwargs={"end_with": "end_run"}).run()
    assert not at.exception
    assert at.session_state["runs"] == 2
    assert [element.value for element in at.markdown] == ["run 2", "rest"]


def test_st_stop_drops_a_rerun_requested_during_the_run() -> None:
    # Streamlit 1.67 commands/execution_control.stop -> ScriptRequests.request_stop sets STOP unconditionally. If a
    # Streamlit upgrade makes this test fail, st.stop() keeps pending reruns and end_run may go back to it.
    at = AppTest.from_function(_page, kwargs={"end_with": "st.stop"}).run()
    assert not at.exception
    assert at.session_state["runs"] == 1
    assert [element.value for element in at.markdown] == ["run 1"]


def _app_files_calling(call: str) -> list[str]:
    """app.py and the files under pages/ and ui/ (ui/run_control.py aside) whose text contains `call`."""
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    files = [root / "app.py", *(path for folder in ("pages", "ui") for path in (root / folder).rglob("*.py"))]
    return [str(path.relative_to(root)) for path in files
            if path.name != "run_control.py" and call in path.read_text(encoding="utf-8")]


def test_no_page_ends_its_run_with_st_stop() -> None:
    offenders = _app_files_calling("st.stop()")
    assert offenders == [], f"use ui.run_control.end_run(), which keeps a pending rerun: {offenders}"


def _bound_page() -> None:
    import streamlit as st

    from ui.run_control import missing_from_request, widgets_with_values

    def short(widget_ids) -> list[str]:
        return sorted(widget_id.rsplit("-", 1)[-1] for widget_id in widget_ids)

    if "drawn_ids" in st.session_state:  # before any widget is drawn: what this run's request carried
        st.session_state["missing"] = short(missing_from_request([*st.session_state["drawn_ids"], "absent"]))
    st.number_input("Users", key="users", value=1, bind="query-params")
    st.number_input("Hosts", key="hosts", value=1, bind="query-params")
    st.button("Go", key="go")
    st.session_state["drawn_ids"] = widgets_with_values()
    st.session_state["drawn"] = short(st.session_state["drawn_ids"])


def test_the_widgets_a_timer_waits_for_are_those_drawn_with_a_value_until_the_browser_sends_them() -> None:
    # ui/background.note_until reruns the app only once the browser's request carries every widget drawn with a
    # value (the link's users here), which Streamlit 1.67 would otherwise send again with set_value. A widget at its
    # default (hosts) and a button are not waited for. The browser test of the race is
    # tests/browser/test_url_races.py::test_a_number_typed_before_the_rest_of_a_shared_link_arrives_is_kept; this
    # one fails if a Streamlit upgrade renames the session state's internals these helpers read.
    at = AppTest.from_function(_bound_page)
    at.query_params["users"] = "39"
    at.run()
    assert not at.exception
    assert at.number_input(key="users").value == 39
    assert at.session_state["drawn"] == ["users"]
    at.run()  # AppTest sends every widget's value, as a browser that has built them does
    assert not at.exception
    assert at.session_state["drawn"] == ["users"]
    assert at.session_state["missing"] == ["absent"]


def _timer_page(rerun_with: str) -> None:
    import streamlit as st
    from streamlit.runtime.scriptrunner_utils.script_requests import RerunData
    from streamlit.runtime.scriptrunner_utils.script_run_context import get_script_run_ctx

    from ui.run_control import rerun_app

    st.session_state["runs"] = st.session_state.get("runs", 0) + 1
    st.session_state.setdefault("users_in_url", []).append(st.query_params.get("users"))
    if st.session_state["runs"] == 1:
        # The browser's rerun arrives while a page timer's run is going: the reader typed 40, so the browser's address
        # (the request's query string) is users=40 while this run began with the link's users=39.
        ctx = get_script_run_ctx()
        assert ctx is not None
        ctx.script_requests.request_rerun(RerunData(query_string="users=40", page_script_hash=ctx.page_script_hash))
        if rerun_with == "rerun_app":
            rerun_app()
        st.rerun()


def _users_in_url_of_each_run(rerun_with: str) -> list[str]:
    """The `users` URL value each run of `_timer_page` began with, opened on a link with users=39 (two runs)."""
    at = AppTest.from_function(_timer_page, kwargs={"rerun_with": rerun_with})
    at.query_params["users"] = "39"
    at.run()
    assert not at.exception
    assert at.session_state["runs"] == 2
    return at.session_state["users_in_url"]


def test_a_timer_rerun_keeps_the_address_of_a_rerun_the_browser_asked_for_meanwhile() -> None:
    # CI on 60d9369 (tests/browser/test_load.py session 18): with st.rerun() the merged run began with the timer's old
    # address (users=39), wrote the link from it and the browser's address lost the 40 its widget showed.
    assert _users_in_url_of_each_run(rerun_with="rerun_app") == ["39", "40"]


def test_st_rerun_gives_a_waiting_browser_rerun_its_own_older_address() -> None:
    # Streamlit 1.67 ScriptRequests._request_rerun_locked merges a waiting rerun with a newer one taking the newer's
    # query string: why rerun_app exists. If a Streamlit upgrade makes this fail, st.rerun() keeps the browser's
    # address.
    assert _users_in_url_of_each_run(rerun_with="st.rerun") == ["39", "39"]


def test_no_page_reruns_with_st_rerun() -> None:
    offenders = _app_files_calling("st.rerun()")
    assert offenders == [], f"use ui.run_control.rerun_app(), which keeps a waiting rerun's address: {offenders}"
