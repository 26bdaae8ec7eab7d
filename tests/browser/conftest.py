"""Real-browser fixtures: a live `streamlit run app.py` on a free localhost port, driven by Debian's Chromium.

A browser test that cannot run must FAIL, never skip: a missing /usr/bin/chromium or a missing
playwright package is reported as a failure with the fix in the message. No browser is ever
downloaded; Playwright only launches the system Chromium.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.browser import CHROMIUM, CHROMIUM_ARGS
from tests.support.streamlit_server import served


@pytest.fixture(scope="session")
def app_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Base URL of the app served as `make run` serves it (ui/serve.py), from the repository root;
    stopped after the session."""
    with served([sys.executable, "-m", "ui.serve"], tmp_path_factory.mktemp("streamlit") / "server.log") as url:
        yield url


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


NARROW_PX = 1024  # the narrow width issue 19 checks layouts at


def _fresh_tab(browser, width_px: int):
    """A fresh browser tab (own cookies and storage) `width_px` wide and 1000 px tall; closed after the test."""
    context = browser.new_context(viewport={"width": width_px, "height": 1000})
    try:
        yield context.new_page()
    finally:
        context.close()


@pytest.fixture
def page(browser):
    """A fresh browser tab (own cookies and storage) for one test, 1400 px wide."""
    yield from _fresh_tab(browser, 1400)


@pytest.fixture
def narrow_page(browser):
    """A fresh browser tab for one test at the narrow width layouts are checked at (NARROW_PX)."""
    yield from _fresh_tab(browser, NARROW_PX)


@pytest.fixture(scope="session")
def screenshot_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where browser tests save screenshots: $SERVEWISE_SCREENSHOTS if set, else a session tmp dir."""
    configured = os.environ.get("SERVEWISE_SCREENSHOTS")
    directory = Path(configured) if configured else tmp_path_factory.mktemp("screenshots")
    directory.mkdir(parents=True, exist_ok=True)
    return directory
