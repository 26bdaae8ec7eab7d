"""Median server-side script run per page (Streamlit AppTest), for a typical state of each page.

Prints one line per page: median and p90 milliseconds over repeated reruns of the same session,
against the 50 ms budget. Run with `make bench` or `.venv/bin/python -m bench.bench_page_reruns`.
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path

from streamlit.testing.v1 import AppTest

REPO = Path(__file__).resolve().parents[1]

BUDGET_MS = 50.0
RERUNS = 15

#: A typical shared-link state per page (query parameters); pages absent here run with defaults.
TYPICAL_STATES: dict[str, dict[str, str]] = {
    "home.py": {},
    "engines.py": {},
    "formats.py": {},
    "memory.py": {"mem_model": "llama-3.1-8b", "mem_gpu": "h100-sxm-80gb", "mem_gpus": "2", "mem_ctx": "16384",
                  "mem_seqs": "8"},
    "wizard.py": {"wiz_use": "shared-api", "wiz_users": "32", "wiz_prefixes": "true"},
    "simulator.py": {"sim_engines": ["vllm", "llama-cpp"], "sim_n": "1000"},
    "operations.py": {"ops_engines": ["vllm", "llama-cpp", "ollama"]},
}


def time_page(page: Path, query: dict[str, str]) -> list[float]:
    """Wall-clock milliseconds of each rerun after the first (warm) run of `page`."""
    at = AppTest.from_file(str(page), default_timeout=60)
    for key, value in query.items():
        at.query_params[key] = value
    at.run()
    if at.exception:
        raise RuntimeError(f"{page.name} raised: {at.exception[0].value}")
    timings = []
    for _ in range(RERUNS):
        start = time.perf_counter()
        at.run()
        timings.append((time.perf_counter() - start) * 1000)
    return timings


def main() -> int:
    """Print the median and p90 rerun time of every page against the budget."""
    print(f"page rerun budget: median < {BUDGET_MS:.0f} ms ({RERUNS} warm reruns each, AppTest)")
    for page in sorted((REPO / "pages").glob("*.py")):
        timings = time_page(page, TYPICAL_STATES.get(page.name, {}))
        median = statistics.median(timings)
        p90 = statistics.quantiles(timings, n=10)[-1]
        verdict = "ok" if median < BUDGET_MS else "OVER BUDGET"
        print(f"{page.name:<16} median {median:7.1f} ms   p90 {p90:7.1f} ms   {verdict}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
