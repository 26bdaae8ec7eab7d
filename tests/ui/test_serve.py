"""ui/serve.py: the index.html it serves tells Streamlit's client where the server's root is and preloads the
Markdown element's HTML parser."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from streamlit import config, file_util

from ui import serve

STREAMLIT_INDEX = Path(file_util.get_static_dir()) / "index.html"
STREAMLIT_JS = Path(file_util.get_static_dir()) / "static" / "js"
FIRST_SCRIPT = re.compile(r"<script\b")


def base_url_set_before_the_client(html: str) -> str:
    """The BACKEND_BASE_URL expression of the first script in `html` (failing if the first script sets none)."""
    first = html[FIRST_SCRIPT.search(html).start():]
    match = re.match(r'<script>window\.__streamlit = \{BACKEND_BASE_URL: new URL\("([^"]*)", window\.location\.href\)',
                     first)
    assert match, f"the first script of index.html does not set the client's base URL: {first[:200]!r}"
    return match.group(1)


@pytest.mark.parametrize(("base_url_path", "root"), [("", "/"), ("sw", "/sw/"), ("/team/sw/", "/team/sw/")])
def test_the_first_script_sets_the_servers_root(base_url_path, root):
    html = serve.index_html_with_base_url(STREAMLIT_INDEX.read_text(encoding="utf-8"), base_url_path)
    assert base_url_set_before_the_client(html) == root
    assert html.count("window.__streamlit") == 1
    # Streamlit's own scripts and assets are still there, after ours.
    assert html.index("window.__streamlit") < html.index('<script type="module"')


def test_an_index_html_without_a_head_is_refused():
    with pytest.raises(RuntimeError, match="<head>"):
        serve.index_html_with_base_url("<html><body></body></html>", "")


def test_the_static_directory_serves_streamlits_files_and_the_changed_index(monkeypatch):
    get_option = config.get_option
    monkeypatch.setattr(config, "get_option", lambda key: "sw" if key == "server.baseUrlPath" else get_option(key))
    directory = Path(serve.static_dir_with_base_url.__wrapped__())
    real = Path(file_util.get_static_dir())
    assert sorted(p.name for p in directory.iterdir()) == sorted(p.name for p in real.iterdir())
    assert (directory / "static").resolve() == (real / "static").resolve()
    assert os.path.islink(directory / "static")
    assert base_url_set_before_the_client((directory / "index.html").read_text(encoding="utf-8")) == "/sw/"


def preloaded(html: str) -> list[str]:
    """The chunk file names `html` preloads, in order."""
    return re.findall(r'<link rel="modulepreload" crossorigin href="\./static/js/([^"]+)">', html)


def test_the_markdown_html_parser_and_what_it_imports_are_found_in_this_streamlit():
    chunks = serve.markdown_html_chunks(STREAMLIT_JS)
    # Fails on a Streamlit whose Markdown chunk is built otherwise: then nothing is preloaded (pages get slower).
    assert chunks and chunks[0].startswith("rehype-raw.")
    assert all((STREAMLIT_JS / name).is_file() for name in chunks)
    # What it imports is what the Markdown chunk lists for that import, and they include its HTML helpers.
    assert any(name.startswith("hastscript.") for name in chunks)


def test_the_served_index_preloads_the_html_parser_once_after_streamlits_own_preloads():
    streamlit_index = STREAMLIT_INDEX.read_text(encoding="utf-8")
    chunks = serve.markdown_html_chunks(STREAMLIT_JS)
    html = serve.index_html_with_base_url(streamlit_index, "", chunks)
    links = preloaded(html)
    own = preloaded(streamlit_index)
    assert links[:len(own)] == own  # Streamlit's own preloads first, as they were
    assert sorted(links) == sorted(set(links))  # none twice (most of its imports Streamlit preloads already)
    assert set(chunks) <= set(links)
    assert links.index(chunks[0]) >= len(own)
    assert html.index(chunks[0]) < html.index("</head>")
    without = serve.index_html_with_base_url(streamlit_index, "")
    assert without == serve.index_html_with_base_url(streamlit_index, "", []) and preloaded(without) == own


def test_the_served_static_directory_preloads_the_html_parser():
    directory = Path(serve.static_dir_with_base_url.__wrapped__())
    served_index = (directory / "index.html").read_text(encoding="utf-8")
    assert serve.markdown_html_chunks(STREAMLIT_JS)[0] in preloaded(served_index)
