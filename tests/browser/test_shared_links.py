"""Every page's typical shared link (bench/typical_states.py) opens that page, in that state, connecting at once.

The links are the ones people share: the browser's address with the page's path and the widgets' query
parameters. Opened cold (a fresh browser context), each must show the page's main result, keep the page's
path and its parameters in the address (Streamlit leaves a widget's default value out of the address, so a
parameter may go, but never change or be added), mark that page in the sidebar, and connect to the server without
first trying the page's path as the server's root (ui/serve.py sets the client's base URL; without it
Streamlit asks `/<page>/_stcore/health`, gets a 404 and retries 100 ms later).
"""

from __future__ import annotations

from urllib.parse import parse_qs, urlparse

import pytest

from bench.typical_states import TYPICAL_STATES, link
from tests.support.browser import APP_READY_TIMEOUT_MS, wait_for_app


def _query_lists(query: dict[str, str | list[str]]) -> dict[str, list[str]]:
    """A typical state's query parameters as parse_qs gives them (every value a list)."""
    return {key: value if isinstance(value, list) else [value] for key, value in query.items()}


@pytest.mark.browser
@pytest.mark.parametrize("name", sorted(TYPICAL_STATES))
def test_a_shared_link_opens_its_page_in_its_state(app_url, browser, name):
    state = TYPICAL_STATES[name]
    path = link(name, state)
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    requests: list[str] = []
    failed: list[str] = []
    page.on("request", lambda request: requests.append(urlparse(request.url).path))
    page.on("response", lambda response: failed.append(response.url) if response.status >= 400 else None)
    try:
        page.goto(app_url + path, wait_until="commit")
        result = page.locator(state.main_result)
        (result.filter(has_text=state.main_text) if state.main_text else result).first.wait_for(
            state="visible", timeout=APP_READY_TIMEOUT_MS
        )
        wait_for_app(page)
        opened = urlparse(page.url)
        assert opened.path == urlparse(path).path, f"{path} ended at {page.url}"
        kept = parse_qs(opened.query)
        shared = _query_lists(state.query)
        assert set(kept) <= set(shared), f"{path}: the address gained {set(kept) - set(shared)}: {page.url}"
        for key, values in kept.items():
            assert values == shared[key], f"{path}: {key} became {values} in {page.url}"
        current = page.locator('[data-testid="stSidebarNavLink"][aria-current="page"]')
        assert urlparse(current.get_attribute("href")).path == opened.path, f"{path}: sidebar marks another page"
        assert page.locator('[data-testid="stException"]').count() == 0, path
        page_path = urlparse(path).path.rstrip("/")
        if page_path:
            assert not [r for r in requests if r.startswith(f"{page_path}/_stcore/")], (
                f"{path}: the client looked for the server under the page's path first: {requests}"
            )
        assert not failed, f"{path}: failed requests {failed}"
    finally:
        context.close()
