"""Only ui/url_widgets.py writes the URL's query string: a page that assigns `st.query_params[...]` itself races
the browser (a value typed while the run was on its way drops out of the link; tests/browser/test_url_races.py)."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.test_source_safety import REPO_ROOT, _dotted, app_sources

WRITER = REPO_ROOT / "ui" / "url_widgets.py"
_MUTATORS = {"update", "pop", "clear", "from_dict", "setdefault", "__setitem__", "__delitem__"}


def query_string_writes(path: Path) -> list[int]:
    """Lines of `path` that assign, delete or mutate `….query_params` (reading it is fine)."""
    lines = []
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        targets = node.targets if isinstance(node, (ast.Assign, ast.Delete)) else (
            [node.target] if isinstance(node, (ast.AugAssign, ast.AnnAssign)) else [])
        for target in targets:
            written = target.value if isinstance(target, ast.Subscript) else target
            if _dotted(written).endswith("query_params"):
                lines.append(node.lineno)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _MUTATORS \
                and _dotted(node.func.value).endswith("query_params"):
            lines.append(node.lineno)
    return lines


def test_only_url_widgets_writes_the_query_string():
    found = [f"{path.relative_to(REPO_ROOT)}:{line}" for path in app_sources() if path != WRITER
             for line in query_string_writes(path)]
    assert not found, "write the URL through ui.url_widgets.write_params instead:\n" + "\n".join(found)


def test_the_scan_sees_each_kind_of_write(tmp_path):
    snippet = tmp_path / "page.py"
    snippet.write_text("import streamlit as st\nst.query_params['a'] = '1'\ndel st.query_params['b']\n"
                       "st.query_params.update(c='2')\nst.query_params.pop('d', None)\nx = st.query_params.get('e')\n")
    assert query_string_writes(snippet) == [2, 3, 4, 5]
    assert query_string_writes(WRITER)  # the one writer is seen writing
