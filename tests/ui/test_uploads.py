"""A file uploader's help says in the reader's language what the box accepts (Streamlit's own texts stay English)."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest


def _uploader_app() -> None:
    from calculators.i18n import set_language
    from ui.uploads import file_uploader

    set_language("es")
    file_uploader("…o súbelo", key="csv", type=["csv"])


def test_the_help_is_spanish_and_states_the_limit():
    at = AppTest.from_function(_uploader_app).run()
    assert not at.exception
    (uploader,) = at.get("file_uploader")
    help_text = uploader.help
    assert "Arrastra un archivo" in help_text and "CSV" in help_text and "MB" in help_text
