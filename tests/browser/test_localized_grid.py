"""A dataframe in Spanish draws Spanish numbers and still sorts them as numbers, in Chromium (issue 19).

The grid draws a pandas Styler's display text ('1.234,50') and sorts by the values underneath; sorted as text,
'1.234,50' < '100.000,00' < '25,00' < '9,25' would come out instead.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.browser import wait_for_app
from tests.support.streamlit_server import app_url_fixture

pytestmark = pytest.mark.browser

APP = Path(__file__).parent / "apps" / "localized_grid_app.py"


grid_url = app_url_fixture(APP, "localized-grid")


def _rows(grid) -> list[tuple[str, str]]:
    """(name, value) per row as the grid's accessible table lists them, in the order shown (raw values)."""
    cells = grid.locator("table td").all_inner_texts()
    return list(zip(cells[0::2], cells[1::2], strict=True))


def test_spanish_numbers_sort_as_numbers(grid_url, page):
    from playwright.sync_api import expect

    page.goto(grid_url)
    wait_for_app(page)
    grid = page.locator('[data-testid="stDataFrame"]').first
    expect(grid.locator("table td").first).to_have_text("a")
    box = grid.locator("canvas").first.bounding_box()
    # both columns have the same width, stretched to the grid: the 'valor' header is the right half's middle
    page.mouse.click(box["x"] + box["width"] * 0.75, box["y"] + 17)  # sort ascending
    expect(grid.locator("table td").first).to_have_text("b")
    assert [name for name, _value in _rows(grid)] == ["b", "d", "a", "c"]  # 9.25 < 25 < 1234.5 < 100000
