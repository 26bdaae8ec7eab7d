"""A slow section computed off the script thread: the page finishes and answers at once, the section follows.

A section that takes a second or more (the simulator's arrival-rate sweep runs a dozen simulations) held the
script thread after the main result was on screen: the page stayed "running" and a changed widget waited for
it. `section_result` starts the computation on a worker thread the first time a state is seen and returns
None until it is done; `wait_for_section` draws a note in its place and reruns the page once the result is
ready (a fragment polling a finished-or-not flag, cheap), so the section appears without a click.

Results are kept per key (the caller's inputs and the reader's language: the computation runs in the
language of the reader who started it) for the `MAX_RESULTS` most recent states.
"""

from __future__ import annotations

import contextlib
import contextvars
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import streamlit as st

from calculators.i18n import current_language
from ui.run_control import (
    is_fragment_rerun,
    missing_from_request,
    poll_this_fragment_every,
    rerun_app,
    widgets_with_values,
)

MAX_RESULTS = 32
POLL_S = 0.3
#: Seconds a note waits, once ready, for the browser to report every widget drawn with a value before it reruns the
#: app anyway (a widget whose script never arrives must not hold the rest of the page back for ever; that rerun may
#: put a link's value back over one typed meanwhile, see ui/run_control.py).
BROWSER_WAIT_MAX_S = 30.0
#: The longest a ready note waits between polls while the browser builds its widgets: each poll is a fragment run
#: (Streamlit copies the session's widget values at its start) and a render in the browser, and 20 sessions polling
#: every 0.5 s for their widgets' scripts slowed the server that sends those scripts.
SLOWEST_POLL_S = 4.0

_executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="servewise-section")
_jobs: OrderedDict[Hashable, Future] = OrderedDict()
_lock = threading.Lock()


def section_result(key: Hashable, compute: Callable[[], Any]) -> Future:
    """The (possibly still running) computation of `compute()` for `key` in the current language.

    The first call for a key submits it to the worker thread; later calls return the same future. A computation
    that raised keeps its exception (`future.result()` re-raises it), as a cached function would raise again.
    """
    full_key = (current_language(), key)
    with _lock:
        job = _jobs.get(full_key)
        if job is None:
            job = _executor.submit(contextvars.copy_context().run, compute)
            _jobs[full_key] = job
            while len(_jobs) > MAX_RESULTS:
                _jobs.popitem(last=False)
        else:
            _jobs.move_to_end(full_key)
    return job


def wait_for_section(job: Future, message: str) -> None:
    """In place of a section still computing: `message`, then a rerun of the page as soon as `job` is done."""
    note_until(job.done, message, POLL_S)


def note_until(ready: Callable[[], bool], message: str, every_s: float, key: str | None = None) -> None:
    """`message` as a caption (in a container keyed `key`, if given) that the browser polls every `every_s` seconds:
    the first poll at which `ready()` holds and the browser sent a value for every widget this run drew with one
    reruns the whole app (ui/run_control.py: a widget the poll had no value for would be sent again with the
    link's or the session's value, over whatever the reader typed since). While the browser is still building such
    a widget, it polls half as often each time, down to every `SLOWEST_POLL_S`."""
    with_values = widgets_with_values()
    drawn_at = time.monotonic()
    poll = {"every_s": every_s}

    @st.fragment(run_every=every_s)
    def waiting() -> None:
        if ready() and is_fragment_rerun():  # drawn inline in a whole-app run: the first tick decides
            if not missing_from_request(with_values) or time.monotonic() - drawn_at > BROWSER_WAIT_MAX_S:
                rerun_app()
            if poll["every_s"] < SLOWEST_POLL_S:
                poll["every_s"] = min(2 * poll["every_s"], SLOWEST_POLL_S)
                poll_this_fragment_every(poll["every_s"])
        with st.container(key=key) if key else contextlib.nullcontext():
            st.caption(message)

    waiting()


def clear() -> None:
    """Forget every kept result (tests)."""
    with _lock:
        _jobs.clear()
