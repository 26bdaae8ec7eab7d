"""Turn a fact's `source` string into a link a reader can open at the version it was read."""

from __future__ import annotations

import re

#: `owner/repo:path/inside/repo`, the repository-path form sources use in the YAML files.
_REPO_PATH = re.compile(r"^(?P<repo>[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+):(?P<path>[^\s]+)$")


def source_url(source: str, version: str) -> str | None:
    """A browsable URL for `source` pinned at `version`, or None when the source is not linkable.

    URLs are returned unchanged. `owner/repo:path` becomes a GitHub tree/blob link at the tag or commit
    that was read (`version`), so the reader sees the same text the fact was taken from.
    """
    if source.startswith(("http://", "https://")):
        return source
    match = _REPO_PATH.match(source)
    if match is None:
        return None
    path = match["path"].rstrip("/")
    last = path.rsplit("/", 1)[-1]
    kind = "blob" if "." in last or last.isupper() else "tree"  # LICENSE is a file, mlx_lm/tool_parsers a folder
    return f"https://github.com/{match['repo']}/{kind}/{version}/{path}"


__all__ = ["source_url"]
