"""Show a shell command people copy (launch commands, log captures) without Streamlit's syntax highlighter.

st.code fetches and parses Streamlit's syntax-highlighter script (~1.5 MB) as soon as one code block is drawn,
wherever it sits on the page; on the memory page that parsing delayed the bars at the top of a shared link
(issue 19, `python -m bench.bench_shared_link memory.py`). A Markdown code span is drawn by the Markdown element
every page has loaded already, in monospace, wrapped at spaces; a triple-click selects exactly the command.
"""

from __future__ import annotations

import streamlit as st

from ui.markdown_text import code_span


def show_command(command: str) -> None:
    """Draw one-line `command` as a selectable, copy-able Markdown code span (inert: nothing in it is Markdown).

    A code span shows a line break as a space, which would change a multi-line command, so those are refused.
    """
    if "\n" in command:
        raise ValueError("show_command draws one-line commands only")
    st.markdown(code_span(command))
