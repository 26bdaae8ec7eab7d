"""Find the app's pages and the URL parameters each one binds, so hardening tests cover pages added later.

Pages come from app.py's `st.Page("pages/...")` entries (plus any pages/*.py not yet listed). A page's
URL parameters are read from one AppTest run (every rendered widget whose proto carries a
`query_param_key`, with its kind, options and numeric range) and from its source (every `key="..."`),
which also catches widgets drawn only in some states.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
_ST_PAGE = re.compile(r"""st\.Page\(\s*["'](pages/[\w/]+\.py)["']""")
_KEY = re.compile(r"""key=["']([A-Za-z0-9_]+)["']""")


@dataclass
class BoundWidget:
    """One URL-bound widget as rendered: its kind ('choice', 'multi', 'number', 'toggle', 'text', 'other')."""

    key: str
    kind: str
    options: list[str] = field(default_factory=list)
    integer: bool = False
    min_value: float | None = None
    max_value: float | None = None
    max_chars: int | None = None
    step: float | None = None
    value: str = ""  # what the widget showed on the discovery run (its default when the URL is empty)


def app_pages() -> list[Path]:
    """Every page script: app.py's st.Page entries first, then pages/*.py files app.py does not list yet."""
    listed = [REPO_ROOT / path for path in _ST_PAGE.findall((REPO_ROOT / "app.py").read_text())]
    extra = [path for path in sorted((REPO_ROOT / "pages").glob("*.py")) if path not in listed]
    return [path for path in listed + extra if path.is_file()]


def source_keys(page: Path) -> set[str]:
    """Every `key="..."` in the page's source: bound widgets drawn only in some states are among them.

    Keys of unbound widgets come along too; feeding them through the URL is harmless (and still tested).
    """
    return set(_KEY.findall(page.read_text()))


def _walk(node, found: list) -> None:
    proto = getattr(node, "proto", None)
    try:
        if proto is not None and proto.HasField("query_param_key"):
            found.append(node)
    except ValueError:  # protos without that field
        pass
    for child in getattr(node, "children", {}).values():
        _walk(child, found)


def rendered_bound_nodes(at) -> list:
    """AppTest element nodes (after a run) that are bound to a URL parameter."""
    found: list = []
    _walk(at._tree, found)
    return found


def describe(node) -> BoundWidget:
    """What values a rendered bound widget accepts from the URL."""
    proto, kind_name = node.proto, type(node).__name__
    key = proto.query_param_key
    if kind_name in ("Selectbox", "Radio"):
        return BoundWidget(key, "choice", [str(o) for o in proto.options])
    if kind_name == "Multiselect":
        return BoundWidget(key, "multi", [str(o) for o in proto.options])
    if kind_name == "ButtonGroup":
        options = [str(o.content) for o in proto.options]
        return BoundWidget(key, "multi" if proto.click_mode == 1 else "choice", options)
    if kind_name == "NumberInput":
        return BoundWidget(
            key,
            "number",
            integer=proto.data_type == 0,
            min_value=proto.min if proto.has_min else None,
            max_value=proto.max if proto.has_max else None,
            step=proto.step or None,
        )
    if kind_name in ("Toggle", "Checkbox"):
        return BoundWidget(key, "toggle", ["true", "false"])
    if kind_name == "TextInput":
        return BoundWidget(key, "text", max_chars=proto.max_chars or None)
    return BoundWidget(key, "other")


def bound_widgets(page: Path, timeout_s: float = 60) -> dict[str, BoundWidget]:
    """Every URL parameter `page` binds: rendered widgets described, source-only keys as kind 'other'."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(page), default_timeout=timeout_s).run()
    widgets = {}
    for node in rendered_bound_nodes(at):
        widget = describe(node)
        widget.value = str(node.value)
        widgets[widget.key] = widget
    for key in source_keys(page) - widgets.keys():
        widgets[key] = BoundWidget(key, "other")
    return widgets
