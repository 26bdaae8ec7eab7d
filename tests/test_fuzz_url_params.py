"""Every URL parameter of every page, fed hostile values: no exception, and a value not applied is explained.

Pages and their URL-bound widgets are discovered (tests/support/page_discovery.py), so pages added to app.py
later are covered without editing this file. The property checked per bound widget: if the value the
link carried did not end up in the widget (Streamlit dropped it, or our wrapper refused it), the page
shows a note naming the URL parameter.
"""

from __future__ import annotations

import math
import os
import re
from functools import cache
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from streamlit.testing.v1 import AppTest

from tests.support.page_discovery import BoundWidget, app_pages, bound_widgets, rendered_bound_nodes

PAGES = app_pages()
EXAMPLES = int(os.environ.get("SERVEWISE_FUZZ_EXAMPLES", "4"))

HOSTILE = [
    "", "nan", "NaN", "inf", "-inf", "-1", "-0", "1e308", "-1e400", "9" * 60, "1.5", "0x10", "1_000", " 5 ",
    "５", "١٢", "true", "FALSE", "yes", "<script>alert(1)</script>", "<img src=x onerror=alert(1)>",
    "javascript:alert(1)", "' OR 1=1 --", "../../etc/passwd", "%00", "\u202eevil", "🙂" * 50, "x" * 5000,
    "a&b=c", "{{7*7}}", "${jndi:ldap://x}", "[click](https://evil.example/)", "![t](https://evil.example/t.png)",
    ":red[alarm] **bold**", "$\\frac{1}{0}$",
]  # fmt: skip
#: Markdown a link's value must never turn into on the page (a live link or a remote image).
INJECTED = ("](https://evil.example", "](javascript:")
CODE_SPAN = re.compile(r"(`+)(?!`).*?(?<!`)\1(?!`)", re.DOTALL)


#: Pages that bind no URL parameter, and why (the fuzz tests check that each one still binds none and that no
#: other page has lost all of its parameters).
PAGES_WITHOUT_PARAMETERS: dict[str, str] = {
    "reconcile.py": "the log check works on pasted text and uploaded files, which a link must not carry",
}


@cache
def page_widgets(page: Path) -> dict[str, BoundWidget]:
    """The page's URL-bound widgets, by parameter name."""
    return bound_widgets(page)


def binds_parameters(page: Path) -> bool:
    """Whether `page` binds URL parameters; fails when that disagrees with PAGES_WITHOUT_PARAMETERS."""
    binds = bool(page_widgets(page))
    if binds:
        assert page.name not in PAGES_WITHOUT_PARAMETERS, f"{page.name} binds parameters now: drop it from the list"
    else:
        assert page.name in PAGES_WITHOUT_PARAMETERS, f"{page.name} binds no URL parameter: its state is not shareable"
    return binds


def _visible_messages(at: AppTest) -> str:
    return "\n".join(str(el.value) for el in [*at.warning, *at.error, *at.info])


def _markdown_bodies(at: AppTest) -> list[str]:
    """The Markdown source of every element Streamlit renders as Markdown."""
    kinds = (at.markdown, at.warning, at.error, at.info, at.success, at.caption, at.title, at.header, at.subheader)
    return [str(element.value) for elements in kinds for element in elements]


def _applied(widget: BoundWidget, raw: list[str], value) -> bool | None:
    """Whether the widget shows the URL's value; None when the value is one we make no claim about."""
    text = raw[-1]
    if widget.kind in ("choice", "multi", "toggle") and "" in raw:
        return None  # an empty value means "unset"; the wrappers accept it on purpose
    if widget.kind == "choice":
        return len(raw) == 1 and str(value) == text
    if widget.kind == "multi":
        return value is not None and sorted(map(str, value)) == sorted(set(raw))
    if widget.kind == "number":
        try:
            return len(raw) == 1 and value is not None and math.isclose(float(value), float(text))
        except (ValueError, OverflowError):
            return False
    if widget.kind == "toggle":
        return len(raw) == 1 and text.lower() in ("true", "false") and value == (text.lower() == "true")
    if widget.kind == "text":
        return len(raw) == 1 and value == text
    return None


def run_with_link(page: Path, query: dict[str, list[str]]) -> AppTest:
    """Run `page` as opened from a link with `query`; fail on any exception, check unapplied values are noted."""
    at = AppTest.from_file(str(page), default_timeout=60)
    for key, values in query.items():
        at.query_params[key] = values if len(values) > 1 else values[0]
    at.run()
    assert not at.exception, f"{page.name} raised for {query!r}: {at.exception[0].value}"
    for body in _markdown_bodies(at):
        outside_code = CODE_SPAN.sub("", body)  # a code span shows its content literally
        assert not any(marker in outside_code for marker in INJECTED), f"{page.name} renders link text: {body!r}"
    widgets = page_widgets(page)
    messages = _visible_messages(at)
    for node in rendered_bound_nodes(at):
        key = node.proto.query_param_key
        if key not in query or key not in widgets:
            continue
        applied = _applied(widgets[key], query[key], node.value)
        if applied is False:
            assert f"`{key}`" in messages or key in messages, (
                f"{page.name}: the link's {key}={query[key]!r} was not applied (widget shows {node.value!r}) "
                f"and no note names `{key}`; notes: {messages!r}"
            )
    return at


def _values_for(widget: BoundWidget) -> st.SearchStrategy[list[str]]:
    one = st.one_of(
        st.sampled_from(HOSTILE),
        st.text(max_size=40),
        st.integers(min_value=-(10**30), max_value=10**30).map(str),
        st.floats(allow_nan=True, allow_infinity=True).map(str),
        st.sampled_from(widget.options) if widget.options else st.just("1"),
    )
    return st.lists(one, min_size=1, max_size=3)


@st.composite
def _links(draw, page: Path) -> dict[str, list[str]]:
    widgets = page_widgets(page)
    keys = draw(st.lists(st.sampled_from(sorted(widgets)), min_size=1, max_size=min(4, len(widgets)), unique=True))
    return {key: draw(_values_for(widgets[key])) for key in keys}


@pytest.mark.parametrize("page", PAGES, ids=[p.stem for p in PAGES])
def test_parameters_a_page_does_not_bind_are_ignored(page):
    """Stray and hostile parameters the page does not bind (a page may bind none: pasted text is not kept)."""
    run_with_link(page, {"zz_unknown": ["<script>alert(1)</script>"], "page": ["../../etc/passwd"], "": ["x"]})


@pytest.mark.parametrize("page", PAGES, ids=[p.stem for p in PAGES])
def test_every_parameter_survives_each_hostile_value(page):
    """Hostile values spread over the parameters: run r gives the page's i-th parameter HOSTILE[r * n + i].

    With n parameters, ceil(len(HOSTILE) / n) runs (at most 8) put every value in some parameter.
    """
    if not binds_parameters(page):
        return  # nothing to fuzz, and binds_parameters checked that this is expected
    keys = sorted(page_widgets(page))
    for run in range(min(8, -(-len(HOSTILE) // len(keys)))):
        run_with_link(page, {key: [HOSTILE[(len(keys) * run + i) % len(HOSTILE)]] for i, key in enumerate(keys)})
    # Repeated keys: every parameter given twice with two different (valid-looking) values.
    run_with_link(page, {key: ["1", "true"] for key in keys})


@pytest.mark.parametrize("page", PAGES, ids=[p.stem for p in PAGES])
def test_random_links_never_raise_and_explain_dropped_values(page):
    if not binds_parameters(page):
        return  # nothing to fuzz, and binds_parameters checked that this is expected

    @settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck), database=None)
    @given(query=_links(page))
    def check(query):
        run_with_link(page, query)

    check()
