"""Widgets bound to the URL (`bind="query-params"`) that say so when a shared link carried a bad value.

Streamlit drops an invalid bound value silently and falls back to the default. A user who opened a
stale or hand-edited link deserves to know, so each wrapper checks the raw URL value first and
remembers a note for `show_url_notes()` to display (kept in session state: the value is gone from
the URL after the first run).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Any

import streamlit as st

_NOTES_KEY = "_url_value_notes"


def _remember(key: str, message: str) -> None:
    notes: dict[str, str] = st.session_state.setdefault(_NOTES_KEY, {})
    notes[key] = message


def _shown(value: str) -> str:
    """A URL value quoted for a note as a Markdown code span, so it is shown as literal text.

    Notes render as Markdown: outside a code span a link's value could become a live link (GFM autolinks
    bare URLs even when escaped), an image fetched from another host, or a Streamlit directive. The fence
    is one backtick longer than any run of backticks in the value, so the value cannot close it.
    """
    quoted = repr(value[:40])
    longest = max((len(run) for run in re.findall(r"`+", quoted)), default=0)
    fence = "`" * (longest + 1)
    return f"{fence} {quoted} {fence}"


def _raw_url_values(key: str) -> list[str] | None:
    """Every value the URL gives for `key` (None when absent), read before the widget consumes it."""
    if key not in st.query_params:
        return None
    return st.query_params.get_all(key)


def _check_choices(key: str, options: Sequence[Any], multiple: bool) -> None:
    raw = _raw_url_values(key)
    if raw is None:
        return
    allowed = {str(option) for option in options}
    values = raw if multiple else raw[-1:]
    bad = [value for value in values if value not in allowed and value != ""]
    if bad:
        shown = ", ".join(_shown(value) for value in bad[:3])
        _remember(key, f"The link set `{key}` to {shown}, which is not one of the choices; using the default instead.")
    elif not multiple and len(raw) > 1:
        _remember(key, f"The link gave `{key}` {len(raw)} times; only one value is allowed, so the default is used.")


#: Streamlit's own bounds for a whole-number input without min/max (JavaScript's safe integers): beyond them it
#: drops a URL value silently, so the note must say so too.
_JS_MAX_SAFE_INTEGER = 2**53 - 1


def _check_number(key: str, min_value: float | None, max_value: float | None, integer: bool) -> None:
    if integer:
        min_value = -_JS_MAX_SAFE_INTEGER if min_value is None else min_value
        max_value = _JS_MAX_SAFE_INTEGER if max_value is None else max_value
    raw = _raw_url_values(key)
    if raw is None:
        return
    if len(raw) > 1:
        _remember(key, f"The link gave `{key}` {len(raw)} times; only one value is allowed, so the default is used.")
        return
    text = raw[-1]
    try:
        number = float(text)
    except ValueError:
        _remember(key, f"The link set `{key}` to {_shown(text)}, which is not a number; using the default instead.")
        return
    if not math.isfinite(number) or (integer and not number.is_integer()):
        kind = "a whole number" if integer else "a finite number"
        _remember(key, f"The link set `{key}` to {_shown(text)}, which is not {kind}; using the default instead.")
    elif (min_value is not None and number < min_value) or (max_value is not None and number > max_value):
        _remember(
            key,
            f"The link set `{key}` to {_shown(text)}, outside the allowed range {min_value}–{max_value}; "
            "using the default instead.",
        )


def selectbox(label: str, options: Sequence[Any], *, key: str, **kwargs: Any) -> Any:
    """A selectbox bound to the URL parameter `key`; a bad URL value gets a note."""
    _check_choices(key, options, multiple=False)
    return st.selectbox(label, options, key=key, bind="query-params", **kwargs)


def radio(label: str, options: Sequence[Any], *, key: str, **kwargs: Any) -> Any:
    """Radio buttons bound to the URL parameter `key`; a bad URL value gets a note."""
    _check_choices(key, options, multiple=False)
    return st.radio(label, options, key=key, bind="query-params", **kwargs)


def segmented(label: str, options: Sequence[Any], *, key: str, **kwargs: Any) -> Any:
    """A segmented control bound to the URL parameter `key`; a bad URL value gets a note."""
    _check_choices(key, options, multiple=kwargs.get("selection_mode") == "multi")
    return st.segmented_control(label, options, key=key, bind="query-params", **kwargs)


def multiselect(label: str, options: Sequence[Any], *, key: str, **kwargs: Any) -> list[Any]:
    """A multiselect bound to the URL parameter `key`; values not among the options get a note."""
    _check_choices(key, options, multiple=True)
    return st.multiselect(label, options, key=key, bind="query-params", **kwargs)


def number(
    label: str,
    *,
    key: str,
    min_value: float | None = None,
    max_value: float | None = None,
    **kwargs: Any,
) -> Any:
    """A number input bound to the URL parameter `key`; non-numbers and out-of-range values get a note."""
    integer = all(isinstance(v, int) for v in (kwargs.get("value"), kwargs.get("step", 1)) if v is not None)
    _check_number(key, min_value, max_value, integer)
    if integer and _url_number_is_infinite(key):
        # Streamlit 1.67's whole-number input raises OverflowError on `?key=inf` (int(inf) while seeding
        # from the URL); its float input discards a non-finite value. Draw that one for this run.
        as_float = {name: float(v) if name in ("value", "step") and v is not None else v for name, v in kwargs.items()}
        low, high = (None if bound is None else float(bound) for bound in (min_value, max_value))
        picked = st.number_input(
            label, key=key, min_value=low, max_value=high, bind="query-params", format="%.0f", **as_float
        )
        return None if picked is None else int(picked)
    return st.number_input(
        label, key=key, min_value=min_value, max_value=max_value, bind="query-params", **kwargs
    )


def _url_number_is_infinite(key: str) -> bool:
    raw = _raw_url_values(key)
    try:
        return raw is not None and math.isinf(float(raw[-1]))
    except ValueError:
        return False


def toggle(label: str, *, key: str, **kwargs: Any) -> bool:
    """A toggle bound to the URL parameter `key`; values other than true/false get a note."""
    _check_choices(key, ["true", "false", "True", "False"], multiple=False)
    return st.toggle(label, key=key, bind="query-params", **kwargs)


def text(label: str, *, key: str, max_chars: int = 200, **kwargs: Any) -> str:
    """A single-line text input bound to the URL parameter `key` (over-long values get a note)."""
    raw = _raw_url_values(key)
    if raw is not None and len(raw) > 1:
        _remember(key, f"The link gave `{key}` {len(raw)} times; only one value is allowed, so the default is used.")
    elif raw is not None and len(raw[-1]) > max_chars:
        _remember(key, f"The link's `{key}` is longer than {max_chars} characters; it was not used.")
    return st.text_input(label, key=key, max_chars=max_chars, bind="query-params", **kwargs)


def text_area(label: str, *, key: str, max_chars: int = 20_000, **kwargs: Any) -> str:
    """A multi-line text area bound to the URL parameter `key` (over-long values get a note)."""
    raw = _raw_url_values(key)
    if raw is not None and len(raw[-1]) > max_chars:
        _remember(key, f"The link's `{key}` is longer than {max_chars} characters; it was not used.")
    return st.text_area(label, key=key, max_chars=max_chars, bind="query-params", **kwargs)


def show_url_notes(prefix: str = "", exclude_prefix: str | None = None) -> None:
    """Show what was wrong with the link this page was opened with (if anything).

    A page with a section of its own (say `mem_log_*` widgets) shows that section's notes there, and the
    rest at the top, by calling this twice with `prefix` / `exclude_prefix`.
    """
    for key, message in st.session_state.get(_NOTES_KEY, {}).items():
        if key.startswith(prefix) and not (exclude_prefix and key.startswith(exclude_prefix)):
            st.warning(message, icon=":material/link_off:")
