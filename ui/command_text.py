"""Show a shell command people copy (launch commands, log captures) without Streamlit's syntax highlighter.

st.code fetches and parses Streamlit's syntax-highlighter script (~1.5 MB) as soon as one code block is drawn,
wherever it sits on the page; on the memory page that parsing delayed the bars at the top of a shared link
(issue 19, `python -m bench.bench_shared_link memory.py`). Markdown code spans are drawn by the Markdown element
every page has loaded already, in monospace; a triple-click selects exactly the command.

Each word of the command is its own code span, so a command longer than its column wraps between words only: as
one span it wrapped inside it wherever Chromium may break a line, after a hyphen ("--no-" / "pager",
"--pager-" / "end" in the log-capture column at 1024 px), and a flag read that way is retyped wrongly.
"""

from __future__ import annotations

import streamlit as st

from ui.markdown_text import code_span


def command_markdown(command: str) -> str:
    """One-line `command` as Markdown: one code span per word, separated by the spaces a copy keeps.

    Runs of spaces are read as one (a code span cannot start or end with the spaces between words).
    """
    if "\n" in command:
        raise ValueError("show_command draws one-line commands only")
    return " ".join(code_span(word) for word in command.split(" ") if word)


def show_command(command: str) -> None:
    """Draw one-line `command` as selectable, copy-able Markdown code spans (inert: nothing in it is Markdown).

    A code span shows a line break as a space, which would change a multi-line command, so those are refused.
    """
    st.markdown(command_markdown(command))
