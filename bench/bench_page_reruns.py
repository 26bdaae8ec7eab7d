"""Median server-side script run per page (Streamlit AppTest), in the state a user would typically share.

Prints one line per page: median and p90 milliseconds over repeated reruns of the same session, against
the 50 ms budget. Every page app.py lists is measured in its state from bench/typical_states.py; a page
without one, a page that raises, or a state the page rejects as a bad link value ends the run with a
non-zero exit, so a page added later cannot be left out. Run with `make bench` or
`.venv/bin/python -m bench.bench_page_reruns [page.py ...]`.
"""

from __future__ import annotations

import os
import statistics
import sys
import time

from streamlit.testing.v1 import AppTest

from bench.typical_states import (
    TYPICAL_STATES,
    TypicalState,
    missing_pages,
    page_file_names,
    typed_values,
    unknown_page_names,
)
from tests.support.page_discovery import app_pages
from ui import background

BUDGET_MS = 50.0
RERUNS = 15


def time_page(page: os.PathLike, state: TypicalState) -> list[float]:
    """Wall-clock milliseconds of each rerun after the first (warm) run of `page` in `state`."""
    at = AppTest.from_file(str(page), default_timeout=120)
    for key, value in state.query.items():
        at.query_params[key] = value
    for key, value in typed_values(state).items():
        at.session_state[key] = value
    at.run()
    if at.exception:
        raise RuntimeError(f"{page} raised: {at.exception[0].value}")
    # Sections computed off the script thread (ui/background.py) finish first: reruns are timed in the steady
    # state, with the page whole (the shared-link bench times the first visit).
    for job in list(background._jobs.values()):
        job.exception(timeout=300)
    at.run()
    notes = [w.value for w in at.warning if "The link " in w.value]
    if notes:
        raise RuntimeError(f"{page}: the typical state has a bad link value: {notes[0]}")
    timings = []
    for _ in range(RERUNS):
        start = time.perf_counter()
        at.run()
        timings.append((time.perf_counter() - start) * 1000)
    return timings


def main(argv: list[str]) -> int:
    """Print the median and p90 rerun time of every page (or those named in `argv`) against the budget."""
    missing = missing_pages()
    if missing:
        print(f"no typical state in bench/typical_states.py for: {', '.join(missing)}", file=sys.stderr)
        return 1
    if "-h" in argv or "--help" in argv:
        print(__doc__)
        return 0
    if options := [argument for argument in argv if argument.startswith("-")]:
        print(f"unknown option {options[0]}; give page names only (say memory or memory.py)", file=sys.stderr)
        return 2
    if message := unknown_page_names(argv):
        print(message, file=sys.stderr)
        return 2
    names = page_file_names(argv)
    pages = [page for page in app_pages() if not names or page.name in names]
    print(f"page rerun budget: median < {BUDGET_MS:.0f} ms ({RERUNS} warm reruns each, AppTest); "
          f"load average {os.getloadavg()[0]:.1f}")
    over = []
    for page in pages:
        timings = time_page(page, TYPICAL_STATES[page.name])
        median = statistics.median(timings)
        p90 = statistics.quantiles(timings, n=10)[-1]
        verdict = "ok" if median < BUDGET_MS else "OVER BUDGET"
        if median >= BUDGET_MS:
            over.append(page.name)
        print(f"{page.name:<18} median {median:7.1f} ms   p90 {p90:7.1f} ms   {verdict}")
    print("every page within budget" if not over else f"over budget: {', '.join(over)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
