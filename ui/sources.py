"""Turn a knowledge-base `source` string into a link a reader can follow."""

from __future__ import annotations

import re

# `owner/repo:path`, optionally followed by a space and a remark; several sources are joined by "; ".
_REPO_PATH = re.compile(r"^(?P<repo>[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+):(?P<path>[^\s;]+)")


def source_url(source: str) -> str | None:
    """The URL of the first source in `source`: itself if it is a URL, GitHub for `owner/repo:path`, else None."""
    first = source.split(";")[0].strip()
    if first.startswith(("https://", "http://")):
        return first.split()[0]
    match = _REPO_PATH.match(first)
    if match is None:
        return None
    return f"https://github.com/{match['repo']}/blob/HEAD/{match['path']}"
