"""Run one page in AppTest as app.py would for a reader of a given language (app.py sets it before the page)."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest


def _page_in_language(page: str, lang: str) -> None:
    import runpy

    from calculators.i18n import set_language

    set_language(lang)
    runpy.run_path(page, run_name="__main__")


def page_in_language(page: str, lang: str, query: dict | None = None, timeout_s: float = 120) -> AppTest:
    """An AppTest (not yet run) of `page` for a reader of `lang`, opened with `query` as its URL parameters."""
    at = AppTest.from_function(_page_in_language, kwargs={"page": page, "lang": lang}, default_timeout=timeout_s)
    at.query_params.update(query or {})
    return at
