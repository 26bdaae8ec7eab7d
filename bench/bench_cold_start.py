"""Cold start of `make run` (python -m ui.serve) on the installed venv: spawn -> healthy -> first page rendered.

Each sample starts a fresh server process (Python imports, Streamlit start-up, then the first script run
with its knowledge-base load when the first browser connects). Chromium is launched before the server so
its own start-up is not counted. Prints the median of each stage.
"""

from __future__ import annotations

import statistics
import sys
import time

from bench.served_app import REPO, chromium, served, wait_for_app

SAMPLES = 3


def one_cold_start(browser) -> tuple[float, float]:
    """(seconds to a healthy server, seconds from spawn to the home page rendered) for one fresh server."""
    spawn = time.perf_counter()
    with served([sys.executable, "-m", "ui.serve"], REPO) as (base_url, _, healthy_s):
        page = browser.new_context().new_page()
        page.goto(base_url, wait_until="domcontentloaded")
        wait_for_app(page)
        rendered_s = time.perf_counter() - spawn
        page.context.close()
    return healthy_s, rendered_s


def main() -> int:
    """Print the median time to health and to the first rendered page over a few fresh server starts."""
    with chromium() as browser:
        samples = [one_cold_start(browser) for _ in range(SAMPLES)]
    healthy = statistics.median(s[0] for s in samples)
    rendered = statistics.median(s[1] for s in samples)
    print(f"cold start of `make run` (python -m ui.serve), median of {SAMPLES} fresh servers")
    print(f"  spawn -> /_stcore/health ok      {healthy:6.2f} s")
    print(f"  spawn -> home page rendered      {rendered:6.2f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
