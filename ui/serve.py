"""Start the app the way `make run` does: `streamlit run app.py`, with app.py's navigation from the first visit.

Two things Streamlit does on its own are changed here, both for links people share:

- Streamlit still treats a `pages/` folder next to the entry script as a legacy multipage app until the
  entry script has called `st.navigation` once. Until then, a shared link such as `/formats?...` opened on
  a freshly started server runs that page on its own (no sidebar of our pages, no page config). The
  flag below is the one `st.navigation` itself clears; clearing it before the server starts makes every
  request go through app.py.
- Streamlit's browser client does not know where the server's root is, so at a page path such as
  `/engines?...` it first tries the path itself as the server's base URL: it asks for
  `/engines/_stcore/health`, gets a 404, waits 100 ms and only then asks `/_stcore/health` and opens its
  websocket (Streamlit 1.67, frontend `WebsocketConnection` / `getPossibleBaseUris`). Every link to a page
  other than home paid that before anything was drawn. The client reads the server's base URL from
  `window.__streamlit.BACKEND_BASE_URL` when a host sets it, so the index.html served here sets it to this
  server's own root (`server.baseUrlPath` included); nothing else in the client reads that value for a
  same-origin app.
"""

from __future__ import annotations

import atexit
import functools
import shutil
import sys
import tempfile
from pathlib import Path

from streamlit import config, file_util
from streamlit.runtime.pages_manager import PagesManager
from streamlit.web import cli

#: Streamlit's own static directory, read before `file_util.get_static_dir` is replaced below.
_STREAMLIT_STATIC_DIR = Path(file_util.get_static_dir())
#: The one script tag added to Streamlit's index.html, before its own scripts (`{base}`: server.baseUrlPath).
BASE_URL_SCRIPT = (
    '<script>window.__streamlit = {{BACKEND_BASE_URL: new URL("/{base}", window.location.href).href}}</script>'
)


def index_html_with_base_url(index_html: str, base_url_path: str) -> str:
    """Streamlit's index.html with the server's base URL set for its client (before the client's own scripts)."""
    base = base_url_path.strip("/")
    script = BASE_URL_SCRIPT.format(base=f"{base}/" if base else "")
    head = "<head>"
    if head not in index_html:
        raise RuntimeError("Streamlit's index.html has no <head>: cannot set the client's base URL")
    return index_html.replace(head, f"{head}\n    {script}", 1)


@functools.cache
def static_dir_with_base_url() -> str:
    """A directory serving Streamlit's static files unchanged (symlinks) and its index.html with the base URL set.

    Built on first call (when the server reads `server.baseUrlPath`, after the command line is parsed) in a
    temporary directory removed when the process exits.
    """
    directory = Path(tempfile.mkdtemp(prefix="servewise-static-"))
    atexit.register(shutil.rmtree, directory, ignore_errors=True)
    for entry in _STREAMLIT_STATIC_DIR.iterdir():
        if entry.name != "index.html":
            (directory / entry.name).symlink_to(entry)
    index_html = (_STREAMLIT_STATIC_DIR / "index.html").read_text(encoding="utf-8")
    base_url_path = config.get_option("server.baseUrlPath") or ""
    (directory / "index.html").write_text(index_html_with_base_url(index_html, base_url_path), encoding="utf-8")
    return str(directory)


def main() -> None:
    """Run `streamlit run app.py` with any extra command-line options passed through."""
    PagesManager.uses_pages_directory = False
    file_util.get_static_dir = static_dir_with_base_url
    sys.argv = ["streamlit", "run", "app.py", *sys.argv[1:]]
    cli.main()


if __name__ == "__main__":
    main()
