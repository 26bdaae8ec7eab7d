"""Exports rendered when the reader clicks download, in the language the page was drawn in."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from calculators.i18n import current_language, language


def in_reader_language(render: Callable[..., Any], *args: Any) -> Callable[[], Any]:
    """A download callback that renders `render(*args)` in this run's language (Streamlit may call it later)."""
    lang = current_language()

    def rendered() -> Any:
        with language(lang):
            return render(*args)

    return rendered
