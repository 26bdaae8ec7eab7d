"""Streamlit's "magic" (a bare expression on a page is drawn with st.write) is off in .streamlit/config.toml: its
pass over each page's syntax tree cost 7-16 ms a page on every compile. So no page may rely on it: a bare
expression that magic would have drawn is silently dropped now, and this test names it."""

from __future__ import annotations

import ast
import tomllib

import pytest
from streamlit.runtime.scriptrunner import magic

from tests.support.page_discovery import app_pages
from tests.support.paths import REPO_ROOT


def test_magic_is_off_in_the_server_settings():
    settings = tomllib.loads((REPO_ROOT / ".streamlit" / "config.toml").read_text())
    assert settings["runner"]["magicEnabled"] is False


@pytest.mark.parametrize("script", ["app.py", *(f"pages/{page.name}" for page in app_pages())])
def test_no_page_draws_a_bare_expression(script):
    source = (REPO_ROOT / script).read_text()
    with_magic = ast.dump(magic.add_magic(source, script))
    assert "transparent_write" not in with_magic, f"{script} has a bare expression magic would draw: call st.write"
