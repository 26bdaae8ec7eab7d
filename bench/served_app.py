"""Helpers the browser benches share: serve a Streamlit script on a free port, wait for it, drive Chromium.

Not a bench: `make bench` runs every bench/*.py, and run on its own this module only imports.
"""

from __future__ import annotations

import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.support.browser import wait_for_app  # noqa: F401 - re-exported for the benches
from tests.support.streamlit_server import free_port, stop, wait_for_health

REPO = Path(__file__).resolve().parents[1]

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]  # fmt: skip
SERVER_FLAGS = ["--server.address", "127.0.0.1", "--server.headless", "true", "--browser.gatherUsageStats", "false",
                "--server.fileWatcherType", "none"]  # fmt: skip


@contextmanager
def served(command: list[str], cwd: Path) -> Iterator[tuple[str, subprocess.Popen, float]]:
    """Run `command` (a Streamlit server; a port and SERVER_FLAGS are appended) in `cwd`.

    Yields (base URL, process, seconds from spawn to a healthy server); stops the server afterwards.
    """
    port = free_port()
    start = time.perf_counter()
    process = subprocess.Popen(
        [*command, "--server.port", str(port), *SERVER_FLAGS],
        cwd=cwd,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    base_url = f"http://127.0.0.1:{port}"
    try:
        wait_for_health(base_url, process, timeout_s=90)
        yield base_url, process, time.perf_counter() - start
    finally:
        stop(process)


@contextmanager
def chromium() -> Iterator[object]:
    """Debian's Chromium under Playwright (headless)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()
