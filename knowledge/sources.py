"""Turn a fact's `source` string into a link a reader can open, at the version it was read where possible."""

from __future__ import annotations

import re

#: `owner/repo:path/inside/repo`, optionally followed by a remark such as ` (Importing)`.
_REPO_PATH = re.compile(r"^(?P<repo>[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+):(?P<path>[^\s;]+)")
#: A tag or commit usable in a GitHub URL (versions such as "docs main via code index" are not).
_GIT_REF = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+-]*$")


def source_url(source: str, version: str | None = None) -> str | None:
    """A browsable URL for the first source in `source`, or None when it is not linkable.

    URLs are returned as written (without a trailing remark). `owner/repo:path` becomes a GitHub link
    pinned at `version` when that is a tag or commit, so the reader sees the text the fact was taken
    from; otherwise it points at HEAD. Several sources joined by "; " link the first.
    """
    first = source.split(";")[0].strip()
    if first.startswith(("http://", "https://")):
        return first.split()[0]
    match = _REPO_PATH.match(first)
    if match is None:
        return None
    path = match["path"].rstrip("/")
    last = path.rsplit("/", 1)[-1]
    kind = "blob" if "." in last or last.isupper() else "tree"  # LICENSE is a file, mlx_lm/tool_parsers a folder
    ref = version if version and _GIT_REF.match(version) else "HEAD"
    return f"https://github.com/{match['repo']}/{kind}/{ref}/{path}"


__all__ = ["source_url"]
