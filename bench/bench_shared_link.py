"""Time from opening a shared link to its main result being visible in headless Chromium, against a bare page.

Serves the app as `make run` does (ui.serve) and, in the same run, a one-line Streamlit page from a temporary
directory. Each sample opens the link in a fresh browser context (nothing cached, as for someone clicking a
link they were sent) and stops the clock when the result a user came for is on screen. Every page app.py
lists is opened in its typical state (bench/typical_states.py: the link and its main-result element); a page
without one ends the run with a non-zero exit. Prints the median of each and their ratio against the target
(<= 1.5x the bare page). `python -m bench.bench_shared_link [page.py ...]` measures only the pages named.
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from bench.served_app import REPO, chromium, served
from bench.typical_states import TYPICAL_STATES, link, missing_pages
from tests.support.page_discovery import app_pages

TARGET_RATIO = 1.5
SAMPLES = 11
BARE_PAGE = 'import streamlit as st\n\nst.write("hello from a bare page")\n'


#: How long one wait for the main result lasts before it is asked again. Playwright's `locator.wait_for` polls
#: at 0, 20, 70, 170 and 270 ms and then every 500 ms, so a single long wait rounds every time past ~0.3 s up
#: to its next poll (a result drawn at 0.9 s was timed at ~1.3 s, and two pages 0.1 s apart could differ by
#: 0.5 s). A wait of 100 ms keeps only the 20 ms step of that back-off, so repeating it polls every ~20 ms.
POLL_SLICE_MS = 100
RESULT_TIMEOUT_S = 60


def time_to_visible(browser, url: str, selector: str, text: str) -> float:
    """Seconds from navigation start until `selector` is visible (and contains `text`), in a fresh context.

    Polled every ~20 ms (POLL_SLICE_MS), so the figure is within a few tens of ms of when the result showed.
    """
    from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    try:
        start = time.perf_counter()
        page.goto(url, wait_until="commit")
        target = page.locator(selector)
        result = (target.filter(has_text=text) if text else target).first
        while True:
            try:
                result.wait_for(state="visible", timeout=POLL_SLICE_MS)
                return time.perf_counter() - start
            except PlaywrightTimeoutError:
                if time.perf_counter() - start > RESULT_TIMEOUT_S:
                    raise
    finally:
        context.close()


def _quartiles_ms(values: list[float]) -> str:
    """The first and third quartiles of `values` (seconds), in milliseconds."""
    q1, _median, q3 = statistics.quantiles(values, n=4)
    return f"{q1 * 1000:.0f}-{q3 * 1000:.0f} ms"


def main(argv: list[str]) -> int:
    """Print the median time to the main result for each page's shared link, the bare page's, and their ratios."""
    missing = missing_pages()
    if missing:
        print(f"no typical state in bench/typical_states.py for: {', '.join(missing)}", file=sys.stderr)
        return 1
    links = [(page.name, link(page.name, TYPICAL_STATES[page.name]), TYPICAL_STATES[page.name])
             for page in app_pages() if not argv or page.name in argv]
    with tempfile.TemporaryDirectory() as bare_dir, chromium() as browser:
        (Path(bare_dir) / "bare.py").write_text(BARE_PAGE)
        python = sys.executable
        with served([python, "-m", "ui.serve"], REPO) as (app_url, _, _), served(
            [python, "-m", "streamlit", "run", "bare.py"], Path(bare_dir)
        ) as (bare_url, _, _):
            # One warm-up each: the first run of a server imports and loads its caches once for everyone.
            time_to_visible(browser, bare_url, '[data-testid="stMarkdown"]', "hello")
            for _, path, state in links:
                time_to_visible(browser, app_url + path, state.main_result, state.main_text)
            # Rounds interleave the bare page with every link, so a slow spell of the machine hits both sides of a
            # ratio alike (timing all bare samples first let load drift between them and the pages).
            bare: list[float] = []
            samples: dict[str, list[float]] = {name: [] for name, _, _ in links}
            for _round in range(SAMPLES):
                bare.append(time_to_visible(browser, bare_url, '[data-testid="stMarkdown"]', "hello"))
                for name, path, state in links:
                    samples[name].append(time_to_visible(browser, app_url + path, state.main_result, state.main_text))
            bare_s = statistics.median(bare)
            print(f"shared link -> main result visible (headless Chromium, fresh context, median of {SAMPLES} "
                  f"interleaved rounds; quartiles in brackets); load average {os.getloadavg()[0]:.1f}")
            print(f"  {'bare one-line page':<18} {bare_s * 1000:7.0f} ms   ({_quartiles_ms(bare)})")
            over = []
            for name, path, _state in links:
                app_s = statistics.median(samples[name])
                ratio = app_s / bare_s
                verdict = "ok" if ratio <= TARGET_RATIO else "OVER TARGET"
                if ratio > TARGET_RATIO:
                    over.append(name)
                print(f"  {name:<18} {app_s * 1000:7.0f} ms   ratio {ratio:4.2f} (target <= {TARGET_RATIO})   "
                      f"{verdict:<11}  ({_quartiles_ms(samples[name])})   {path[:60]}")
            print("every link within target" if not over else f"over target: {', '.join(over)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
