"""A command people copy is drawn as one code span per word, so it wraps between words, never inside a flag
(tests/browser/test_layout_1024.py checks what Chromium draws at 1024 px)."""

from __future__ import annotations

import pytest

from ui.command_text import command_markdown


def test_each_word_is_its_own_code_span_and_the_spaces_stay_between_them():
    text = command_markdown("journalctl -u ollama --no-pager --follow --pager-end")
    assert text == "` journalctl ` ` -u ` ` ollama ` ` --no-pager ` ` --follow ` ` --pager-end `"


def test_a_backtick_in_a_word_stays_inert():
    assert command_markdown("echo `id`") == "` echo ` `` `id` ``"


def test_a_multi_line_command_is_refused():
    with pytest.raises(ValueError, match="one-line"):
        command_markdown("vllm serve m \\\n  --port 8000")
