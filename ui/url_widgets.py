"""Widgets bound to the URL (`bind="query-params"`) that say so when a shared link carried a bad value.

Streamlit drops an invalid bound value silently and falls back to the default. A user who opened a
stale or hand-edited link deserves to know, so each wrapper checks the raw URL value first and
remembers a note for `show_url_notes()` to display (kept in session state: the value is gone from
the URL after the first run).

Choice widgets take `labels=` (a mapping or a function from option to what a person reads: "NVIDIA H100
SXM5 80 GB" for `h100-sxm-80gb`, a translated word for `short`). Streamlit 1.67's `bind="query-params"`
writes the *format_func label* into the URL (checked in Chromium: choosing "MLX LM" gave `?g=MLX+LM`), so
a labelled widget is not bound by Streamlit: it is seeded from the URL's slug and writes its slug back
(`_synced_choice`), and links stay the same in every language.

Writing `st.query_params` from the script races the browser (issue 19, tests/browser/test_url_races.py):
Streamlit 1.67 sends the *whole* query string the run started with, and the browser replaces its address with
it, while a bound widget the user changes meanwhile updates the address in the browser only (its frontend's
`maybeSyncValueToUrl`). A number typed while a tab's rerun was on its way was therefore kept by the widget and
dropped from the link. Every write here goes through `write_params`, which remembers what it wrote until a
later run arrives with it; `keep_written_params()` (first thing in app.py) writes it again when a run arrives
without it — the browser sent that run before our write reached it, so the write may have wiped the browser's
newer values, and this run's query string (the browser's address when it sent the run, with those values) is
sent back with our write on top.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextvars import ContextVar
from typing import Any

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

from calculators.i18n import DEFAULT_LANGUAGE, _, current_language
from reports.numbers import compact
from ui.markdown_text import code_span, literal

_NOTES_KEY = "_url_value_notes"
#: Per session: the URL value(s) each labelled widget last read or wrote, to tell a new link from our own write.
_SYNCED_KEY = "_url_synced_values"
#: Per session: (page, {key: value or None}, the query string sent with them) this session's script last wrote into
#: the URL, until a later run confirms it.
_WRITTEN_KEY = "_url_written_params"
#: Per session: {tabs key: (the URL value last read or written, the index of the tab the tabs were drawn with)}.
_TAB_DEFAULTS_KEY = "_url_tab_defaults"

Labels = Mapping[Any, str] | Callable[[Any], str]

#: True inside `values_only()` (per script thread: each session's run has its own context).
_VALUES_ONLY: ContextVar[bool] = ContextVar("servewise_url_widgets_values_only", default=False)


@contextlib.contextmanager
def values_only() -> Iterator[None]:
    """Inside this block the widgets of this module draw nothing and return the value they are about to have.

    For a page that draws its result before the inputs above it, so that a shared link's result is the first thing
    the browser receives and paints (bench/bench_shared_link.py): the page reads its inputs once in this block,
    draws the result from those values, then draws the inputs for real into a container placed above and draws the
    result again if they returned anything else. A value is the widget's own this session, else the link's when
    the widget would take it (the same checks), else the default. `tabs` gives placeholders; the code inside calls
    nothing but these widgets (anything else would be drawn).
    """
    token = _VALUES_ONLY.set(True)
    try:
        yield
    finally:
        _VALUES_ONLY.reset(token)


def _choice_default(options: Sequence[Any], multiple: bool, default_kwarg: str, kwargs: Mapping[str, Any]) -> Any:
    """The value a choice widget starts with when neither the session nor the link gives one."""
    if multiple:
        return list(kwargs.get("default") or ())
    if default_kwarg == "index":
        index = kwargs.get("index", 0)
        return None if index is None or not options else options[index]
    return kwargs.get("default")


def _peek_choice(options: Sequence[Any], key: str, multiple: bool, default_kwarg: str, kwargs: Mapping[str, Any],
                 labelled: bool) -> Any:
    """The value a choice widget is about to return (values_only): a new link's valid value, the session's, the default.

    A labelled widget takes the link's value when it differs from what this session last read or wrote
    (`_synced_choice`); one bound by Streamlit takes it when the session has no value of its own yet.
    """
    by_text = {str(option): option for option in options}
    raw = _raw_url_values(key)
    synced: dict[str, list[str] | None] = st.session_state.get(_SYNCED_KEY, {})
    new_link = raw is not None and (raw != synced.get(key) if labelled else key not in st.session_state)
    if raw is not None and new_link:
        valid = [by_text[value] for value in raw if value in by_text]
        if multiple and (valid or raw == [""]):
            return valid
        if not multiple and len(raw) == 1 and raw[0] in by_text:
            return by_text[raw[0]]
    if key in st.session_state:
        return st.session_state[key]
    return _choice_default(options, multiple, default_kwarg, kwargs)


def _peek_plain(key: str, default: Any, from_url: Callable[[str], Any]) -> Any:
    """The session's value for `key`, else the link's (`from_url` of its text; None: not taken), else `default`."""
    if key in st.session_state:
        return st.session_state[key]
    raw = _raw_url_values(key)
    taken = from_url(raw[-1]) if raw is not None and len(raw) == 1 else None
    return default if taken is None else taken


def _remember(key: str, message: str) -> None:
    notes: dict[str, str] = st.session_state.setdefault(_NOTES_KEY, {})
    notes[key] = message


def _shown(value: str) -> str:
    """A URL value quoted for a note as a Markdown code span, so it is shown as literal text.

    Notes render as Markdown: outside a code span a link's value could become a live link (GFM autolinks
    bare URLs even when escaped), an image fetched from another host, or a Streamlit directive. The fence
    is one backtick longer than any run of backticks in the value, so the value cannot close it.
    """
    return code_span(repr(value[:40]))


def _raw_url_values(key: str) -> list[str] | None:
    """Every value the URL gives for `key` (None when absent), read before the widget consumes it."""
    if key not in st.query_params:
        return None
    return st.query_params.get_all(key)


def _named(key: str, label: str) -> str:
    """How a note names the input a link value was for: the label the reader sees on the page, then the link's
    parameter as a code span (the part of the link to edit): **Number of GPUs** (`mem_gpus`)."""
    label = " ".join(label.split())
    return f"**{literal(label)}** ({code_span(key)})" if label else code_span(key)


def _repeated(key: str, times: int, label: str = "") -> str:
    return _("The link gave {what} {times} times; only one value is allowed, so the default is used.").format(
        what=_named(key, label), times=times
    )


def _bound(value: float) -> str:
    """A range bound as the reader's language writes numbers (3,600 / 3.600; 0.001 / 0,001)."""
    return compact(value, 6)


def _check_choices(key: str, options: Sequence[Any], multiple: bool, label: str = "") -> None:
    raw = _raw_url_values(key)
    if raw is None:
        return
    allowed = {str(option) for option in options}
    values = raw if multiple else raw[-1:]
    bad = [value for value in values if value not in allowed and value != ""]
    if bad:
        shown = ", ".join(_shown(value) for value in bad[:3])
        _remember(key, _("The link set {what} to {shown}, which is not one of the choices; using the default instead.")
                  .format(what=_named(key, label), shown=shown))
    elif not multiple and len(raw) > 1:
        _remember(key, _repeated(key, len(raw), label))


#: Streamlit's own bounds for a whole-number input without min/max (JavaScript's safe integers): beyond them it
#: drops a URL value silently, so the note must say so too.
_JS_MAX_SAFE_INTEGER = 2**53 - 1


def _url_number(key: str, min_value: float | None, max_value: float | None, integer: bool,
                label: str = "") -> tuple[float | None, str]:
    """The link's value for `key` as the bound number input takes it (None: absent or refused), and why not (the
    note names the input by `label`)."""
    if integer:
        min_value = -_JS_MAX_SAFE_INTEGER if min_value is None else min_value
        max_value = _JS_MAX_SAFE_INTEGER if max_value is None else max_value
    raw = _raw_url_values(key)
    if raw is None:
        return None, ""
    if len(raw) > 1:
        return None, _repeated(key, len(raw), label)
    text = raw[-1]
    what = _named(key, label)
    try:
        number = float(text)
    except ValueError:
        return None, _("The link set {what} to {shown}, which is not a number; using the default instead.").format(
            what=what, shown=_shown(text))
    if not math.isfinite(number) or (integer and not number.is_integer()):
        message = (_("The link set {what} to {shown}, which is not a whole number; using the default instead.")
                   if integer else
                   _("The link set {what} to {shown}, which is not a finite number; using the default instead."))
        return None, message.format(what=what, shown=_shown(text))
    too_low = min_value is not None and number < min_value
    too_high = max_value is not None and number > max_value
    if (too_low or too_high) and min_value is not None and max_value is not None:
        return None, _(
            "The link set {what} to {shown}, outside the allowed range {low}–{high}; using the default instead."
        ).format(what=what, shown=_shown(text), low=_bound(min_value), high=_bound(max_value))
    if too_low and min_value is not None:  # an input with a floor only (a rate of at least 0)
        return None, _("The link set {what} to {shown}, below the smallest allowed value, {low}; using the default "
                       "instead.").format(what=what, shown=_shown(text), low=_bound(min_value))
    if too_high and max_value is not None:
        return None, _("The link set {what} to {shown}, above the largest allowed value, {high}; using the default "
                       "instead.").format(what=what, shown=_shown(text), high=_bound(max_value))
    return (int(number) if integer else number), ""


def _check_number(key: str, min_value: float | None, max_value: float | None, integer: bool, label: str = "") -> None:
    _value, note = _url_number(key, min_value, max_value, integer, label)
    if note:
        _remember(key, note)


def _is_integer_input(kwargs: Mapping[str, Any]) -> bool:
    """Whether a number input with these arguments is a whole-number one (Streamlit decides it from value and step)."""
    return all(isinstance(v, int) for v in (kwargs.get("value"), kwargs.get("step", 1)) if v is not None)


def peek_number(
    *, key: str, min_value: float | None = None, max_value: float | None = None, **kwargs: Any
) -> Any:
    """The value `number(key=key, ...)` (same arguments but the label) is about to return, without drawing anything.

    For a page that draws its result before the inputs above it (the result's message reaches the browser first):
    the widget's value this session if it has one, else the link's value when the widget would take it, else the
    default. The page draws the input afterwards and redraws its result if the two differ.
    """
    if key in st.session_state:
        return st.session_state[key]
    from_url, _note = _url_number(key, min_value, max_value, _is_integer_input(kwargs))
    return kwargs.get("value") if from_url is None else from_url


def _current_page() -> str:
    ctx = get_script_run_ctx()
    return ctx.page_script_hash if ctx is not None else ""


def write_params(values: Mapping[str, str | list[str] | None]) -> None:
    """Write `values` into the URL (None removes the key) and remember them for `keep_written_params`.

    The one way a page writes `st.query_params` itself (the speed page's calibration, say): a plain assignment
    would wipe a value the user typed while this run was on its way (see the module docstring).
    """
    for key, value in values.items():
        if value is None:
            st.query_params.pop(key, None)
        else:
            st.query_params[key] = value
    page, written, _ = st.session_state.get(_WRITTEN_KEY, (None, {}, None))
    st.session_state[_WRITTEN_KEY] = (
        _current_page(), {**(written if page == _current_page() else {}), **values}, _query_string()
    )


def _query_string() -> str | None:
    """The query string of this run as Streamlit last sent or received it (it follows our own writes)."""
    ctx = get_script_run_ctx()
    return ctx.query_string if ctx is not None else None


def _in_url(key: str, value: str | list[str] | None) -> bool:
    shown = st.query_params.get_all(key) if key in st.query_params else None
    return shown == ([value] if isinstance(value, str) else value)


def keep_written_params() -> None:
    """Re-send what this session's script wrote into the URL when this run's URL lacks it (call before any widget).

    A run whose query string lacks our last write was sent by the browser before that write arrived, so the write
    replaced an address that may have held newer widget values (Streamlit sends the query string its run began
    with). Writing again now sends this run's query string — the browser's address with those values — plus our
    write. A run that arrives with the write confirms it. A new page or a history navigation forgets it (the URL
    wins there).
    """
    remembered = st.session_state.get(_WRITTEN_KEY)
    if not remembered:
        return
    page, written, sent = remembered
    ctx = get_script_run_ctx()
    if page != _current_page() or (ctx is not None and ctx.is_history_navigation):
        del st.session_state[_WRITTEN_KEY]
        return
    if _query_string() == sent:
        # Written in this very run (a tab's callback runs before the script), or this run's address is exactly what
        # we sent: nothing to judge yet; the next run does. (A run stopped right after its callback, as Streamlit
        # does when the user acts again, leaves the next run to judge, with its own query string.)
        return
    lost = {key: value for key, value in written.items() if not _in_url(key, value)}
    if lost:
        write_params(written)
    else:
        del st.session_state[_WRITTEN_KEY]


def _label_function(labels: Labels) -> Callable[[Any], str]:
    if callable(labels):
        return labels
    return lambda option: labels.get(option, str(option))


def _synced_choice(
    draw: Callable[..., Any], label: str, options: Sequence[Any], key: str, labels: Labels, multiple: bool,
    default_kwarg: str, kwargs: dict[str, Any],
) -> Any:
    """Draw a labelled choice widget kept in step with the URL parameter `key` by its option values (slugs).

    The widget is seeded from the URL only when the URL differs from what this session last read or wrote
    (a new link), so a user's own change is never undone; the default is left out of the URL, as Streamlit's
    own binding does.
    """
    synced: dict[str, list[str] | None] = st.session_state.setdefault(_SYNCED_KEY, {})
    by_text = {str(option): option for option in options}
    raw = _raw_url_values(key)
    seeded = False
    if raw is not None and raw != synced.get(key):
        valid = [by_text[value] for value in raw if value in by_text]
        if multiple and (valid or raw == [""]):  # as Streamlit's binding: the valid part; `key=` is none
            st.session_state[key] = valid
            seeded = True
        elif not multiple and len(raw) == 1 and raw[0] in by_text:
            st.session_state[key] = by_text[raw[0]]
            seeded = True
    default = _choice_default(options, multiple, default_kwarg, kwargs)
    if seeded:
        # Streamlit warns when a widget gets both a default and a value set through Session State in the same run.
        kwargs = {name: value for name, value in kwargs.items() if name != default_kwarg}
    elif key in st.session_state:
        # The widget's own default is its current value, not the page's default: a run in which Streamlit lost the
        # widget's state (seen under 20 sessions: the simulator's GPU, model and engines fell back to the first
        # option, so its engine knobs disappeared) then draws what the user had, not the first option.
        kwargs = {**kwargs, default_kwarg: _as_default(st.session_state[key], options, multiple, default_kwarg,
                                                       kwargs.get(default_kwarg))}
    value = draw(label, options, key=key, format_func=_label_function(labels), **kwargs)
    if value == default or value is None:
        written = None
    else:
        written = ([str(v) for v in value] or [""]) if multiple else [str(value)]
    if written != synced.get(key) or (written is None) != (key not in st.query_params):
        write_params({key: None if written is None else written if multiple else written[0]})
        synced[key] = written
    return value


def _as_default(current: Any, options: Sequence[Any], multiple: bool, default_kwarg: str, fallback: Any) -> Any:
    """`current` (a widget's value) in the form its `index=` / `default=` argument takes; `fallback` if invalid."""
    if multiple:
        return [value for value in current if value in options] if isinstance(current, list | tuple) else fallback
    if default_kwarg == "index":
        return list(options).index(current) if current in options else fallback
    return current if current is None or current in options else fallback


def selectbox(label: str, options: Sequence[Any], *, key: str, labels: Labels | None = None, **kwargs: Any) -> Any:
    """A selectbox bound to the URL parameter `key` by option value; a bad URL value gets a note.

    `labels` (option -> text a person reads) shows names while the URL keeps the option values.
    """
    if _VALUES_ONLY.get():
        return _peek_choice(options, key, False, "index", kwargs, labels is not None)
    _check_choices(key, options, multiple=False, label=label)
    if labels is not None:
        return _synced_choice(st.selectbox, label, options, key, labels, False, "index", kwargs)
    return st.selectbox(label, options, key=key, bind="query-params", **kwargs)


def radio(label: str, options: Sequence[Any], *, key: str, labels: Labels | None = None, **kwargs: Any) -> Any:
    """Radio buttons bound to the URL parameter `key` by option value; a bad URL value gets a note."""
    if _VALUES_ONLY.get():
        return _peek_choice(options, key, False, "index", kwargs, labels is not None)
    _check_choices(key, options, multiple=False, label=label)
    if labels is not None:
        return _synced_choice(st.radio, label, options, key, labels, False, "index", kwargs)
    return st.radio(label, options, key=key, bind="query-params", **kwargs)


def segmented(label: str, options: Sequence[Any], *, key: str, labels: Labels | None = None, **kwargs: Any) -> Any:
    """A segmented control bound to the URL parameter `key` by option value; a bad URL value gets a note."""
    multiple = kwargs.get("selection_mode") == "multi"
    if _VALUES_ONLY.get():
        return _peek_choice(options, key, multiple, "default", kwargs, labels is not None)
    _check_choices(key, options, multiple=multiple, label=label)
    if labels is not None:
        return _synced_choice(st.segmented_control, label, options, key, labels, multiple, "default", kwargs)
    return st.segmented_control(label, options, key=key, bind="query-params", **kwargs)


def multiselect(
    label: str, options: Sequence[Any], *, key: str, labels: Labels | None = None, **kwargs: Any
) -> list[Any]:
    """A multiselect bound to the URL parameter `key` by option values; values not among the options get a note."""
    if _VALUES_ONLY.get():
        return _peek_choice(options, key, True, "default", kwargs, labels is not None)
    _check_choices(key, options, multiple=True, label=label)
    if labels is not None:
        return _synced_choice(st.multiselect, label, options, key, labels, True, "default", kwargs)
    return st.multiselect(label, options, key=key, bind="query-params", **kwargs)


def tabs(labels: Sequence[str], *, key: str) -> Sequence[Any]:
    """Tabs whose active tab is in the URL parameter `key` as its number (1, 2, ...), the same in every language.

    Streamlit's `bind="query-params"` on tabs writes the tab's *label* into the URL, so a link made in one language
    would lose the tab in another. Here the tabs are seeded from the URL's number (a label carried by an older link
    is read by its leading number) and the chosen tab writes its number back. Under `values_only` it draws nothing
    and gives one empty context per tab.
    """
    if _VALUES_ONLY.get():
        return [contextlib.nullcontext() for _label in labels]
    raw = st.query_params.get(key)
    digits = "".join(char for char in (raw or "").split("·")[0] if char.isdigit())
    index = int(digits) - 1 if digits else 0
    if raw is not None and not 0 <= index < len(labels):
        _remember(key, _("The link's value {value} for {key} is not one of the tabs; the first tab is shown.").format(
            value=_shown(raw), key=code_span(key)))
        index = 0

    # The tabs keep the default they were first drawn with until a new link sets another tab: Streamlit 1.67 makes
    # `default` part of the tabs' element id, so following our own write (opening tab 4 writes `key=4`) gave the
    # tabs a new id and the browser drew them anew, dropping a number typed into them meanwhile (traced for the
    # wizard: the number was never sent and the field showed the link's value again).
    drawn: dict[str, tuple[str | None, int]] = st.session_state.setdefault(_TAB_DEFAULTS_KEY, {})
    if key in drawn and drawn[key][0] == raw:
        index = drawn[key][1]
    drawn[key] = (raw, index)

    def write_back() -> None:
        chosen = st.session_state.get(f"{key}_tab")
        if chosen in labels:
            written = str(list(labels).index(chosen) + 1)
            write_params({key: written})
            drawn[key] = (written, drawn[key][1])  # our own write: the tabs keep their default

    return st.tabs(list(labels), default=labels[index], key=f"{key}_tab", on_change=write_back)


def number(
    label: str,
    *,
    key: str,
    min_value: float | None = None,
    max_value: float | None = None,
    **kwargs: Any,
) -> Any:
    """A number input bound to the URL parameter `key`; non-numbers and out-of-range values get a note."""
    if _VALUES_ONLY.get():
        return peek_number(key=key, min_value=min_value, max_value=max_value, **kwargs)
    integer = _is_integer_input(kwargs)
    _check_number(key, min_value, max_value, integer, label)
    if not integer and current_language() != DEFAULT_LANGUAGE:
        kwargs["help"] = decimal_point_help(kwargs.get("help"))
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


def decimal_point_help(help_text: str | None) -> str:
    """A decimal input's help, then how to type its decimals, for a reader whose decimal mark is a comma.

    Streamlit 1.67's number input is the browser's <input type="number"> with its value written with a point, and
    Chromium drops a typed comma without a word (measured: '0,15' is read as 15, '7,5' as 75; also with a Spanish
    browser locale), so the reader must know before typing. The input itself stays: it is bound to the link.
    """
    hint = _("Type decimals with a point (0.15): this box takes no comma, and the browser drops one without a "
             "word (0,15 would be read as 15).")
    return f"{help_text}\n\n{hint}" if help_text else hint


def _url_number_is_infinite(key: str) -> bool:
    raw = _raw_url_values(key)
    try:
        return raw is not None and math.isinf(float(raw[-1]))
    except ValueError:
        return False


_TOGGLE_WORDS = {"true": True, "false": False}


def toggle(label: str, *, key: str, **kwargs: Any) -> bool:
    """A toggle bound to the URL parameter `key`; values other than true/false get a note."""
    if _VALUES_ONLY.get():
        return _peek_plain(key, kwargs.get("value", False), lambda text: _TOGGLE_WORDS.get(text.lower()))
    _check_choices(key, ["true", "false", "True", "False"], multiple=False, label=label)
    return st.toggle(label, key=key, bind="query-params", **kwargs)


def text(label: str, *, key: str, max_chars: int = 200, **kwargs: Any) -> str:
    """A single-line text input bound to the URL parameter `key` (over-long values get a note)."""
    if _VALUES_ONLY.get():
        return _peek_plain(key, kwargs.get("value", ""), lambda text: text if len(text) <= max_chars else None)
    raw = _raw_url_values(key)
    if raw is not None and len(raw) > 1:
        _remember(key, _repeated(key, len(raw), label))
    elif raw is not None and len(raw[-1]) > max_chars:
        _remember(key, _("The link's value for {what} is longer than {max_chars} characters; it was not used.")
                  .format(what=_named(key, label), max_chars=compact(max_chars)))
    return st.text_input(label, key=key, max_chars=max_chars, bind="query-params", **kwargs)


def text_area(label: str, *, key: str, max_chars: int = 20_000, **kwargs: Any) -> str:
    """A multi-line text area bound to the URL parameter `key` (over-long values get a note)."""
    if _VALUES_ONLY.get():
        return _peek_plain(key, kwargs.get("value", ""), lambda text: text if len(text) <= max_chars else None)
    raw = _raw_url_values(key)
    if raw is not None and len(raw[-1]) > max_chars:
        _remember(key, _("The link's value for {what} is longer than {max_chars} characters; it was not used.")
                  .format(what=_named(key, label), max_chars=compact(max_chars)))
    return st.text_area(label, key=key, max_chars=max_chars, bind="query-params", **kwargs)


def note_unused(keys: Sequence[str], reason: str, *, unused: bool = True) -> None:
    """Note each of `keys` a shared link sets although the page, in the state it is in, has no widget for it.

    A widget the page does not draw leaves its link value unread and gives no note of its own: a link's
    `sim_clients` with open-loop arrivals was ignored without a word. `reason` (translated) says which state uses
    the value. With `unused` False (the state now draws the widget, which reads the value) an earlier note goes.
    """
    notes: dict[str, str] = st.session_state.setdefault(_NOTES_KEY, {})
    for key in keys:
        note_key = f"{key} (unused)"
        raw = _raw_url_values(key)
        if not unused or raw is None:
            notes.pop(note_key, None)
            continue
        shown = ", ".join(_shown(value) for value in raw[:3])
        notes[note_key] = _("The link sets `{key}` to {shown}, which is not used: {reason}").format(
            key=key, shown=shown, reason=reason)


def show_url_notes(prefix: str = "", exclude_prefix: str | None = None) -> None:
    """Show what was wrong with the link this page was opened with (if anything).

    A page with a section of its own (say `mem_log_*` widgets) shows that section's notes there, and the
    rest at the top, by calling this twice with `prefix` / `exclude_prefix`.
    """
    for key, message in st.session_state.get(_NOTES_KEY, {}).items():
        if key.startswith(prefix) and not (exclude_prefix and key.startswith(exclude_prefix)):
            st.warning(message, icon=":material/link_off:")


def url_notes_slot(prefix: str = "") -> Callable[[], None]:
    """A place here (at the top of a page) for the link's notes, and the function that fills it.

    Call the function after the widgets below have been drawn (each records a bad link value as it is drawn);
    calling it again replaces what it drew.
    """
    slot = st.empty()

    def fill() -> None:
        with slot.container():
            show_url_notes(prefix)

    return fill
