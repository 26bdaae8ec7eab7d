"""Ending a page's run early without losing a choice the reader made while it ran.

`st.stop()` (Streamlit 1.67, commands/execution_control.py) asks the script runner to stop through
`ScriptRequests.request_stop()`, which sets the request state to STOP unconditionally: a rerun the browser
requested while the run was going (a widget the reader changed, carrying the new value) is overwritten and
never runs, so the page keeps showing the old result and the link keeps the old value. Raising the runner's
own StopException ends this run the same way `st.stop()` does (exec_code treats both as a premature stop),
but leaves a pending rerun in place: the runner's loop (`on_scriptrunner_ready`) then starts it.

A page's own timer (a fragment's `run_every` tick: the rest of a shared link's page, a background section that is
ready) reruns the whole app with `st.rerun()`, and that rerun takes its widget values from the tick's request.
Streamlit 1.67 (runtime/state/session_state.py, `register_widget`) draws a keyed widget the request carried no
value for with its server value *and `set_value`*, whether the link seeds it again or the session restores it,
and the browser then shows that value over whatever the reader typed meanwhile (tests/browser/test_load.py
session 18 on main ea4420e: the wizard's users, typed 40, later showed 39). A tick lacks a value only for a widget
the browser has not built yet (its script is still loading from the server: Streamlit mounts every tab and
expander, and a mounted widget reports its value). Filling the missing values in on the server instead (b985df1,
reverted in 171b1be) drops the `set_value` the browser needs when the widget is built after the answer arrives
(the frontend's useBasicWidgetState starts an unbuilt widget from the newest element's default unless it carries
`set_value`): the likely reason about 10 of 20 sessions under load then showed the default, not the link's value.
So the timer reruns only once the browser has sent a value for every widget drawn with one (`widgets_with_values`,
`missing_from_request`): then the rerun sends none of them with `set_value`.

The timer's rerun must also not carry an old address. `st.rerun()` asks for a rerun with the query string its own run
began with, and when the browser's rerun is already waiting (the reader typed while the tick ran), Streamlit 1.67
(`ScriptRequests._request_rerun_locked`) merges the two keeping the browser's widget values but the *newer request's*
query string: the timer's, from before the typing. That run then writes the link (`url_widgets.keep_written_params`
re-sends a tab) with the old value in it, and the browser's address loses what the widget shows (CI on 60d9369,
tests/browser/test_load.py session 18: the wizard's users typed 40, drawn 40, link `wiz_users=39&wiz_step=4`).
`rerun_app` asks for the rerun with the waiting request's address, page and cached messages instead.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import NoReturn

import streamlit as st
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.runtime.scriptrunner import get_script_run_ctx
from streamlit.runtime.scriptrunner_utils.exceptions import StopException
from streamlit.runtime.scriptrunner_utils.script_requests import RerunData, ScriptRequestType
from streamlit.runtime.scriptrunner_utils.script_run_context import ScriptRunContext, ThreadState

#: Widget value kinds that are events (a button's click), not states: the browser sends them once, never again.
TRIGGER_VALUE_TYPES = frozenset({"trigger_value", "string_trigger_value", "chat_input_value", "json_trigger_value"})


def end_run() -> NoReturn:
    """End the current script run here, keeping any rerun the browser asked for during it."""
    raise StopException()


def rerun_app() -> NoReturn:
    """Rerun the whole app now, as `st.rerun()` does, except that a rerun the browser asked for meanwhile keeps its
    own query string, page and cached messages (see the module docstring); its widget values win either way."""
    ctx = get_script_run_ctx()
    if ctx is None or ctx.script_requests is None:
        st.rerun()
    requests = ctx.script_requests
    with requests._lock:  # the browser's request may arrive between reading the waiting one and adding ours
        waiting = requests._rerun_data if requests._state == ScriptRequestType.RERUN else None
        source: RerunData | ScriptRunContext = waiting if waiting is not None else ctx
        requests._request_rerun_locked(RerunData(
            query_string=source.query_string,
            page_script_hash=source.page_script_hash,
            page_name=waiting.page_name if waiting is not None else "",  # a run's context has no page name
            cached_message_hashes=source.cached_message_hashes,
            context_info=source.context_info,
            is_auto_rerun=True,  # not the reader's own action: a waiting history navigation keeps its flag
        ))
    st.empty()  # a yield point, as st.rerun() uses: the runner raises its RerunException here
    end_run()  # not reached under Streamlit's runner; ends the run with the rerun still requested


def widgets_with_values() -> frozenset[str]:
    """The ids of the widgets this run has drawn so far whose value is not their default (events left out).

    These are the widgets a rerun would send with `set_value` if its request carried no value for them.
    """
    ctx = get_script_run_ctx()
    if ctx is None:
        return frozenset()
    state = ctx.session_state._state  # SafeSessionState wraps the session's SessionState
    metadata = state._new_widget_state.widget_metadata
    drawn = set()
    for widget_id in ctx.shared.widget_ids_this_run.snapshot():
        widget = metadata.get(widget_id)
        if widget is None or widget.value_type in TRIGGER_VALUE_TYPES:
            continue
        try:
            at_default = bool(state[widget_id] == widget.deserializer(None))
        except (KeyError, ValueError, TypeError):  # no value yet, or one that does not compare (a table)
            at_default = False
        if not at_default:
            drawn.add(widget_id)
    return frozenset(drawn)


def is_fragment_rerun() -> bool:
    """True while this run reruns fragments only (a fragment's timer tick), not the whole app."""
    ctx = get_script_run_ctx()
    return bool(ctx is not None and ctx.fragment_ids_this_run)


def missing_from_request(widget_ids: Iterable[str]) -> frozenset[str]:
    """Those of `widget_ids` the request that started this run (the browser's) carried no value for.

    Exact in a fragment's rerun before it draws a widget (a timer's tick); in a whole-app run every widget drawn so
    far counts as sent.
    """
    ctx = get_script_run_ctx()
    if ctx is None:
        return frozenset(widget_ids)
    # The request's values: Streamlit puts them in the new widget state at the start of the run (after moving the
    # previous run's into the old state); a fragment's tick registers no widget before this is asked.
    sent = ctx.session_state._state._new_widget_state.states
    return frozenset(widget_id for widget_id in widget_ids if widget_id not in sent)


def poll_this_fragment_every(seconds: float) -> None:
    """From a fragment's own run: the browser reruns this fragment every `seconds` from now on, instead of at its
    `run_every`.

    Streamlit 1.67 starts a fragment's timer with an `auto_rerun` message (runtime/fragment.py) and the browser
    replaces the timer of a fragment it gets another such message for; a full rerun that draws the fragment again
    starts it at its `run_every` again.
    """
    ctx = get_script_run_ctx()
    fragment_id = ThreadState.get().fragment_id if ctx is not None else None
    if ctx is None or fragment_id is None:
        return
    message = ForwardMsg()
    message.auto_rerun.interval = seconds
    message.auto_rerun.fragment_id = fragment_id
    ctx.enqueue(message)
