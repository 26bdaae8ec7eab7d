"""File uploaders with a help text in the reader's language.

Streamlit 1.67 writes the uploader's own texts in its JavaScript ("Drag and drop a file here", "Upload",
"2MB per file • CSV") with no way to set them from Python, so a Spanish page shows them in English. The
label and the help are ours: the help says, in the reader's language, how to use the box and its limits.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import streamlit as st

from calculators.i18n import _
from reports.numbers import number


def file_uploader(label: str, *, key: str, type: Sequence[str] | None = None, **kwargs: Any) -> Any:
    """`st.file_uploader` whose help says what the box accepts (size limit in MB, file types) in words."""
    limit_mb = st.get_option("server.maxUploadSize")
    kinds = ", ".join(kind.upper() for kind in type) if type else _("any text file")
    help_text = _("Drop a file on the box or use its Upload button (Streamlit writes those words in English). "
                  "Accepted: {kinds}, up to {mb} MB.").format(kinds=kinds, mb=number(limit_mb))
    return st.file_uploader(label, type=type, key=key, help=help_text, **kwargs)
