"""Hold the Streamlit server's messages to one browser tab, to reproduce a race without timing.

A user who changes a widget while the page is still rerunning races the server: the browser sends the change
before the server's answer to the previous action arrives. `HeldServerMessages` sits on the tab's WebSocket
(Playwright's `route_web_socket`) and, while `holding`, keeps the server's messages back in order; the test acts
in that window, waits until the server has said what it waits for (decoded `ForwardMsg`s, not a delay), and
releases them.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable

from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

STREAM_URL = re.compile(r".*/_stcore/stream$")


class HeldServerMessages:
    """Forward a tab's WebSocket both ways; hold server-to-browser messages while `holding` is set."""

    def __init__(self, page, edit_from_browser: Callable[[bytes], bytes] | None = None) -> None:
        """`edit_from_browser` (optional) rewrites each binary message the browser sends before it is forwarded."""
        self.holding = False
        self._edit = edit_from_browser
        self._hold_after: Callable[[ForwardMsg], bool] | None = None
        self.held: list[bytes | str] = []
        self.seen: list[ForwardMsg] = []  # every server message decoded while holding (for `wait_until`)
        self._client = None
        page.route_web_socket(STREAM_URL, self._route)

    def _route(self, ws) -> None:
        server = ws.connect_to_server()
        self._client = ws
        ws.on_message(lambda message: server.send(self._edit(message) if self._edit and isinstance(message, bytes)
                                                  else message))
        server.on_message(self._from_server)

    def _from_server(self, message: bytes | str) -> None:
        if not self.holding:
            self._client.send(message)
            if self._hold_after is not None and isinstance(message, bytes):
                decoded = ForwardMsg()
                decoded.ParseFromString(message)
                if self._hold_after(decoded):
                    self._hold_after = None
                    self.hold()
            return
        self.held.append(message)
        if isinstance(message, bytes):
            decoded = ForwardMsg()
            decoded.ParseFromString(message)
            self.seen.append(decoded)

    def hold(self) -> None:
        """Keep the server's next messages back (the browser sees a page still running)."""
        self.seen.clear()
        self.holding = True

    def hold_after(self, condition: Callable[[ForwardMsg], bool]) -> None:
        """Start holding right after the first server message for which `condition` holds has been delivered
        (decided as it passes, so no browser timer can slip a message through before the hold)."""
        self._hold_after = condition

    def wait_until(self, page, condition: Callable[[list[ForwardMsg]], bool], timeout_s: float = 60) -> None:
        """Let Playwright dispatch messages until `condition(held messages)` holds (fails after `timeout_s`)."""
        deadline = time.monotonic() + timeout_s
        while not condition(self.seen):
            if time.monotonic() > deadline:
                kinds = [message.WhichOneof("type") for message in self.seen]
                raise AssertionError(f"the server never sent what the test waits for; held: {kinds}")
            page.wait_for_timeout(50)  # lets the route handlers run; the loop ends on the condition, not the clock

    def release(self) -> None:
        """Deliver every held message in order and stop holding."""
        self.holding = False
        held, self.held = self.held, []
        for message in held:
            self._client.send(message)


def page_info_sent(messages: list[ForwardMsg]) -> bool:
    """The server has told the browser a new query string (`st.query_params` was written)."""
    return any(message.WhichOneof("type") == "page_info_changed" for message in messages)


def run_finished(after: int = 0) -> Callable[[list[ForwardMsg]], bool]:
    """The server has finished a whole-page run successfully in a message held after the first `after` ones."""

    def finished(messages: list[ForwardMsg]) -> bool:
        return any(m.WhichOneof("type") == "script_finished" and m.script_finished == ForwardMsg.FINISHED_SUCCESSFULLY
                   for m in messages[after:])

    return finished


def fragment_runs_finished(count: int) -> Callable[[list[ForwardMsg]], bool]:
    """The server has finished `count` fragment runs (a timer's ticks) among the held messages."""

    def finished(messages: list[ForwardMsg]) -> bool:
        return sum(m.WhichOneof("type") == "script_finished"
                   and m.script_finished == ForwardMsg.FINISHED_FRAGMENT_RUN_SUCCESSFULLY for m in messages) >= count

    return finished


def without_widget_in_timer_reruns(key: str, times: int | None = None) -> Callable[[bytes], bytes]:
    """An `edit_from_browser` that drops the widget keyed `key` from the reruns a fragment's timer asks for (the
    first `times` of them; all when None): what the browser sends while that widget's script is still loading from
    the server (traced under load for the wizard's users input: the timer's requests carried no value for it)."""
    from streamlit.proto.BackMsg_pb2 import BackMsg

    left = {"times": times}

    def edit(message: bytes) -> bytes:
        decoded = BackMsg()
        decoded.ParseFromString(message)
        if decoded.WhichOneof("type") != "rerun_script" or not decoded.rerun_script.fragment_id:
            return message
        if left["times"] is not None:
            if left["times"] <= 0:
                return message
            left["times"] -= 1
        widgets = decoded.rerun_script.widget_states.widgets
        kept = [widget for widget in widgets if not widget.id.endswith(f"-{key}")]
        del widgets[:]
        widgets.extend(kept)
        return decoded.SerializeToString()

    return edit
