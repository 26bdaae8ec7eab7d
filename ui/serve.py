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
- Streamlit's Markdown element loads its HTML parser (the `rehype-raw` chunk, 188 KB, and two small chunks it
  imports) only when it first meets Markdown with HTML in it: every page here draws some (the page style, the
  inline SVG charts), and a memory-page link draws its main result, the bars, that way. Fetched on demand, the
  chunk queued behind the ~30 widget chunks the inputs above the bars ask for first (the browser opens 6
  connections to a server), and the bars waited for it: a trace at load 17 had it asked at 1.8 s and received at
  3.7 s. The index.html served here preloads it after Streamlit's own preloads (`markdown_html_chunks`).
"""

from __future__ import annotations

import atexit
import functools
import re
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


#: The Markdown element's chunk lists the chunks it imports on demand (`__vite__mapDeps`, by index) and imports its
#: HTML parser with `import(`./rehype-raw.<hash>.js`)` and the indices of the chunks that one needs.
_DEPS_LIST = re.compile(r"m\.f=\[([^\]]*)\]")
_RAW_IMPORT = re.compile(r"import\(`\./(rehype-raw\.[\w-]+\.js)`\),__vite__mapDeps\(\[([\d,]+)\]\)")


def markdown_html_chunks(js_dir: Path) -> list[str]:
    """File names (in Streamlit's static/js) of the Markdown element's HTML parser chunk and the .js chunks it imports.

    Read from the Markdown element's own chunk; [] when its form is not the one Streamlit 1.67 builds (then nothing
    is preloaded and pages load as Streamlit does; tests/ui/test_serve.py fails on such a Streamlit).
    """
    for markdown_chunk in sorted(js_dir.glob("StreamlitMarkdown.*.js")):
        source = markdown_chunk.read_text(encoding="utf-8")
        deps, raw_import = _DEPS_LIST.search(source), _RAW_IMPORT.search(source)
        if deps is None or raw_import is None:
            continue
        files = [name.strip().strip('"') for name in deps.group(1).split(",")]
        needed = [files[int(index)] for index in raw_import.group(2).split(",") if int(index) < len(files)]
        names = [raw_import.group(1)] + [name.removeprefix("./") for name in needed if name.endswith(".js")]
        return [name for name in dict.fromkeys(names) if (js_dir / name).is_file()]
    return []


def index_html_with_base_url(index_html: str, base_url_path: str, preload: list[str] | None = None) -> str:
    """Streamlit's index.html with the server's base URL set for its client (before the client's own scripts), and
    `preload` (chunk file names in static/js) preloaded after Streamlit's own preloads when it does not preload them.
    """
    base = base_url_path.strip("/")
    script = BASE_URL_SCRIPT.format(base=f"{base}/" if base else "")
    head = "<head>"
    if head not in index_html:
        raise RuntimeError("Streamlit's index.html has no <head>: cannot set the client's base URL")
    index_html = index_html.replace(head, f"{head}\n    {script}", 1)
    links = "".join(f'    <link rel="modulepreload" crossorigin href="./static/js/{name}">\n'
                    for name in preload or () if f"/{name}\"" not in index_html)
    return index_html.replace("  </head>", f"{links}  </head>", 1) if "  </head>" in index_html else index_html


@functools.cache
def static_dir_with_base_url() -> str:
    """A directory serving Streamlit's static files unchanged (symlinks) and its index.html with the base URL set
    and the Markdown element's HTML parser preloaded.

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
    preload = markdown_html_chunks(_STREAMLIT_STATIC_DIR / "static" / "js")
    (directory / "index.html").write_text(index_html_with_base_url(index_html, base_url_path, preload),
                                          encoding="utf-8")
    return str(directory)


def main() -> None:
    """Run `streamlit run app.py` with any extra command-line options passed through."""
    PagesManager.uses_pages_directory = False
    file_util.get_static_dir = static_dir_with_base_url
    sys.argv = ["streamlit", "run", "app.py", *sys.argv[1:]]
    cli.main()


if __name__ == "__main__":
    main()
