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


def record_download_callbacks(monkeypatch) -> dict:
    """Record every callable a page hands ui.downloads.in_reader_language, by the render function's name.

    Streamlit calls a download's callable in a later request, after the page's run; a test calls the recorded one
    itself, as Streamlit does when the button is pressed.
    """
    import ui.downloads as downloads

    callbacks: dict = {}
    real = downloads.in_reader_language

    def recording(render, *args):
        callbacks[render.__name__] = real(render, *args)
        return callbacks[render.__name__]

    monkeypatch.setattr(downloads, "in_reader_language", recording)
    return callbacks
