"""A file uploader speaks the reader's language: its help, and (outside English) a style scoped to that one
uploader that writes its button and its real limit in the reader's words (tests/browser/test_uploads_browser.py
checks what Chromium draws)."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from ui.uploads import uploader_style


def _uploader_app() -> None:
    import streamlit as st

    from calculators.i18n import set_language
    from ui.uploads import file_uploader

    set_language(st.query_params.get("lang", "en"))
    file_uploader("…o súbelo", key="csv", type=["csv"])


def _run(lang: str) -> AppTest:
    at = AppTest.from_function(_uploader_app)
    at.query_params["lang"] = lang
    return at.run()


def test_the_help_is_spanish_and_states_the_limit():
    at = _run("es")
    assert not at.exception
    (uploader,) = at.get("file_uploader")
    help_text = uploader.help
    assert "Suelta un archivo" in help_text and "CSV" in help_text and "MB" in help_text


def test_a_spanish_uploader_gets_its_own_texts_with_the_configured_limit():
    at = _run("es")
    (style,) = [m.value for m in at.markdown if "<style" in m.value]
    # .streamlit/config.toml: server.maxUploadSize = 2 (MB), the limit Streamlit enforces and prints
    assert '.st-key-csv [data-testid="stFileUploaderDropzoneInstructions"] span::after' in style
    assert 'content: "Hasta 2\u00a0MB por archivo • CSV"' in style and 'content: "Subir archivo"' in style
    # the note Streamlit draws while a file is dragged over the box ("Drag and drop a file here")
    assert 'content: "Suelta el archivo aquí"' in style


def test_an_english_uploader_keeps_streamlits_texts():
    at = _run("en")
    assert not [m for m in at.markdown if "<style" in m.value]


def test_the_style_cannot_be_broken_out_of():
    style = uploader_style("k", 'a "quoted" \\ word', "</style><script>alert(1)</script>", "</style>")
    assert style.count("</style>") == 1 and "<script" not in style
    assert 'content: "a \\"quoted\\" \\\\ word"' in style
    with pytest.raises(ValueError, match="names a CSS class"):
        uploader_style("a b{", "x", "y", "z")


def test_only_a_style_reaches_the_page_as_html():
    from ui.markup import show_style

    for bad in ("<style>a{}</style><script>x()</script>", "<div>x</div>", "<style><b>x</b></style>"):
        with pytest.raises(ValueError, match="one <style> element"):
            show_style(bad)
