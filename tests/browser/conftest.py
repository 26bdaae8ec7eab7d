"""Real-browser fixtures: a live `streamlit run app.py` on a free localhost port, driven by Debian's Chromium.

A browser test that cannot run must FAIL, never skip: a missing /usr/bin/chromium or a missing
playwright package is reported as a failure with the fix in the message. No browser is ever
downloaded; Playwright only launches the system Chromium.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.browser import CHROMIUM, CHROMIUM_ARGS

REPO_ROOT = Path(__file__).resolve().parents[2]
SERVER_START_TIMEOUT_S = 60


def _free_port() -> int:
    """A TCP port on 127.0.0.1 nobody listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _wait_for_health(base_url: str, process: subprocess.Popen, log_path: Path) -> None:
    """Poll /_stcore/health until it answers 'ok'; fail with the server log if it never does."""
    deadline = time.monotonic() + SERVER_START_TIMEOUT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"streamlit exited with code {process.returncode}:\n{log_path.read_text()}")
        try:
            with urllib.request.urlopen(f"{base_url}/_stcore/health", timeout=2) as response:
                if response.status == 200 and response.read().strip() == b"ok":
                    return
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            pass
        time.sleep(0.25)
    pytest.fail(f"streamlit did not answer /_stcore/health within {SERVER_START_TIMEOUT_S}s:\n{log_path.read_text()}")


@pytest.fixture(scope="session")
def app_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Base URL of the app served as `make run` serves it (ui/serve.py), from the repository root;
    stopped after the session."""
    port = _free_port()
    log_path = tmp_path_factory.mktemp("streamlit") / "server.log"
    command = [
        sys.executable, "-m", "ui.serve",
        "--server.address", "127.0.0.1",
        "--server.port", str(port),
        "--server.headless", "true",
        "--browser.gatherUsageStats", "false",
        "--server.fileWatcherType", "none",
    ]  # fmt: skip
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    with log_path.open("w") as log:
        process = subprocess.Popen(command, cwd=REPO_ROOT, stdout=log, stderr=subprocess.STDOUT, env=env)
    base_url = f"http://127.0.0.1:{port}"
    try:
        _wait_for_health(base_url, process, log_path)
        yield base_url
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)


@pytest.fixture(scope="session")
def browser():
    """Debian's Chromium under Playwright, headless; fails (never skips) when either is missing."""
    if not CHROMIUM.is_file():
        pytest.fail(
            f"{CHROMIUM} is missing: browser tests need Debian's chromium package "
            "(as root: apt-get install chromium; `make test` does this when run as root)."
        )
    try:
        from playwright.sync_api import sync_playwright
    except ImportError as exc:
        pytest.fail(f"playwright is not installed ({exc}); run `make test` to install requirements-test.txt")
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture
def page(browser):
    """A fresh browser tab (own cookies and storage) for one test."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    tab = context.new_page()
    try:
        yield tab
    finally:
        context.close()


@pytest.fixture(scope="session")
def screenshot_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where browser tests save screenshots: $SERVEWISE_SCREENSHOTS if set, else a session tmp dir."""
    configured = os.environ.get("SERVEWISE_SCREENSHOTS")
    directory = Path(configured) if configured else tmp_path_factory.mktemp("screenshots")
    directory.mkdir(parents=True, exist_ok=True)
    return directory
