"""Memoise a page's slow computation per input state *and* reader's language, so a rerun that changes
nothing it reads (an expander, a download, another tab's widget) draws from memory.

Text is translated at the moment it is produced (`calculators.i18n` reads a context variable), so a
result that holds notes or reasons is English or Spanish depending on who computed it first. A cache
keyed by the inputs alone would hand one reader's language to the next; `per_input_state` adds
`current_language()` to every key.

    @per_input_state(max_entries=16)
    def tradeoff(workload, bursts, engine): ...

`copy=True` (the default) is `st.cache_data`: each caller gets its own unpickled copy. `copy=False` is
`st.cache_resource`: every session shares the one object, which is faster for large results that are
never mutated (simulation runs, plotly figures). Arguments whose names start with `_` are not hashed
(Streamlit's rule), e.g. the knowledge base, which is loaded once per process.

`drawn_per_input_state(state, draw)` does the same for *elements*: building some elements costs more than the
computation behind them (a plotly chart is deep-copied and serialised, a styled dataframe formatted cell by cell
and converted to Arrow on every run), so the elements `draw()` makes are recorded once per state and language and
replayed on later runs (Streamlit's cached-element replay) without being built again.
"""

from __future__ import annotations

import functools
import hashlib
import pickle
from collections.abc import Callable
from typing import Any, TypeVar

import streamlit as st

from calculators.i18n import current_language

F = TypeVar("F", bound=Callable[..., Any])
R = TypeVar("R")


#: One cache per decorated function: a page's script runs again on every rerun and redefines its functions, and
#: building a Streamlit cache (it reads the function's source) each time cost milliseconds per rerun.
_CACHES: dict[tuple, Callable[..., Any]] = {}


def per_input_state(
    max_entries: int = 32, copy: bool = True, hash_funcs: dict | None = None, show_spinner: bool | str = False
) -> Callable[[F], F]:
    """Decorator: memoise `fn` on its arguments and the current language (at most `max_entries` states).

    A function redefined by a rerun of its page (same file, name and code) keeps its cache; the cache calls the
    first definition, so a memoised function must read only its arguments and imports, never page variables.
    """

    def decorate(fn: F) -> F:
        code = fn.__code__
        identity = (code.co_filename, fn.__qualname__, code.co_code, code.co_consts, max_entries, copy, show_spinner)
        if identity in _CACHES:
            return _CACHES[identity]  # type: ignore[return-value]

        def keyed(language: str, *args: Any, **kwargs: Any) -> Any:
            del language  # only part of the key: the text inside the result was produced in it
            return fn(*args, **kwargs)

        # Streamlit tells caches apart by module, qualified name and source. This wrapper's source is the same
        # for every decorated function, and a page's functions all live in `__main__`, so the wrapper takes the
        # wrapped function's name and file (and its bytecode, so an edited function starts a fresh cache).
        keyed.__module__, keyed.__name__ = fn.__module__, fn.__name__
        keyed.__qualname__ = f"{fn.__qualname__}@{code.co_filename}:{hash(code.co_code) & 0xFFFFFFFF:08x}"
        cache = st.cache_data if copy else st.cache_resource
        cached = cache(max_entries=max_entries, show_spinner=show_spinner, hash_funcs=hash_funcs)(keyed)

        @functools.wraps(fn)
        def call(*args: Any, **kwargs: Any) -> Any:
            return cached(current_language(), *args, **kwargs)

        call.clear = cached.clear  # type: ignore[attr-defined]
        _CACHES[identity] = call
        return call  # type: ignore[return-value]

    return decorate


def drawn_per_input_state(state: str, draw: Callable[[], R]) -> R:
    """Draw the elements `draw()` makes, or replay them when this `state` was drawn before in the reader's language;
    `draw()`'s result either way (kept with the elements: never mutate it).

    `state` must determine everything `draw` shows (the caller's inputs, e.g. a `state_key` of them, and the section
    it names); `draw` must make no widget (a widget's value would be replayed, not read). Shared by every session,
    as the results it draws are (at most `_MAX_DRAWN` states).
    """
    return _replayed(current_language(), state, _draw=draw)


_MAX_DRAWN = 64


@st.cache_resource(max_entries=_MAX_DRAWN, show_spinner=False)
def _replayed(language: str, state: str, _draw: Callable[[], R]) -> R:
    del language, state  # the key: what `_draw` shows is determined by them
    return _draw()


def state_key(*values: Any) -> str:
    """A stable key for an input state made of models and plain values (a digest of their pickled form)."""
    return hashlib.sha256(pickle.dumps(values, protocol=pickle.HIGHEST_PROTOCOL)).hexdigest()
