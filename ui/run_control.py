"""Ending a page's run early without losing a choice the reader made while it ran.

`st.stop()` (Streamlit 1.67, commands/execution_control.py) asks the script runner to stop through
`ScriptRequests.request_stop()`, which sets the request state to STOP unconditionally: a rerun the browser
requested while the run was going (a widget the reader changed, carrying the new value) is overwritten and
never runs, so the page keeps showing the old result and the link keeps the old value. Raising the runner's
own StopException ends this run the same way `st.stop()` does (exec_code treats both as a premature stop),
but leaves a pending rerun in place: the runner's loop (`on_scriptrunner_ready`) then starts it.
"""

from __future__ import annotations

from typing import NoReturn

from streamlit.runtime.scriptrunner_utils.exceptions import StopException


def end_run() -> NoReturn:
    """End the current script run here, keeping any rerun the browser asked for during it."""
    raise StopException()
