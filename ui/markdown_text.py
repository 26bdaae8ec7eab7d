"""Show text a user supplied (or an error message quoting it) inside Streamlit Markdown as literal text.

st.error / st.warning / st.info / st.markdown render Markdown: a pasted value such as
`![x](https://host/t.png)` would become an image fetched from that host, `[here](https://host)` a link
whose target the text hides, `:red[...]` a Streamlit directive. Escaping every ASCII punctuation mark with
a backslash (CommonMark's "show this character as itself") leaves the text readable and inert. A bare
URL may still be autolinked, but it then shows exactly where it points.
"""

from __future__ import annotations

import re
import string

_PUNCTUATION = frozenset(string.punctuation)


def literal(text: str) -> str:
    """`text` with every ASCII punctuation mark backslash-escaped, for use inside a Markdown message."""
    return "".join("\\" + char if char in _PUNCTUATION else char for char in text)


def code_span(text: str) -> str:
    """`text` as a Markdown code span whose fence is longer than any run of backticks inside it (inert)."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    return f"{fence} {text} {fence}"
