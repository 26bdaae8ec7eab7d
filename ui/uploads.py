"""File uploaders that speak the reader's language, with the real size limit.

Streamlit 1.67 writes the uploader's own texts in its JavaScript (the button's "Upload", "2MB per file • CSV" under
it, "Drag and drop a file here" while a file is dragged over it) and offers no option to set them from Python, so a
Spanish page showed them in English. For a reader whose language is not English, `file_uploader` draws a style
scoped to that one uploader (its `st-key-<key>` class) that hides those three texts and writes ours in their place:
the button's word, the limit Streamlit enforces (`server.maxUploadSize`) with the accepted types, and what to do
with a file held over the box. Only how the texts look changes; the box, the button and Streamlit's own checks stay
Streamlit's. The help says the same in
words, also for a reader whose browser does not draw generated content.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import streamlit as st

from calculators.i18n import DEFAULT_LANGUAGE, _, current_language
from reports.numbers import number
from ui.markup import show_style

#: Where Streamlit 1.67 writes the two texts (data-testid attributes of its FileUploader component).
BUTTON_TEXT = '[data-testid="stFileUploaderDropzone"] [data-testid="stBaseButton-secondary"] p'
LIMIT_TEXT = '[data-testid="stFileUploaderDropzoneInstructions"] span'
#: The text Streamlit 1.67 draws only while a file is dragged over the box: a <span> alone in a <div> laid over the
#: dropzone (the only <div> child of the dropzone without a data-testid; FileUploader.js, `isDragActive`).
DRAG_TEXT = '[data-testid="stFileUploaderDropzone"] > div:not([data-testid]) > span:only-child'
#: Streamlit's own size for both texts (measured in Chromium: 14 px), kept for ours.
TEXT_SIZE = "0.875rem"
STYLE_CLASS = "sw-uploader-texts"


def _css_string(text: str) -> str:
    """`text` as a CSS string literal: quotes and backslashes escaped, no markup can close the style."""
    return '"' + re.sub(r'(["\\])', r"\\\1", text).replace("<", "\\3C ").replace("\n", " ") + '"'


def uploader_style(key: str, button: str, limit: str, drag: str) -> str:
    """A <style> for the uploader with widget key `key`: its button reads `button`, its limit line `limit`, and
    the note shown while a file is dragged over it `drag`."""
    if not re.fullmatch(r"[A-Za-z0-9_-]+", key):
        raise ValueError(f"uploader key {key!r}: letters, digits, '_' and '-' only (it names a CSS class)")
    scope = f".st-key-{key}"
    return (
        f'<style class="{STYLE_CLASS}">'
        # the style's own Markdown element would add a gap above the uploader: it takes no room
        f".stElementContainer:has(style.{STYLE_CLASS}) {{ display: none; }}"
        f"{scope} {BUTTON_TEXT}, {scope} {LIMIT_TEXT}, {scope} {DRAG_TEXT} {{ font-size: 0; }}"
        f"{scope} {BUTTON_TEXT}::after {{ content: {_css_string(button)}; font-size: {TEXT_SIZE}; }}"
        f"{scope} {LIMIT_TEXT}::after {{ content: {_css_string(limit)}; font-size: {TEXT_SIZE}; }}"
        f"{scope} {DRAG_TEXT}::after {{ content: {_css_string(drag)}; font-size: {TEXT_SIZE}; }}"
        "</style>"
    )


def file_uploader(label: str, *, key: str, type: Sequence[str] | None = None, **kwargs: Any) -> Any:
    """`st.file_uploader` whose texts are in the reader's language: its button, its limit (MB) and file types."""
    limit_mb = st.get_option("server.maxUploadSize")
    kinds = ", ".join(kind.upper() for kind in type) if type else _("any text file")
    help_text = _("Drop a file on the box or use its button. Accepted: {kinds}, up to {mb}\u00a0MB.").format(
        kinds=kinds, mb=number(limit_mb))
    if current_language() != DEFAULT_LANGUAGE:
        limit = _("Up to {mb}\u00a0MB per file").format(mb=number(limit_mb)) + (f" • {kinds}" if type else "")
        show_style(uploader_style(key, _("Upload a file"), limit, _("Drop the file here")))
    return st.file_uploader(label, type=type, key=key, help=help_text, **kwargs)
