"""Time from opening a shared link to its main result being visible in headless Chromium, against a bare page.

Serves the app as `make run` does (ui.serve) and, in the same run, a one-line Streamlit page from a temporary
directory. Each sample opens the link in a fresh browser context (nothing cached, as for someone clicking a
link they were sent) and stops the clock when the result a user came for is on screen. Prints the median of
each and their ratio against the target (<= 1.5x the bare page).
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

from bench.served_app import REPO, chromium, served

TARGET_RATIO = 1.5
SAMPLES = 7
BARE_PAGE = 'import streamlit as st\n\nst.write("hello from a bare page")\n'

#: (shared link path, what must be visible, text it must contain): the result each link is opened for.
LINKS = [
    ("/?home_connections=40&home_active=4",
     '[data-testid="stMetric"]:has-text("Waiting in the queue") [data-testid="stMetricValue"]', "36"),
    ("/engines?engines_backend=metal&engines_knobs=vllm", '[data-testid="stDataFrame"]', ""),
]  # fmt: skip


def time_to_visible(browser, url: str, selector: str, text: str) -> float:
    """Seconds from navigation start until `selector` is visible (and contains `text`), in a fresh context."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    try:
        start = time.perf_counter()
        page.goto(url, wait_until="commit")
        target = page.locator(selector)
        (target.filter(has_text=text) if text else target).first.wait_for(state="visible", timeout=60_000)
        return time.perf_counter() - start
    finally:
        context.close()


def main() -> int:
    """Print the median time to the main result for each shared link, the bare page's, and their ratios."""
    with tempfile.TemporaryDirectory() as bare_dir, chromium() as browser:
        (Path(bare_dir) / "bare.py").write_text(BARE_PAGE)
        python = sys.executable
        with served([python, "-m", "ui.serve"], REPO) as (app_url, _, _), served(
            [python, "-m", "streamlit", "run", "bare.py"], Path(bare_dir)
        ) as (bare_url, _, _):
            # One warm-up each: the first run of a server imports and loads its caches once for everyone.
            time_to_visible(browser, bare_url, '[data-testid="stMarkdown"]', "hello")
            for path, selector, text in LINKS:
                time_to_visible(browser, app_url + path, selector, text)
            bare = [time_to_visible(browser, bare_url, '[data-testid="stMarkdown"]', "hello") for _ in range(SAMPLES)]
            bare_s = statistics.median(bare)
            print(f"shared link -> main result visible (headless Chromium, fresh context, median of {SAMPLES})")
            print(f"  bare one-line page        {bare_s * 1000:7.0f} ms")
            for path, selector, text in LINKS:
                samples = [time_to_visible(browser, app_url + path, selector, text) for _ in range(SAMPLES)]
                app_s = statistics.median(samples)
                ratio = app_s / bare_s
                verdict = "ok" if ratio <= TARGET_RATIO else "OVER TARGET"
                print(f"  {path:<52} {app_s * 1000:7.0f} ms   ratio {ratio:4.2f} "
                      f"(target <= {TARGET_RATIO})   {verdict}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
