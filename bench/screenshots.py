"""Full-page screenshots of every page at 1440 and 1024 px, in English and Spanish, opened from a shared link.

Serves the app as `make run` does (ui.serve), opens each page app.py registers (tests/support/page_discovery.py)
through a typical shared link with `lang=en` and `lang=es`, waits for the script run to finish and saves one PNG
per page, width and language: `<page>-<width>-<lang>.png` in the folder given (default /work/scratch/ux/shots).
Not a timing bench (`make bench` runs bench/bench_*.py only): it is for looking at the pages. Never commit the PNGs.

    python -m bench.screenshots [FOLDER] [--only PAGE ...] [--width 1440 --width 1024] [--lang es] [--charts]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from bench.served_app import REPO, chromium, served
from tests.support.browser import CUT_LABELS_JS, wait_for_app
from tests.support.page_discovery import app_pages
from tests.support.page_links import page_link

DEFAULT_FOLDER = Path("/work/scratch/ux/shots")
WIDTHS_PX = (1440, 1024)
LANGUAGES = ("en", "es")
VIEWPORT_HEIGHT_PX = 1000
MAX_HEIGHT_PX = 16_000  # Chromium refuses taller captures


def shoot(browser, url: str, width_px: int, path: Path, charts: bool = False) -> list[str]:
    """Open `url` in a fresh context `width_px` wide, save a full-page PNG at `path`; return problems seen.

    With `charts`, each plotly chart is also saved on its own (`<name>-chart<N>.png`) to look at closely.
    """
    context = browser.new_context(viewport={"width": width_px, "height": VIEWPORT_HEIGHT_PX})
    try:
        page = context.new_page()
        page.goto(url, wait_until="domcontentloaded")
        wait_for_app(page, timeout_ms=120_000)
        page.wait_for_timeout(800)  # plotly draws after the script run ends
        exceptions = page.locator('[data-testid="stException"]').all_inner_texts()
        problems = [f"exception shown: {text[:120]}" for text in exceptions]
        problems += page.evaluate(CUT_LABELS_JS)  # labels cut with an ellipsis or split inside a word
        # Streamlit scrolls inside its main container, not the document: grow the viewport to its content.
        height_px = page.evaluate(
            '() => Math.max(...[...document.querySelectorAll(\'[data-testid="stMain"], '
            '[data-testid="stAppViewContainer"], section, body\')].map(e => e.scrollHeight))'
        )
        page.set_viewport_size({"width": width_px, "height": min(int(height_px) + 40, MAX_HEIGHT_PX)})
        page.wait_for_timeout(800)  # plotly redraws at the new size
        page.screenshot(path=str(path), full_page=True)
        if charts:
            for index, chart in enumerate(page.locator('[data-testid="stPlotlyChart"]').all()):
                chart.screenshot(path=str(path.with_name(f"{path.stem}-chart{index}.png")))
        return problems
    finally:
        context.close()


def main(argv: list[str] | None = None) -> int:
    """Screenshot every page (or those named by --only) at each width and language; print one line per PNG."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", nargs="?", type=Path, default=DEFAULT_FOLDER)
    parser.add_argument("--only", action="append", help="page name (file name under pages/), repeatable")
    parser.add_argument("--width", action="append", type=int, help="viewport width in px, repeatable")
    parser.add_argument("--lang", action="append", choices=LANGUAGES, help="language, repeatable")
    parser.add_argument("--charts", action="store_true", help="also save each chart on its own")
    args = parser.parse_args(argv)
    args.folder.mkdir(parents=True, exist_ok=True)
    pages = [path.stem for path in app_pages()]
    if args.only:
        unknown = sorted(set(args.only) - set(pages))
        if unknown:
            print(f"no such page: {', '.join(unknown)} (pages: {', '.join(pages)})", file=sys.stderr)
            return 2
        pages = [name for name in pages if name in args.only]
    failures = 0
    with chromium() as browser, served([sys.executable, "-m", "ui.serve"], REPO) as (base_url, _, _):
        for name in pages:
            for lang in args.lang or LANGUAGES:
                for width_px in args.width or WIDTHS_PX:
                    path = args.folder / f"{name}-{width_px}-{lang}.png"
                    try:
                        problems = shoot(browser, page_link(base_url, name, lang), width_px, path, args.charts)
                    except Exception as exc:
                        problems = [f"{type(exc).__name__}: {str(exc).splitlines()[0]}"]
                    failures += bool(problems)
                    print(f"{path}  {'; '.join(problems) or 'ok'}", flush=True)
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
