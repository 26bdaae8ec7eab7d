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
from collections import OrderedDict
from collections.abc import Callable, Hashable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import streamlit as st

from calculators.i18n import current_language

MAX_RESULTS = 32
POLL_S = 0.3

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
    the first poll at which `ready()` holds reruns the whole app."""

    @st.fragment(run_every=every_s)
    def waiting() -> None:
        if ready():
            st.rerun()
        with st.container(key=key) if key else contextlib.nullcontext():
            st.caption(message)

    waiting()


def clear() -> None:
    """Forget every kept result (tests)."""
    with _lock:
        _jobs.clear()
