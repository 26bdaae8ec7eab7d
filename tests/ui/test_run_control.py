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


def test_no_page_ends_its_run_with_st_stop() -> None:
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    offenders = [str(path.relative_to(root)) for folder in ("pages", "ui") for path in (root / folder).rglob("*.py")
                 if "st.stop()" in path.read_text(encoding="utf-8") and path.name != "run_control.py"]
    offenders += ["app.py"] if "st.stop()" in (root / "app.py").read_text(encoding="utf-8") else []
    assert offenders == [], f"use ui.run_control.end_run(), which keeps a pending rerun: {offenders}"
