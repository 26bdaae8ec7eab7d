"""Ending a page's run early without losing a choice the reader made while it ran.

`st.stop()` (Streamlit 1.67, commands/execution_control.py) asks the script runner to stop through
`ScriptRequests.request_stop()`, which sets the request state to STOP unconditionally: a rerun the browser
requested while the run was going (a widget the reader changed, carrying the new value) is overwritten and
never runs, so the page keeps showing the old result and the link keeps the old value. Raising the runner's
own StopException ends this run the same way `st.stop()` does (exec_code treats both as a premature stop),
but leaves a pending rerun in place: the runner's loop (`on_scriptrunner_ready`) then starts it.

`st.rerun()` is unsafe when a page's own timer asks for the rerun (a fragment's `run_every` tick: the rest of a
page after a visit's first run, a background section that is ready), in two ways (commands/execution_control.py,
runtime/state/session_state.py):

- It queues a rerun carrying *no widget states*. A bound widget the tick's request carried no value for (traced
  under load for the wizard's users input, in a tab not yet opened) is then seeded again from the link's value
  (SessionState._handle_query_param_binding), and that run sends it with `set_value`, which makes the browser
  *replace* what the reader shows: a number typed after the tick went out was put back to the link's older value
  (tests/browser/test_load.py, session 18 on main ea4420e: the wizard's users, typed 40, later showed 39;
  reproduced in tests/browser/test_url_races.py).
- The queue (`ScriptRequests._request_rerun_locked`) folds it into a rerun the browser asked for meanwhile by
  taking the *newer* request's query string, the tick's: the reader's new link is replaced by the older one.

`rerun_app()` starts the rerun directly instead (the runner's own RerunException, the way a yield point starts a
queued one) with every widget's current value as widget states (the browser's, as the tick sent them, over the
server's for the rest): nothing is seeded again, nothing is sent with `set_value`. The queue is left alone: a
request the browser sent meanwhile stays queued, newer than this rerun, and replaces it at its first yield point.
"""

from __future__ import annotations

from typing import NoReturn

from streamlit.proto.WidgetStates_pb2 import WidgetStates
from streamlit.runtime.scriptrunner import ScriptRunContext, get_script_run_ctx
from streamlit.runtime.scriptrunner_utils.exceptions import RerunException, StopException
from streamlit.runtime.scriptrunner_utils.script_requests import RerunData
from streamlit.runtime.state.session_state import WStates


def end_run() -> NoReturn:
    """End the current script run here, keeping any rerun the browser asked for during it."""
    raise StopException()

#: Widget value kinds that are events (a button's click), not states: sent once by the browser, never replayed.
TRIGGER_VALUE_TYPES = frozenset({"trigger_value", "string_trigger_value", "chat_input_value", "json_trigger_value"})


def _widget_states_now(ctx: ScriptRunContext) -> WidgetStates:
    """Every widget's value as this run sees it, as the browser would send it (trigger widgets left out)."""
    state = ctx.session_state._state  # SafeSessionState wraps the session's SessionState
    widgets = state._new_widget_state
    merged = WStates(widget_metadata=widgets.widget_metadata)
    for widget_id, value in state._old_state.items():  # the server's values (compacted at this run's start)
        if widget_id in widgets.widget_metadata:
            merged.set_from_value(widget_id, value)
    merged.states.update(widgets.states)  # the browser's, as this run's request carried them, win
    states = WidgetStates()
    states.widgets.extend(
        proto for proto in merged.as_widget_states() if proto.WhichOneof("value") not in TRIGGER_VALUE_TYPES
    )
    return states


def rerun_app() -> NoReturn:
    """Rerun the whole app now, from a fragment or the page body, without folding into a rerun the browser queued.

    The rerun carries this run's query string and page, as `st.rerun()`'s does, and every widget's current value;
    a rerun the browser asked for while this run went on stays queued and, being newer, takes over at the rerun's
    first yield point.
    """
    ctx = get_script_run_ctx()
    if ctx is None:  # not in a script run (a bare import): nothing to rerun
        raise StopException()
    raise RerunException(
        RerunData(
            query_string=ctx.query_string,
            widget_states=_widget_states_now(ctx),
            page_script_hash=ctx.page_script_hash,
            cached_message_hashes=ctx.cached_message_hashes,
            context_info=ctx.context_info,
        )
    )
